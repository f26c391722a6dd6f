// Standard mlir-opt flags work on dtensor IR.
// RUN: dtensor-opt %s --pass-pipeline='builtin.module(func.func(canonicalize))' | FileCheck %s
// RUN: dtensor-opt %s --canonicalize --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: dtensor-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: dtensor-opt %s --emit-bytecode | dtensor-opt | FileCheck %s --check-prefix=BYTECODE

dtensor.mesh @m shape [2]

// CHECK-LABEL: func.func @f
// CHECK-NEXT: return %arg0
// AFTER: IR Dump After Canonicalizer
// GENERIC: "dtensor.redistribute"(%{{.*}}) <{source = #dtensor.layout<@m, [shard<0>]>, target = #dtensor.layout<@m, [shard<0>]>}>
// BYTECODE: dtensor.redistribute %{{.*}} from <@m, [shard<0>]> to <@m, [shard<0>]>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dtensor.redistribute %x from <@m, [shard<0>]> to <@m, [shard<0>]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// dtensor-opt knows the upstream dialects the pipeline uses.
// RUN: dtensor-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
// DIALECTS-DAG: arith
// DIALECTS-DAG: bufferization
// DIALECTS-DAG: dtensor
// DIALECTS-DAG: func
// DIALECTS-DAG: gpu
// DIALECTS-DAG: linalg
// DIALECTS-DAG: llvm
// DIALECTS-DAG: math
// DIALECTS-DAG: memref
// DIALECTS-DAG: nvvm
// DIALECTS-DAG: scf
// DIALECTS-DAG: tensor

// A global-view program mixing dtensor with upstream ops round-trips.
// RUN: dtensor-opt %s | dtensor-opt | FileCheck %s

dtensor.mesh @tp shape [2]

// CHECK-LABEL: func.func @mlp
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  // CHECK: dtensor.distribute
  %w1s = dtensor.distribute %w1 to <@tp, [shard<1>]> : tensor<16x32xf32>
  %w2s = dtensor.distribute %w2 to <@tp, [shard<0>]> : tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: linalg.matmul
  %h = linalg.matmul ins(%x, %w1s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: math.tanh
  %a = math.tanh %h : tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%a, %w2s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// CHECK-LABEL: llvm.func @nvvm_intrinsic
llvm.func @nvvm_intrinsic() -> i32 {
  // CHECK: nvvm.read.ptx.sreg.tid.x
  %0 = nvvm.read.ptx.sreg.tid.x : i32
  llvm.return %0 : i32
}

// Bad command lines and inputs: a message with a location, exit status 1,
// and no artifact left behind.

// RUN: rm -rf %t && mkdir -p %t
// RUN: not dtensor-compile %s -o %t/a.dtc --target gpu 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: unknown target 'gpu' (expected cpu or cuda)
// RUN: not dtensor-compile %s -o %t/a.dtc --mesh 2x 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: --mesh '2x': expected [NAME=]SHAPE with SHAPE like 4 or 2x2 (positive sizes)
// RUN: not dtensor-compile %s -o %t/a.dtc --mesh nope=2 2>&1 | FileCheck %s --check-prefix=NOMESH
// NOMESH: error: --mesh nope=2: the program has no mesh @nope and no mesh dim named 'nope'; its meshes: @tp [?]
// RUN: not dtensor-compile %s -o %t/a.dtc --mesh 2x2 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: --mesh 2x2: @tp has 1 dims (@tp [?]); the new shape has 2
// RUN: not dtensor-compile %s -o %t/a.dtc --entry nope 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: error: no function @nope with a body to use as the entry point
// RUN: not dtensor-compile %S/Inputs/index-entry.mlir -o %t/a.dtc 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: index-entry.mlir:9:1: error: argument #0: element type 'index' is not one the runtime supports
// RUN: not dtensor-compile %S/Inputs/state-layout.mlir -o %t/a.dtc 2>&1 | FileCheck %s --check-prefix=STATE
// STATE: state-layout.mlir:3:1: error: result #0 updates the state 'total' laid out as [S(1)] with a value laid out as [R]; give the result the state's dtensor.layout
// RUN: not dtensor-compile %S/Inputs/shared-weight.mlir -o %t/a.dtc 2>&1 | FileCheck %s --check-prefix=SHARED
// SHARED: shared-weight.mlir:6:1: error: argument #0: the weight 'w' differs from the weight of that name another entry takes (role, dtype, shape, layout [S(1)] vs [S(0)] and initializer must agree)
// RUN: not dtensor-compile %s -o %t/a.dtc --world-size 1 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: error: --world-size 1 is smaller than a mesh of 2 devices
// RUN: not test -e %t/a.dtc
// RUN: touch %t/file
// RUN: not dtensor-compile %s -o %t/file 2>&1 | FileCheck %s --check-prefix=REPLACE
// REPLACE: error: refusing to replace {{.*}}file: it exists and is not a dtensor artifact directory
// RUN: ls %t | FileCheck %s --check-prefix=CLEAN --implicit-check-not=tmp
// CLEAN: file

dtensor.mesh @tp shape [2]

func.func @main(%x: tensor<2x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}


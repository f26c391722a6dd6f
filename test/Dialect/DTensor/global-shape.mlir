// The `dtensor.global_shape` of a partitioned function's arguments and
// results: round trip and every verifier error.
// RUN: dtensor-opt %s --split-input-file --verify-diagnostics | FileCheck %s

dtensor.mesh @m3 shape [3]

// 10 rows over 3 ranks are 4, 4, 2 (dynamic); 6 columns over 3 ranks are 2 each.
// CHECK-LABEL: func.func @local(%arg0: tensor<?x6xf32> {dtensor.global_shape = array<i64: 10, 6>, dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}, %arg1: tensor<10x2xf32> {dtensor.global_shape = array<i64: 10, 6>, dtensor.layout = #dtensor.layout<@m3, [shard<1>]>}) -> (tensor<4xf32> {dtensor.global_shape = array<i64: 4>})
func.func @local(%x: tensor<?x6xf32> {dtensor.global_shape = array<i64: 10, 6>, dtensor.layout = #dtensor.layout<@m3, [shard<0>]>},
                 %y: tensor<10x2xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<1>]>, dtensor.global_shape = array<i64: 10, 6>})
    -> (tensor<4xf32> {dtensor.global_shape = array<i64: 4>}) {
  %0 = tensor.empty() : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'dtensor.global_shape' on argument #0 must be an array<i64: ...>}}
func.func @not_an_array(%x: tensor<4xf32> {dtensor.global_shape = [4]}) {
  return
}

// -----

// expected-error @+1 {{result #0 has a global shape but is not a ranked tensor}}
func.func @not_a_tensor() -> (f32 {dtensor.global_shape = array<i64: 4>}) {
  %0 = arith.constant 0.0 : f32
  return %0 : f32
}

// -----

// expected-error @+1 {{global shape of argument #0 has 1 dims but its type has rank 2}}
func.func @rank(%x: tensor<4x4xf32> {dtensor.global_shape = array<i64: 4>}) {
  return
}

// -----

// expected-error @+1 {{global shape of argument #0 has a negative size -4}}
func.func @negative(%x: tensor<4xf32> {dtensor.global_shape = array<i64: -4>}) {
  return
}

// -----

dtensor.mesh @m3 shape [3]

// expected-error @+1 {{argument #0 has type 'tensor<4x6xf32>' but its layout gives dim 0 of global size 10 a local size of ? on every rank}}
func.func @uneven_needs_dynamic(%x: tensor<4x6xf32> {dtensor.global_shape = array<i64: 10, 6>, dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) {
  return
}

// -----

dtensor.mesh @m3 shape [3]

// expected-error @+1 {{result #0 has type 'tensor<6x6xf32>' but its layout gives dim 1 of global size 6 a local size of 2 on every rank}}
func.func @wrong_size() -> (tensor<6x6xf32> {dtensor.global_shape = array<i64: 6, 6>, dtensor.layout = #dtensor.layout<@m3, [shard<1>]>}) {
  %0 = tensor.empty() : tensor<6x6xf32>
  return %0 : tensor<6x6xf32>
}

// -----

// A global shape next to a layout whose shard dim is out of range (found by
// fuzz/MlirFuzzer.cpp: the global-shape check wrote to an inactive
// diagnostic and aborted; the input is in fuzz/regressions/mlir/). The
// layout's own error is the one reported.
dtensor.mesh @m3 shape [3]

// expected-error @+1 {{layout of argument #0: shard dim 2 on mesh dim 0 is out of range for a rank-2 tensor}}
func.func @shard_dim_out_of_range(tensor<4x6xf32> {dtensor.global_shape = array<i64: 10, 6>, dtensor.layout = #dtensor.layout<@m3, [shard<2>]>}) {
  return
}

// -----

dtensor.mesh @m3 shape [3]
dtensor.mesh @m2x2 shape [2, 2]

// expected-error @+1 {{layout of result #0: has 1 placements but mesh @m2x2 has 2 dims}}
func.func @placements_not_mesh_rank() -> (tensor<4x6xf32> {dtensor.global_shape = array<i64: 4, 6>, dtensor.layout = #dtensor.layout<@m2x2, [replicate]>}) {
  %0 = tensor.empty() : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

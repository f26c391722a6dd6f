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

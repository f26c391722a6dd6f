// Every verifier rule of dtensor.scatter_add, one failing input each.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

func.func @rank_0(%u: tensor<f32>, %t: tensor<f32>, %i: tensor<1xi64>) -> tensor<f32> {
  // expected-error @+1 {{'dtensor.scatter_add' op init must have rank 1 or more ([rows, ...]), not rank 0}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<f32> into tensor<f32>, tensor<1xi64>
  return %r : tensor<f32>
}

// -----

func.func @rank(%u: tensor<4xf32>, %t: tensor<8x2xf32>, %i: tensor<4xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'dtensor.scatter_add' op updates rank 1 differs from init rank 2}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<4xf32> into tensor<8x2xf32>, tensor<4xi64>
  return %r : tensor<8x2xf32>
}

// -----

func.func @integer_table(%u: tensor<4x2xi32>, %t: tensor<8x2xi32>, %i: tensor<4xi64>) -> tensor<8x2xi32> {
  // expected-error @+1 {{'dtensor.scatter_add' op init element type 'i32' is not a float}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<4x2xi32> into tensor<8x2xi32>, tensor<4xi64>
  return %r : tensor<8x2xi32>
}

// -----

func.func @element_type(%u: tensor<4x2xf16>, %t: tensor<8x2xf32>, %i: tensor<4xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'dtensor.scatter_add' op updates element type 'f16' differs from init element type 'f32'}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<4x2xf16> into tensor<8x2xf32>, tensor<4xi64>
  return %r : tensor<8x2xf32>
}

// -----

func.func @trailing(%u: tensor<4x3xf32>, %t: tensor<8x2xf32>, %i: tensor<4xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'dtensor.scatter_add' op updates dim 1 has size 3 but init dim 1 has size 2; the dims after the first must match}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<4x3xf32> into tensor<8x2xf32>, tensor<4xi64>
  return %r : tensor<8x2xf32>
}

// -----

func.func @indices_rank(%u: tensor<4x2xf32>, %t: tensor<8x2xf32>, %i: tensor<4x1xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'dtensor.scatter_add' op indices must be a 1-D tensor, not rank 2}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<4x2xf32> into tensor<8x2xf32>, tensor<4x1xi64>
  return %r : tensor<8x2xf32>
}

// -----

func.func @indices_type(%u: tensor<4x2xf32>, %t: tensor<8x2xf32>, %i: tensor<4xindex>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'dtensor.scatter_add' op indices element type 'index' is not i32 or i64}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<4x2xf32> into tensor<8x2xf32>, tensor<4xindex>
  return %r : tensor<8x2xf32>
}

// -----

func.func @indices_count(%u: tensor<4x2xf32>, %t: tensor<8x2xf32>, %i: tensor<3xi64>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'dtensor.scatter_add' op indices has 3 elements but updates has 4 rows; each row needs one}}
  %r = dtensor.scatter_add %u into %t at %i : tensor<4x2xf32> into tensor<8x2xf32>, tensor<3xi64>
  return %r : tensor<8x2xf32>
}

// -----

func.func @result_type(%u: tensor<4x2xf32>, %t: tensor<8x2xf32>, %i: tensor<4xi64>) -> tensor<8x2xf16> {
  // expected-error @+1 {{'dtensor.scatter_add' op failed to verify that all of {init, result} have same type}}
  %r = "dtensor.scatter_add"(%u, %t, %i) : (tensor<4x2xf32>, tensor<8x2xf32>, tensor<4xi64>) -> tensor<8x2xf16>
  return %r : tensor<8x2xf16>
}

// -----

func.func @shift_not_unit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.shift' must be a unit attribute}}
  %r = arith.negf %x {dtensor.shift = 1 : i64} : tensor<4xf32>
  return %r : tensor<4xf32>
}

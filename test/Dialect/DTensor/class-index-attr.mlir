// The dtensor.class_index attribute (a cross-entropy's targets, read by the
// driver for the runtime's index_bounds): accepted on an op with an integer
// operand, every verifier rule one failing input each.
// RUN: dtensor-opt %s -allow-unregistered-dialect -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @ok
// CHECK: dtensor.class_index = {classes = 8 : i64, ignore_index = -100 : i64, operand = 1 : i64}
// CHECK: dtensor.class_index = {classes = 8 : i64, operand = 1 : i64}
func.func @ok(%x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<4x8xf32> {
  %0 = "test.use"(%x, %t) {dtensor.class_index = {operand = 1 : i64, classes = 8 : i64, ignore_index = -100 : i64}} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %1 = "test.use"(%0, %t) {dtensor.class_index = {operand = 1 : i64, classes = 8 : i64}} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dtensor.class_index' must be a dictionary of integers 'operand', 'classes' and optionally 'ignore_index'}}
  %0 = "test.use"(%x, %t) {dtensor.class_index = {operand = 1 : i64}} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dtensor.class_index' must be a dictionary of integers 'operand', 'classes' and optionally 'ignore_index'}}
  %0 = "test.use"(%x, %t) {dtensor.class_index = {operand = 1 : i64, classes = 8 : i64, weight = 2 : i64}} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dtensor.class_index' names operand 2 of an op with 2 operand(s)}}
  %0 = "test.use"(%x, %t) {dtensor.class_index = {operand = 2 : i64, classes = 8 : i64}} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dtensor.class_index' names operand 0, which is not a tensor of integers}}
  %0 = "test.use"(%x, %t) {dtensor.class_index = {operand = 0 : i64, classes = 8 : i64}} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %t: tensor<4xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dtensor.class_index' has -1 classes; expected at least 0}}
  %0 = "test.use"(%x, %t) {dtensor.class_index = {operand = 1 : i64, classes = -1 : i64}} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// dtensor.optimization_barrier returns its operand: the types are equal.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

func.func @other_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %b = "dtensor.optimization_barrier"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return %b : tensor<4xf16>
}

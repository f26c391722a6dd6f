// The forms only an attention kernel computes have no decomposition: each
// gets an error at the op, and the pass fails.
// RUN: dtensor-opt %s --dtensor-decompose-attention --split-input-file -verify-diagnostics

#d = array<i64: 0, 1, 2, 3>
func.func @rows(%q: tensor<2x2x1x4xf32>, %k: tensor<8x2x16x4xf32>, %v: tensor<8x2x16x4xf32>, %rows: tensor<2xi64>) -> tensor<2x2x1x4xf32> {
  %i = tensor.empty() : tensor<2x2x1x4xf32>
  // expected-error @+1 {{'dtensor.attention' op reads key/value rows by slot (a KV cache read in place); only an attention kernel computes that form, which has no linalg decomposition}}
  %o = dtensor.attention %q, %k, %v rows(%rows : tensor<2xi64>) into %i {scale = 0.5 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x1x4xf32>, tensor<8x2x16x4xf32>, tensor<8x2x16x4xf32> into tensor<2x2x1x4xf32> -> tensor<2x2x1x4xf32>
  return %o : tensor<2x2x1x4xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
// A step of ring attention (accumulate); a log-sum-exp alone is decomposed
// (decompose-attention-backward.mlir).
func.func @accumulate(%q: tensor<2x2x3x4xf32>, %k: tensor<2x2x3x4xf32>, %v: tensor<2x2x3x4xf32>, %i: tensor<2x2x3x4xf32>, %l: tensor<2x2x3xf32>) -> tensor<2x2x3x4xf32> {
  // expected-error @+1 {{'dtensor.attention' op accumulates into its inits (a step of ring attention); only an attention kernel computes that form, which has no linalg decomposition}}
  %o, %lse = dtensor.attention %q, %k, %v into %i log_sum_exp(%l : tensor<2x2x3xf32>) {accumulate, scale = 0.5 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32> into tensor<2x2x3x4xf32> -> tensor<2x2x3x4xf32>, tensor<2x2x3xf32>
  return %o : tensor<2x2x3x4xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @dynamic(%q: tensor<2x?x3x4xf32>, %k: tensor<2x?x3x4xf32>, %v: tensor<2x?x3x4xf32>, %i: tensor<2x?x3x4xf32>) -> tensor<2x?x3x4xf32> {
  // expected-error @+1 {{'dtensor.attention' op has dynamic sizes; decompose attention before partitioning (the distribute pipeline does so for a target without an attention kernel)}}
  %o = dtensor.attention %q, %k, %v into %i {scale = 0.5 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x?x3x4xf32>, tensor<2x?x3x4xf32>, tensor<2x?x3x4xf32> into tensor<2x?x3x4xf32> -> tensor<2x?x3x4xf32>
  return %o : tensor<2x?x3x4xf32>
}

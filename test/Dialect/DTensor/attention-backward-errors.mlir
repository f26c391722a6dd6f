// The verifier of dtensor.attention_backward, where the forward's is
// tested: rank-4 operands read through a permutation, the sizes that must
// agree between query, key, value, out, d_out, lse, positions, mask and the
// three inits (each the logical shape of its operand).
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

#d = array<i64: 0, 1, 2, 3>
func.func @rank(%q: tensor<2x4x8xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op query must have rank 4, not 3}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @element(%q: tensor<2x4x8x16xi32>, %k: tensor<2x2x8x16xi32>, %v: tensor<2x2x8x16xi32>, %o: tensor<2x4x8x16xi32>, %do: tensor<2x4x8x16xi32>, %lse: tensor<2x4x8xi32>, %eq: tensor<2x4x8x16xi32>, %ek: tensor<2x2x8x16xi32>, %ev: tensor<2x2x8x16xi32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op element type must be a float type, not 'i32'}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xi32>, tensor<2x2x8x16xi32>, tensor<2x2x8x16xi32>, tensor<2x4x8x16xi32>, tensor<2x4x8x16xi32>, tensor<2x4x8xi32> into tensor<2x4x8x16xi32>, tensor<2x2x8x16xi32>, tensor<2x2x8x16xi32> -> tensor<2x4x8x16xi32>, tensor<2x2x8x16xi32>, tensor<2x2x8x16xi32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @dims(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op query's dims must be a permutation of [0, 4)}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {scale = 0.25 : f64, query_dims = array<i64: 0, 1, 1, 3>, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @features(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x8xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op key and query need the same last dim E}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @value(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x6x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x6x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op value must have the key's batch, heads and sequence}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x6x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x6x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x6x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @groups(%q: tensor<2x4x8x16xf32>, %k: tensor<2x3x8x16xf32>, %v: tensor<2x3x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x3x8x16xf32>, %ev: tensor<2x3x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op query heads 4 are not a multiple of key/value heads 3}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @batch(%q: tensor<2x4x8x16xf32>, %k: tensor<3x2x8x16xf32>, %v: tensor<3x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<3x2x8x16xf32>, %ev: tensor<3x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op key batch 3 differs from query batch 2}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<3x2x8x16xf32>, tensor<3x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @out(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x7x16xf32>, %do: tensor<2x4x7x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op out must be [B, H, L, Ev] in logical order}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @dout(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x8xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op d_out must have the logical shape of out}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @dkey(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x4x8x16xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op d_key init must have the logical shape of key}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @lse(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x7xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op lse must be [B, H, L] in logical order, of the query's element type}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x7xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @lse_element(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf64>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op lse must be [B, H, L] in logical order, of the query's element type}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf64> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @positions(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>, %p: tensor<3xi64>) {
  // expected-error @+1 {{'dtensor.attention_backward' op positions must be tensor<2xi64>}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse positions(%p : tensor<3xi64>) into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @positions_causal(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>, %p: tensor<2xi64>) {
  // expected-error @+1 {{'dtensor.attention_backward' op positions need causal}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse positions(%p : tensor<2xi64>) into %eq, %ek, %ev {scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %eq: tensor<2x4x8x16xf32>, %ek: tensor<2x2x8x16xf32>, %ev: tensor<2x2x8x16xf32>, %m: tensor<1x1x8x4xf32>) {
  // expected-error @+1 {{'dtensor.attention_backward' op mask must broadcast to [B, H, L, S] (each dim equal or 1), of the query's element type}}
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse mask(%m : tensor<1x1x8x4xf32>) into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// The verifier of dtensor.attention: rank-4 operands read through a
// permutation, the sizes that must agree between query, key, value, result,
// positions and mask. Dynamic sizes (a rank's piece of an uneven shard) are
// not compared (the runtime kernel checks them); two known sizes are.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

#d = array<i64: 0, 1, 2, 3>
func.func @rank(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %i: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op query must have rank 4, not 3}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @element(%q: tensor<2x4x8x16xi32>, %k: tensor<2x4x8x16xi32>, %v: tensor<2x4x8x16xi32>, %i: tensor<2x4x8x16xi32>) -> tensor<2x4x8x16xi32> {
  // expected-error @+1 {{'dtensor.attention' op element type must be a float type, not 'i32'}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xi32>, tensor<2x4x8x16xi32>, tensor<2x4x8x16xi32> into tensor<2x4x8x16xi32> -> tensor<2x4x8x16xi32>
  return %o : tensor<2x4x8x16xi32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @dims(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %i: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op query's dims must be a permutation of [0, 4)}}
  %o = dtensor.attention %q, %k, %v into %i {scale = 0.25 : f64, query_dims = array<i64: 0, 1, 1, 3>, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @features(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x8xf32>, %v: tensor<2x4x8x16xf32>, %i: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op key and query need the same last dim E}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @value_keys(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x9x16xf32>, %i: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op value must have the key's batch, heads and sequence}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x9x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @gqa(%q: tensor<2x6x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %i: tensor<2x6x8x16xf32>) -> tensor<2x6x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op query heads 6 are not a multiple of key/value heads 4}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x6x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x6x8x16xf32> -> tensor<2x6x8x16xf32>
  return %o : tensor<2x6x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @batch(%q: tensor<2x4x8x16xf32>, %k: tensor<3x4x8x16xf32>, %v: tensor<3x4x8x16xf32>, %i: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op key batch 3 differs from query batch 2 (without rows)}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<3x4x8x16xf32>, tensor<3x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @result(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x12xf32>, %i: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op result must be [B, H, L, Ev] in logical order}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x12xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @dynamic_result(%q: tensor<2x?x8x16xf32>, %k: tensor<2x?x8x16xf32>, %v: tensor<2x?x8x12xf32>, %i: tensor<2x?x8x16xf32>) -> tensor<2x?x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op result must be [B, H, L, Ev] in logical order}}
  %o = dtensor.attention %q, %k, %v into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x?x8x16xf32>, tensor<2x?x8x16xf32>, tensor<2x?x8x12xf32> into tensor<2x?x8x16xf32> -> tensor<2x?x8x16xf32>
  return %o : tensor<2x?x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @positions(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %i: tensor<2x4x8x16xf32>, %p: tensor<3xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op positions must be tensor<2xi64>}}
  %o = dtensor.attention %q, %k, %v positions(%p : tensor<3xi64>) into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @positions_dynamic_batch(%q: tensor<?x4x8x16xf32>, %k: tensor<?x4x8x16xf32>, %v: tensor<?x4x8x16xf32>, %i: tensor<?x4x8x16xf32>, %p: tensor<3xi32>) -> tensor<?x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op positions must be tensor<?xi64>}}
  %o = dtensor.attention %q, %k, %v positions(%p : tensor<3xi32>) into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32> into tensor<?x4x8x16xf32> -> tensor<?x4x8x16xf32>
  return %o : tensor<?x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @positions_causal(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %i: tensor<2x4x8x16xf32>, %p: tensor<2xi64>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op positions need causal}}
  %o = dtensor.attention %q, %k, %v positions(%p : tensor<2xi64>) into %i {scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

#d = array<i64: 0, 1, 2, 3>
func.func @mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %i: tensor<2x4x8x16xf32>, %m: tensor<2x1x8x7xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'dtensor.attention' op mask must broadcast to [B, H, L, S] (each dim equal or 1), of the query's element type}}
  %o = dtensor.attention %q, %k, %v mask(%m : tensor<2x1x8x7xf32>) into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

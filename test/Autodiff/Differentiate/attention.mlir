// dtensor.attention is differentiated whole: the gradient function's
// forward attention gives its log-sum-exp, and the adjoint is one
// dtensor.attention_backward reading the query, key, value, the forward's
// result and log-sum-exp, the result's gradient, the mask and the
// positions (grouped-query: 4 query heads over 2 key/value heads). No
// linalg op of the [B, H, L, S] weights is left in the gradient function.
// RUN: dtensor-opt %s --dtensor-differentiate=function=attend | FileCheck %s
// The inference forms are refused where the sweep reaches them, at the op.
// RUN: not dtensor-opt %s "--dtensor-differentiate=function=cache wrt=all" 2>&1 | FileCheck %s --check-prefix=ROWS
// A mask that varies with the arguments needs its own [L, S] gradient: that
// attention is differentiated through its linalg form.
// RUN: dtensor-opt %s "--dtensor-differentiate=function=bias wrt=all" | FileCheck %s --check-prefix=BIAS

// CHECK-LABEL: func.func @attend_grad(
// CHECK-SAME:    %[[Q:[^:]*]]: tensor<2x4x8x16xf32> {{.*}}, %[[K:[^:]*]]: tensor<2x2x8x16xf32> {{.*}}, %[[V:[^:]*]]: tensor<2x2x8x16xf32> {{.*}}, %[[M:[^:]*]]: tensor<1x1x8x8xf32>, %[[P:[^:]*]]: tensor<2xi64>
// CHECK:         %[[LSEI:.*]] = tensor.empty() : tensor<2x4x8xf32>
// CHECK:         %[[O:[^,]*]], %[[LSE:[^ ]*]] = dtensor.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<1x1x8x8xf32>) positions(%[[P]] : tensor<2xi64>) into %{{.*}} log_sum_exp(%[[LSEI]] : tensor<2x4x8xf32>) {causal
// CHECK-NOT:     tensor<2x4x8x8xf32>
// CHECK:         %[[DQ:[^,]*]], %[[DK:[^,]*]], %[[DV:[^ ]*]] = dtensor.attention_backward %[[Q]], %[[K]], %[[V]], %[[O]], %{{.*}}, %[[LSE]] mask(%[[M]] : tensor<1x1x8x8xf32>) positions(%[[P]] : tensor<2xi64>) into %{{.*}}, %{{.*}}, %{{.*}} {causal, {{.*}}scale = 2.500000e-01 : f64
// CHECK-NOT:     tensor<2x4x8x8xf32>
// CHECK:         return %{{.*}}, %[[DQ]], %[[DK]], %[[DV]] : tensor<f32>, tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>

#d = array<i64: 0, 1, 2, 3>
#all = affine_map<(b, h, l, e) -> (b, h, l, e)>
#scalar = affine_map<(b, h, l, e) -> ()>
func.func @attend(%q: tensor<2x4x8x16xf32> {dtensor.weight}, %k: tensor<2x2x8x16xf32> {dtensor.weight}, %v: tensor<2x2x8x16xf32> {dtensor.weight}, %m: tensor<1x1x8x8xf32>, %p: tensor<2xi64>) -> tensor<f32> {
  %i = tensor.empty() : tensor<2x4x8x16xf32>
  %o = dtensor.attention %q, %k, %v mask(%m : tensor<1x1x8x8xf32>) positions(%p : tensor<2xi64>) into %i {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> into tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<2x4x8x16xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %a0 = arith.addf %out, %sq : f32
    linalg.yield %a0 : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// ROWS: attention.mlir:[[# @LINE + 3]]:8: error: 'dtensor.attention' op reads key/value rows by slot (a KV cache, inference only) and has no gradient
func.func @cache(%q: tensor<2x4x1x16xf32>, %k: tensor<6x4x8x16xf32>, %v: tensor<6x4x8x16xf32>, %r: tensor<2xi64>) -> tensor<f32> {
  %i = tensor.empty() : tensor<2x4x1x16xf32>
  %o = dtensor.attention %q, %k, %v rows(%r : tensor<2xi64>) into %i {scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x1x16xf32>, tensor<6x4x8x16xf32>, tensor<6x4x8x16xf32> into tensor<2x4x1x16xf32> -> tensor<2x4x1x16xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<2x4x1x16xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a0 = arith.addf %out, %in : f32
    linalg.yield %a0 : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// BIAS-LABEL: func.func @bias_grad(
// BIAS-NOT:     dtensor.attention
// BIAS:         return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x8xf32>
func.func @bias(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %m: tensor<2x2x8x8xf32>) -> tensor<f32> {
  %i = tensor.empty() : tensor<2x2x8x16xf32>
  %o = dtensor.attention %q, %k, %v mask(%m : tensor<2x2x8x8xf32>) into %i {scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> into tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<2x2x8x16xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a0 = arith.addf %out, %in : f32
    linalg.yield %a0 : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

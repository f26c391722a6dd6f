// dtensor.attention_backward as linalg (the reference form, which holds the
// [B, H, L, S] probabilities): P = exp(logits - lse), 0 where lse is -inf;
// dV = P^T d_out; dS = P (d_out v^T - rowsum(d_out * out)); dQ = scale dS k;
// dK = scale dS^T q; the key/value gradients of grouped-query attention (4
// query heads over 2 key/value heads) summed over the 2 query heads of each
// group. A forward attention that gives its log-sum-exp is written with it:
// max + log(sum exp(logits - max)).
// RUN: dtensor-opt %s --dtensor-decompose-attention --split-input-file | FileCheck %s
// With the CPU kernel, an f32 op is kept for dtensor_rt_attention_backward;
// a bf16 one is decomposed (computed in f32, rounded to bf16).
// RUN: dtensor-opt %s --dtensor-decompose-attention=kernel=true --split-input-file | FileCheck %s --check-prefix=KERNEL

// CHECK-DAG:   #[[ALL:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG:   #[[GROUP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @grouped(
// CHECK-NOT:     dtensor.attention_backward
// CHECK:         arith.cmpf oeq
// CHECK:         math.exp
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] {{.*}} : tensor<2x4x8x16xf32> into tensor<2x2x2x8x16xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ALL]], #[[GROUP]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x2x2x8x16xf32>) outs(%{{.*}} : tensor<2x2x8x16xf32>)
// CHECK:         tensor.expand_shape
// CHECK:         linalg.generic {indexing_maps = [#[[ALL]], #[[GROUP]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x2x2x8x16xf32>) outs(%{{.*}} : tensor<2x2x8x16xf32>)
// CHECK:         arith.constant 2.500000e-01 : f32
// CHECK:         return %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
// KERNEL-LABEL: func.func @grouped(
// KERNEL:         dtensor.attention_backward
#d = array<i64: 0, 1, 2, 3>
func.func @grouped(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %m: tensor<1x1x8x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) {
  %eq = tensor.empty() : tensor<2x4x8x16xf32>
  %ek = tensor.empty() : tensor<2x2x8x16xf32>
  %ev = tensor.empty() : tensor<2x2x8x16xf32>
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse mask(%m : tensor<1x1x8x8xf32>) into %eq, %ek, %ev {scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %dq, %dk, %dv : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @bf16(
// CHECK-NOT:     dtensor.attention_backward
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
// KERNEL-LABEL: func.func @bf16(
// KERNEL-NOT:     dtensor.attention_backward
// KERNEL:         math.exp
#d = array<i64: 0, 1, 2, 3>
func.func @bf16(%q: tensor<2x2x3x4xbf16>, %o: tensor<2x2x3x4xbf16>, %lse: tensor<2x2x3xbf16>) -> (tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>) {
  %e0 = tensor.empty() : tensor<2x2x3x4xbf16>
  %e1 = tensor.empty() : tensor<2x2x3x4xbf16>
  %e2 = tensor.empty() : tensor<2x2x3x4xbf16>
  %dq, %dk, %dv = dtensor.attention_backward %q, %q, %q, %o, %o, %lse into %e0, %e1, %e2 {causal, scale = 0.5 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3xbf16> into tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16> -> tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>
  return %dq, %dk, %dv : tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>
}

// -----

// CHECK-LABEL: func.func @forward_lse(
// CHECK-NOT:     dtensor.attention
// CHECK:         math.log
// CHECK:         return %{{.*}}, %{{.*}} : tensor<2x2x8x16xf32>, tensor<2x2x8xf32>
#d = array<i64: 0, 1, 2, 3>
func.func @forward_lse(%q: tensor<2x2x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> (tensor<2x2x8x16xf32>, tensor<2x2x8xf32>) {
  %i = tensor.empty() : tensor<2x2x8x16xf32>
  %l = tensor.empty() : tensor<2x2x8xf32>
  %o, %lse = dtensor.attention %q, %k, %v into %i log_sum_exp(%l : tensor<2x2x8xf32>) {causal, scale = 0.25 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> into tensor<2x2x8x16xf32> -> tensor<2x2x8x16xf32>, tensor<2x2x8xf32>
  return %o, %lse : tensor<2x2x8x16xf32>, tensor<2x2x8xf32>
}

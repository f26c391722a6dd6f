// dtensor.attention_backward bufferizes into one dtensor_rt_attention_backward
// call: the eleven buffers queued in the ABI's order (query, key, value,
// out, d_out, lse, mask, positions, d_query, d_key, d_value), the query and
// its gradient viewed in logical order, the flags causal
// (1), mask (2) and positions (8): 11.
// RUN: dtensor-opt %s --dtensor-cpu-lowering | FileCheck %s
// CHECK-LABEL: llvm.func internal @main
// CHECK:       %[[FLAGS:.*]] = llvm.mlir.constant(11 : i32) : i32
// CHECK-NOT:   llvm.call @dtensor_rt_attention_backward
// CHECK-COUNT-11: llvm.call @dtensor_rt_push_buffer
// CHECK-NOT:   llvm.call @dtensor_rt_push_buffer
// CHECK:       llvm.call @dtensor_rt_attention_backward(%{{.*}}, %[[FLAGS]], %{{.*}}) : (i32, i32, f64) -> ()

#d = array<i64: 0, 1, 2, 3>
#t = array<i64: 0, 2, 1, 3>
func.func @main(%q: tensor<2x8x4x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>, %o: tensor<2x4x8x16xf32>, %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>, %m: tensor<1x1x8x8xf32>, %p: tensor<2xi64>) -> (tensor<2x8x4x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) {
  %eq = tensor.empty() : tensor<2x8x4x16xf32>
  %ek = tensor.empty() : tensor<2x2x8x16xf32>
  %ev = tensor.empty() : tensor<2x2x8x16xf32>
  %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %o, %do, %lse mask(%m : tensor<1x1x8x8xf32>) positions(%p : tensor<2xi64>) into %eq, %ek, %ev {causal, scale = 0.25 : f64, query_dims = #t, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x8x4x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8xf32> into tensor<2x8x4x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32> -> tensor<2x8x4x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return %dq, %dk, %dv : tensor<2x8x4x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
}

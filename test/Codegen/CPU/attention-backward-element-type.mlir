// The CPU lowering only lowers: a dtensor.attention_backward of an element
// type the runtime's backward kernel does not take (f32 or f64) gets an
// error at the op, which names the pass that writes it as linalg.
// RUN: not dtensor-opt %s --dtensor-cpu-lowering 2>&1 | FileCheck %s
// CHECK: attention-backward-element-type.mlir:[[# @LINE + 7]]:19: error: 'dtensor.attention_backward' op has element type 'bf16', which the runtime's attention backward kernel does not take (f32 or f64); --dtensor-decompose-attention writes it as linalg

#d = array<i64: 0, 1, 2, 3>
func.func @main(%q: tensor<2x2x3x4xbf16>, %o: tensor<2x2x3x4xbf16>, %lse: tensor<2x2x3xbf16>) -> (tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>) {
  %e0 = tensor.empty() : tensor<2x2x3x4xbf16>
  %e1 = tensor.empty() : tensor<2x2x3x4xbf16>
  %e2 = tensor.empty() : tensor<2x2x3x4xbf16>
  %dq, %dk, %dv = dtensor.attention_backward %q, %q, %q, %o, %o, %lse into %e0, %e1, %e2 {scale = 0.5 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3xbf16> into tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16> -> tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>
  return %dq, %dk, %dv : tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>
}

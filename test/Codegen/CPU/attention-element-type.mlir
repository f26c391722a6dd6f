// The CPU lowering only lowers: a dtensor.attention of an element type the
// runtime's kernel does not take (f32 or f64) gets an error at the op, which
// names the pass that writes it as linalg.
// RUN: not dtensor-opt %s --dtensor-cpu-lowering 2>&1 | FileCheck %s
// CHECK: attention-element-type.mlir:[[# @LINE + 5]]:8: error: 'dtensor.attention' op has element type 'bf16', which the runtime's attention kernel does not take (f32 or f64); --dtensor-decompose-attention writes it as linalg

#d = array<i64: 0, 1, 2, 3>
func.func @main(%q: tensor<2x2x3x4xbf16>, %k: tensor<2x2x3x4xbf16>, %v: tensor<2x2x3x4xbf16>) -> tensor<2x2x3x4xbf16> {
  %i = tensor.empty() : tensor<2x2x3x4xbf16>
  %o = dtensor.attention %q, %k, %v into %i {scale = 0.5 : f64, query_dims = #d, key_dims = #d, value_dims = #d, result_dims = #d} : tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16>, tensor<2x2x3x4xbf16> into tensor<2x2x3x4xbf16> -> tensor<2x2x3x4xbf16>
  return %o : tensor<2x2x3x4xbf16>
}

// --dtensor-differentiate marks the location of each op it appends (the
// backward) with fused<{dtensor.backward}>, and that of the op giving a
// weight its gradient with the weight's name, so that later stages can
// name it (propagation's explain, Autodiff/BackwardMark.h). The forward ops
// of the gradient function keep their locations.
// RUN: dtensor-opt %s --dtensor-differentiate=function=loss --mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @loss_grad(
// CHECK:       } -> tensor<8x16xf32> loc(#[[FWD:loc[0-9]*]])
// CHECK:       } -> tensor<f32> loc(#[[FWD_LOSS:loc[0-9]*]])
// CHECK:       } -> tensor<8x16xf32> loc(#[[BWD:loc[0-9]*]])
// CHECK:       } -> tensor<4x16xf32> loc(#[[GRAD:loc[0-9]*]])
// CHECK-NEXT:  return
// CHECK-DAG:   #[[BWD]] = loc(fused<{dtensor.backward}>[#[[FWD_LOSS]]])
// CHECK-DAG:   #[[GRAD]] = loc(fused<{dtensor.backward = "w"}>[#[[FWD]]])

#x = affine_map<(b, o, i) -> (b, i)>
#w = affine_map<(b, o, i) -> (i, o)>
#y = affine_map<(b, o, i) -> (b, o)>
#rows = affine_map<(b, o) -> (b, o)>
#none = affine_map<(b, o) -> ()>

// The sum of squares of x w.
func.func @loss(%x: tensor<8x4xf32> {dtensor.name = "x"},
                %w: tensor<4x16xf32> {dtensor.name = "w", dtensor.weight})
    -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %s0 = tensor.empty() : tensor<f32>
  %sacc = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#rows, #none], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<8x16xf32>) outs(%sacc : tensor<f32>) {
    ^bb0(%a: f32, %c: f32):
      %p = arith.mulf %a, %a : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

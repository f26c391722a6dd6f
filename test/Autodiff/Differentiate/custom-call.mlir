// A custom op's gradient is its declared backward: one dtensor.custom_call
// per differentiated input, on the forward's inputs and the result's
// gradient, with the backward op's own strategies (and no backward of its
// own). Without a backward, or without one for an input on the path to the
// loss, the call is an error at the op and no gradient function is added;
// a call off the path needs none.
// RUN: dtensor-opt %s "--dtensor-differentiate=function=norm wrt=all" | FileCheck %s
// RUN: not dtensor-opt %s --dtensor-differentiate=function=undeclared 2>&1 | FileCheck %s --check-prefix=UNDECLARED
// RUN: not dtensor-opt %s --dtensor-differentiate=function=no_input_gradient 2>&1 | FileCheck %s --check-prefix=NO-INPUT
// RUN: dtensor-opt %s --dtensor-differentiate=function=off_path | FileCheck %s --check-prefix=OFF-PATH

// CHECK-LABEL: func.func @norm_grad(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8xf32> {dtensor.weight})
// CHECK:         %[[Y:.*]] = dtensor.custom_call "norm" symbol "k"(%[[X]], %[[W]])
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[Y]] :
// CHECK:         %[[DY:.*]] = linalg.generic {{.*}} ins(%[[Y]], %[[S]],
// CHECK:         %[[EX:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[DX:.*]] = dtensor.custom_call "norm_grad_x" symbol "k_grad_x"(%[[X]], %[[W]], %[[DY]]) into %[[EX]] strategies {{\[}}[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.replicate, #dtensor.shard<0>]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) into tensor<4x8xf32>
// CHECK:         %[[EW:.*]] = tensor.empty() : tensor<8xf32>
// CHECK:         %[[DW:.*]] = dtensor.custom_call "norm_grad_w" symbol "k_grad_w"(%[[X]], %[[W]], %[[DY]]) into %[[EW]] : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) into tensor<8xf32>
// CHECK-NEXT:    return %{{.*}}, %[[DX]], %[[DW]] : tensor<f32>, tensor<4x8xf32>, tensor<8xf32>

#all = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @norm(%x: tensor<4x8xf32>, %w: tensor<8xf32> {dtensor.weight}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = dtensor.custom_call "norm" symbol "k" (%x, %w) into %e
      backward [{op_name = "norm_grad_x", symbol = "k_grad_x",
                 strategies = [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.replicate, #dtensor.shard<0>]]},
                {op_name = "norm_grad_w", symbol = "k_grad_w"}]
      : (tensor<4x8xf32>, tensor<8xf32>) into tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<4x8xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// UNDECLARED: custom-call.mlir:[[# @LINE + 5]]:8: error: 'dtensor.custom_call' op calls custom op 'norm', which declares no backward, on the path from a differentiated argument to the loss; declare its "backward" ops in model.custom_ops
// UNDECLARED-NOT: func.func @undeclared_grad
func.func @undeclared(%x: tensor<4x8xf32>, %w: tensor<8xf32> {dtensor.weight}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %y = dtensor.custom_call "norm" symbol "k" (%x, %w) into %e : (tensor<4x8xf32>, tensor<8xf32>) into tensor<4x8xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<4x8xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// NO-INPUT: custom-call.mlir:[[# @LINE + 5]]:8: error: 'dtensor.custom_call' op calls custom op 'norm', which declares no gradient for its input #1, on the path from a differentiated argument to the loss
// NO-INPUT-NOT: func.func @no_input_gradient_grad
func.func @no_input_gradient(%x: tensor<4x8xf32>, %w: tensor<8xf32> {dtensor.weight}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %y = dtensor.custom_call "norm" symbol "k" (%x, %w) into %e backward [{op_name = "norm_grad_x", symbol = "k_grad_x"}, unit] : (tensor<4x8xf32>, tensor<8xf32>) into tensor<4x8xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<4x8xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// The call reads no weight: its result needs no gradient.
// OFF-PATH-LABEL: func.func @off_path_grad(
// OFF-PATH-NOT:   "norm_grad
// OFF-PATH:       return
#row = affine_map<(d0, d1) -> (d1)>
func.func @off_path(%x: tensor<4x8xf32>, %v: tensor<8xf32>, %w: tensor<8xf32> {dtensor.weight}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %y = dtensor.custom_call "norm" symbol "k" (%x, %v) into %e : (tensor<4x8xf32>, tensor<8xf32>) into tensor<4x8xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #row, #scalar], iterator_types = ["reduction", "reduction"]} ins(%y, %w : tensor<4x8xf32>, tensor<8xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%in: f32, %wi: f32, %out: f32):
    %m = arith.mulf %in, %wi : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

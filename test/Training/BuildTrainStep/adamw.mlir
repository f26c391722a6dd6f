// AdamW with amsgrad, a parameter group and gradient accumulation: the
// state is each weight's exp_avg, exp_avg_sq and max_exp_avg_sq (PyTorch's
// names) and its accumulated gradient, then the step and micro-step
// counters. The bias corrections are 1 - beta^t of the update's number.
// RUN: dtensor-opt %s --dtensor-build-train-step | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: dtensor.name = "w.exp_avg", dtensor.state
// CHECK-SAME: dtensor.name = "w.exp_avg_sq", dtensor.state
// CHECK-SAME: dtensor.name = "w.max_exp_avg_sq", dtensor.state
// CHECK-SAME: dtensor.name = "w.grad_accum", dtensor.state
// CHECK-SAME: dtensor.name = "optimizer.step", dtensor.state
// CHECK-SAME: dtensor.name = "optimizer.micro_step", dtensor.state
// CHECK-SAME: dtensor.name = "w", dtensor.updates = 1 : i64
// CHECK-SAME: dtensor.name = "w.exp_avg", dtensor.updates = 2 : i64
// CHECK-SAME: dtensor.name = "w.exp_avg_sq", dtensor.updates = 3 : i64
// CHECK-SAME: dtensor.name = "w.max_exp_avg_sq", dtensor.updates = 4 : i64
// CHECK-SAME: dtensor.name = "w.grad_accum", dtensor.updates = 5 : i64
// CHECK-SAME: dtensor.name = "optimizer.step", dtensor.updates = 6 : i64
// CHECK-SAME: dtensor.name = "optimizer.micro_step", dtensor.updates = 7 : i64
// The call that completes a round of 4 applies the update.
// CHECK: arith.constant 4.000000e+00 : f64
// CHECK: arith.cmpf oge
// The mean of the round's gradients.
// CHECK: arith.constant 4.000000e+00 : f32
// CHECK: arith.divf
// CHECK: math.powf
// CHECK: math.powf
// CHECK: arith.maximumf
// CHECK: math.sqrt %{{.*}} : f32
// CHECK-LABEL: func.func @eval_step(

#xw = affine_map<(i, j) -> (i, j)>
#w = affine_map<(i, j) -> (j)>
#s = affine_map<(i, j) -> ()>
module attributes {dtensor.training = {function = "f", optimizer = {kind = "adamw", lr = 1.0e-3 : f64, amsgrad = true}, groups = [{params = ["w*"], weight_decay = 0.0 : f64}], accumulation_steps = 4 : i64}} {
  dtensor.mesh @mesh shape [2] names ["dp"]
  func.func @f(%x: tensor<4x3xf32> {dtensor.name = "x", dtensor.layout = #dtensor.layout<@mesh, [shard<0>]>},
               %w: tensor<3xf32> {dtensor.name = "w", dtensor.weight, dtensor.layout = #dtensor.layout<@mesh, [replicate]>})
      -> (tensor<f32> {dtensor.name = "loss"}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [#xw, #w, #s], iterator_types = ["reduction", "reduction"]}
        ins(%x, %w : tensor<4x3xf32>, tensor<3xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %t = arith.mulf %m, %m : f32
      %s = arith.addf %acc, %t : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r : tensor<f32>
  }
}

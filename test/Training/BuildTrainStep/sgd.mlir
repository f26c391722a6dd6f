// The training step of SGD with momentum, weight decay, clipping and a
// warm-up: train_step takes the forward's arguments, then the momentum
// buffer (laid out as its weight) and the step counter (replicated), and
// returns the loss, the gradient norm, the learning rate and the new values
// of the weight, the buffer and the counter, each updating its argument;
// eval_step returns the loss.
// RUN: dtensor-opt %s --dtensor-build-train-step | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>]>, dtensor.name = "x"}
// CHECK-SAME: %[[W:.*]]: tensor<3xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "w", dtensor.weight}
// CHECK-SAME: %[[BUF:.*]]: tensor<3xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "w.momentum_buffer", dtensor.state}
// CHECK-SAME: %[[STEP:.*]]: tensor<f32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "optimizer.step", dtensor.state}
// CHECK-SAME: -> (tensor<f32> {dtensor.name = "loss"},
// CHECK-SAME: tensor<f32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "grad_norm"},
// CHECK-SAME: tensor<f32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "lr"},
// CHECK-SAME: tensor<3xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "w", dtensor.updates = 1 : i64},
// CHECK-SAME: tensor<3xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "w.momentum_buffer", dtensor.updates = 2 : i64},
// CHECK-SAME: tensor<f32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "optimizer.step", dtensor.updates = 3 : i64})
// The gradient's norm, in f64, and clip_grad_norm_'s coefficient.
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: math.sqrt %{{.*}} : f64
// CHECK: arith.constant 9.9999999999999995E-7 : f64
// CHECK: arith.minimumf
// The buffer: the gradient itself on the first step, else
// momentum * buf + (1 - dampening) * d, with d = g * clip + wd * w.
// CHECK: arith.constant 0.00999999977 : f32
// CHECK: arith.constant 0.899999976 : f32
// CHECK: %[[FIRST:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f64
// CHECK: arith.select %[[FIRST]]
// CHECK: return
// CHECK-LABEL: func.func @eval_step(
// CHECK-SAME: -> (tensor<f32> {dtensor.name = "loss"})

#xw = affine_map<(i, j) -> (i, j)>
#w = affine_map<(i, j) -> (j)>
#s = affine_map<(i, j) -> ()>
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64, weight_decay = 0.01 : f64}, clip_grad_norm = 1.0 : f64, schedule = {warmup_steps = 2 : i64}}} {
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

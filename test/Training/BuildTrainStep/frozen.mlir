// A frozen weight (the plan's `frozen` globs; PyTorch's requires_grad=False,
// a buffer such as a rotary table) is not trained: train_step takes it
// read-only, with no optimizer state, computes no gradient for it (only
// w's adjoint is formed) and returns no update for it.
// RUN: dtensor-opt %s --dtensor-build-train-step | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %{{.*}}: tensor<3xf32> {dtensor.name = "x"}
// CHECK-SAME: %{{.*}}: tensor<3xf32> {dtensor.name = "w", dtensor.weight}
// CHECK-SAME: %{{.*}}: tensor<3xf32> {dtensor.name = "rope.cos", dtensor.weight}
// CHECK-SAME: %{{.*}}: tensor<3xf32> {{{.*}}dtensor.name = "w.momentum_buffer", dtensor.state}
// CHECK-SAME: %{{.*}}: tensor<f32> {{{.*}}dtensor.name = "optimizer.step", dtensor.state}
// CHECK-NOT: rope.cos.momentum_buffer
// CHECK-SAME: -> (tensor<f32> {dtensor.name = "loss"},
// CHECK-SAME: dtensor.name = "grad_norm"
// CHECK-SAME: dtensor.name = "lr"
// CHECK-SAME: dtensor.name = "w", dtensor.updates = 1 : i64
// CHECK-SAME: dtensor.name = "w.momentum_buffer", dtensor.updates = 3 : i64
// CHECK-SAME: dtensor.name = "optimizer.step", dtensor.updates = 4 : i64})
// CHECK-NOT: dtensor.updates = 2
// CHECK: return
// CHECK-LABEL: func.func @eval_step(

#id = affine_map<(i) -> (i)>
#s = affine_map<(i) -> ()>
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd", lr = 0.1 : f64, momentum = 0.9 : f64}, frozen = ["rope.*"]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<3xf32> {dtensor.name = "x"},
               %w: tensor<3xf32> {dtensor.name = "w", dtensor.weight},
               %c: tensor<3xf32> {dtensor.name = "rope.cos", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [#id, #id, #id, #s], iterator_types = ["reduction"]}
        ins(%x, %w, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %k: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %t = arith.mulf %m, %k : f32
      %s = arith.addf %acc, %t : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r : tensor<f32>
  }
}

// Activation checkpointing (the plan's activation_checkpointing globs over
// module paths, which the ops' locations name): train_step recomputes each
// checkpointed layer's tensors that the backward reads from the layer's
// inputs, read through dtensor.optimization_barrier, before the layer's
// first backward use. layers.1's input h0 (layers.0's output) stays saved,
// so the backward of layers.1 reads the forward's h0; layers.0 is
// recomputed from x and its weight. The recomputed random-like op reads the
// forward's scalar key (a step seed's stream key: the same draws).
// RUN: dtensor-opt %s --dtensor-build-train-step | FileCheck %s --check-prefix=ORDER
// RUN: dtensor-opt %s --dtensor-build-train-step | FileCheck %s --check-prefix=FREE

// ORDER-LABEL: func.func @train_step(
// ORDER: %[[A0:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 :
// ORDER: %[[H0:.*]] = linalg.generic {{.*}} ins(%[[A0]] :
// ORDER: %[[SEED:.*]] = dtensor.step_seed
// ORDER: %[[KEY:.*]] = arith.addi %[[SEED]]
// ORDER: %[[A1:.*]] = linalg.generic {{.*}} ins(%[[H0]], %arg2 :
// ORDER: %[[H1:.*]] = linalg.generic {{.*}} ins(%[[A1]] :
// ORDER: linalg.generic {{.*}} ins(%[[H1]] :
// layers.1, recomputed first (the backward runs from the loss).
// ORDER: %[[IN1:.*]] = dtensor.optimization_barrier %[[H0]] : tensor<4xf32>
// ORDER-NEXT: %[[W1:.*]] = dtensor.optimization_barrier %arg2 : tensor<4xf32>
// ORDER-NEXT: tensor.empty
// ORDER-NEXT: %[[RA1:.*]] = linalg.generic {{.*}} ins(%[[IN1]], %[[W1]] :
// ORDER-NEXT: ^bb0
// ORDER-NEXT: arith.uitofp %[[KEY]] : i64 to f32
// ORDER: %[[RH1:.*]] = linalg.generic {{.*}} ins(%[[RA1]] :
// tanh's adjoint reads the recomputed a1; the multiply's the saved h0.
// ORDER: linalg.generic {{.*}} ins(%[[RA1]],
// ORDER: linalg.generic {{.*}} ins(%[[H0]], %arg2,
// layers.0, recomputed from x and its weight.
// ORDER: %[[X:.*]] = dtensor.optimization_barrier %arg0 : tensor<4xf32>
// ORDER-NEXT: %[[W0:.*]] = dtensor.optimization_barrier %arg1 : tensor<4xf32>
// ORDER-NEXT: tensor.empty
// ORDER-NEXT: %[[RA0:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W0]] :
// ORDER: linalg.generic {{.*}} ins(%[[RA0]],
// ORDER: return

// After the loss, nothing reads the activations of the layers but h0.
// FREE-LABEL: func.func @train_step(
// FREE: %[[A0:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 :
// FREE: %[[H0:.*]] = linalg.generic {{.*}} ins(%[[A0]] :
// FREE: %[[A1:.*]] = linalg.generic {{.*}} ins(%[[H0]], %arg2 :
// FREE: %[[H1:.*]] = linalg.generic {{.*}} ins(%[[A1]] :
// FREE: linalg.generic {{.*}} ins(%[[H1]] :
// FREE-NOT: %[[A0]]{{[ ,)]}}
// FREE-NOT: %[[A1]]{{[ ,)]}}
// FREE-NOT: %[[H1]]{{[ ,)]}}
// FREE: return
// FREE-LABEL: func.func @eval_step(

#id = affine_map<(i) -> (i)>
#s = affine_map<(i) -> ()>
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd", lr = 0.1 : f64}, activation_checkpointing = ["layers.*"]}} {
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"},
               %w0: tensor<4xf32> {dtensor.name = "layers.0.w", dtensor.weight},
               %w1: tensor<4xf32> {dtensor.name = "layers.1.w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}) {
    %e0 = tensor.empty() : tensor<4xf32> loc(#l0)
    %a0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%x, %w0 : tensor<4xf32>, tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %m = arith.mulf %p, %q : f32
      linalg.yield %m : f32
    } -> tensor<4xf32> loc(#l0)
    %h0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a0 : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %t = math.tanh %p : f32
      linalg.yield %t : f32
    } -> tensor<4xf32> loc(#l0act)
    %seed = dtensor.step_seed : i64 loc(#l1)
    %c = arith.constant 7 : i64 loc(#l1)
    %key = arith.addi %seed, %c : i64 loc(#l1)
    %e1 = tensor.empty() : tensor<4xf32> loc(#l1)
    %a1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%h0, %w1 : tensor<4xf32>, tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %k = arith.uitofp %key : i64 to f32
      %m = arith.mulf %p, %q : f32
      %n = arith.mulf %m, %k : f32
      linalg.yield %n : f32
    } -> tensor<4xf32> loc(#l1)
    %h1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a1 : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
    ^bb0(%p: f32, %o: f32):
      %t = math.tanh %p : f32
      linalg.yield %t : f32
    } -> tensor<4xf32> loc(#l1)
    %zero = arith.constant 0.0 : f32
    %es = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [#id, #s], iterator_types = ["reduction"]}
        ins(%h1 : tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%p: f32, %acc: f32):
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r : tensor<f32>
  }
}
#l0 = loc("layers.0"("m.json":1:1))
#l0act = loc("layers.0.act"("m.json":2:1))
#l1 = loc("layers.1"("m.json":3:1))

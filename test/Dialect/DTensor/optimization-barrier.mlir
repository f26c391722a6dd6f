// dtensor.optimization_barrier: printed and parsed back; CSE, canonicalize
// and elementwise fusion do not see through it: two identical generics, one
// reading %x and one reading the barrier's result, stay two, the producer
// of %x is not fused into a reader of the barrier, and the barrier stays
// though its result equals its operand.
// RUN: dtensor-opt %s | dtensor-opt | FileCheck %s --check-prefix=ROUND
// RUN: dtensor-opt %s --cse --canonicalize --dtensor-fuse-elementwise --cse | FileCheck %s --check-prefix=KEPT
// Lowered away once fusion has run: the result is the operand again, and
// CSE may then merge the two.
// RUN: dtensor-opt %s --dtensor-lower-optimization-barriers | FileCheck %s --check-prefix=LOWERED
// RUN: dtensor-opt %s --dtensor-lower-optimization-barriers --cse | FileCheck %s --check-prefix=MERGED

#id = affine_map<(i) -> (i)>

// ROUND-LABEL: func.func @barrier
// ROUND: %[[B:.*]] = dtensor.optimization_barrier %{{.*}} : tensor<4xf32>
// KEPT-LABEL: func.func @barrier
// KEPT: %[[X:.*]] = linalg.generic
// KEPT: math.exp
// KEPT: %[[A:.*]] = linalg.generic
// KEPT-SAME: ins(%[[X]] :
// KEPT: math.tanh
// KEPT: %[[B:.*]] = dtensor.optimization_barrier %[[X]] : tensor<4xf32>
// KEPT: %[[C:.*]] = linalg.generic
// KEPT-SAME: ins(%[[B]] :
// KEPT: math.tanh
// KEPT: arith.addf %[[A]], %[[C]] : tensor<4xf32>
// LOWERED-LABEL: func.func @barrier
// LOWERED-NOT: dtensor.optimization_barrier
// LOWERED: return
// MERGED-LABEL: func.func @barrier
// MERGED-COUNT-1: math.tanh
// MERGED-NOT: math.tanh
// MERGED-LABEL: func.func @fusion(
func.func @barrier(%in: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%in : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.exp %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %b = dtensor.optimization_barrier %x : tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %s = arith.addf %a, %c : tensor<4xf32>
  return %s : tensor<4xf32>
}

// Fusion: without a barrier the exp fuses into the tanh that reads it; with
// one it cannot.
// KEPT-LABEL: func.func @fusion
// KEPT: math.exp
// KEPT-NEXT: math.tanh
// KEPT-LABEL: func.func @fusion_barrier
// KEPT: %[[X:.*]] = linalg.generic
// KEPT: math.exp
// KEPT-NOT: math.tanh
// KEPT: dtensor.optimization_barrier %[[X]]
// KEPT: linalg.generic
// KEPT-NOT: math.exp
// KEPT: math.tanh
func.func @fusion(%in: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%in : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.exp %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %c : tensor<4xf32>
}
func.func @fusion_barrier(%in: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%in : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.exp %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %b = dtensor.optimization_barrier %x : tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%p: f32, %o: f32):
    %t = math.tanh %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// RUN: dtensor-opt %s --dtensor-cpu-reassociate-sums | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A row sum: the accumulating addf may be reassociated; its other flags stay.
// CHECK-LABEL: func.func @row_sum
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[E:.*]] = math.exp %[[IN]] : f32
// CHECK: arith.addf %[[E]], %[[ACC]] fastmath<reassoc,afn> : f32
func.func @row_sum(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %e = math.exp %in : f32
    %a = arith.addf %e, %acc fastmath<afn> : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// Two results: each accumulation found by its own block argument; a max
// is not a sum.
// CHECK-LABEL: func.func @two_results
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32):
// CHECK: %[[MAX:.*]] = arith.maximumf %[[IN]], %[[M]] : f32
// CHECK: %[[SUM:.*]] = arith.addf %[[S]], %[[IN]] fastmath<reassoc> : f32
// CHECK: linalg.yield %[[MAX]], %[[SUM]]
func.func @two_results(%x: tensor<4x8xf32>, %i0: tensor<4xf32>, %i1: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%i0, %i1 : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %m: f32, %s: f32):
    %mx = arith.maximumf %in, %m : f32
    %a = arith.addf %s, %in : f32
    linalg.yield %mx, %a : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// Left alone: an addf in a loop nest without a reduction, and one that
// does not add to the accumulator.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: reassoc
// CHECK: return
func.func @left_alone(%x: tensor<4x8xf32>, %o: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %in : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %m, %s : tensor<4x8xf32>, tensor<4xf32>
}

// scaled_dot_product_attention (causal) on q, k, v[B, H, L, E]: with the
// heads sharded every op runs on the local heads, without communication.
// With the query sequence sharded (k and v replicated), each rank attends
// for its queries, and the causal mask compares global positions.
// RUN: dtensor-opt %s --inline --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
#s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#v = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @heads
// CHECK-SAME:    (%[[Q:[^:]*]]: tensor<2x4x128x64xf32>
// CHECK-SAME:    -> (tensor<2x4x128x64xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       linalg.generic {{.*}} ins(%[[Q]], %{{.*}} : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>) outs(%{{.*}} : tensor<2x4x128x128xf32>)
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return
func.func @heads(%q: tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                 %k: tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                 %v: tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %r = call @attention(%q, %k, %v) : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32>
  return %r : tensor<2x8x128x64xf32>
}

// CHECK-LABEL: func.func @queries
// CHECK-SAME:    (%[[Q:[^:]*]]: tensor<2x8x64x64xf32>
// CHECK-SAME:    %[[K:[^:]*]]: tensor<2x8x128x64xf32>
// CHECK-SAME:    -> (tensor<2x8x64x64xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       %[[OFF:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK:       linalg.generic {{.*}} ins(%[[Q]], %[[K]] : tensor<2x8x64x64xf32>, tensor<2x8x128x64xf32>) outs(%{{.*}} : tensor<2x8x64x128xf32>)
// CHECK:       linalg.generic
// CHECK:         %[[L:.*]] = linalg.index 2
// CHECK:         %[[GL:.*]] = arith.addi %[[L]], %[[OFF]] : index
// CHECK:         %[[S:.*]] = linalg.index 3
// CHECK:         arith.cmpi ugt, %[[S]], %[[GL]]
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return
func.func @queries(%q: tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
                   %k: tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
                   %v: tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<2x8x128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>}) {
  %r = call @attention(%q, %k, %v) : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32>
  return %r : tensor<2x8x128x64xf32>
}

// As the emitter writes it (scale 1/sqrt(64), is_causal), inlined into
// both callers before propagation.
func.func private @attention(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>, %v: tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<2x8x128x128xf32>
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<2x8x128x128xf32>) -> tensor<2x8x128x128xf32>
  %2 = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>) outs(%1 : tensor<2x8x128x128xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %16 = arith.mulf %in, %in_3 : f32
    %17 = arith.addf %out, %16 : f32
    linalg.yield %17 : f32
  } -> tensor<2x8x128x128xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<2x8x128x128xf32>) outs(%0 : tensor<2x8x128x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %cst_3 = arith.constant 1.250000e-01 : f32
    %16 = arith.mulf %in, %cst_3 : f32
    %17 = linalg.index 2 : index
    %18 = linalg.index 3 : index
    %19 = arith.cmpi ugt, %18, %17 : index
    %20 = arith.select %19, %ninf, %16 : f32
    linalg.yield %20 : f32
  } -> tensor<2x8x128x128xf32>
  %5 = tensor.empty() : tensor<2x8x128xf32>
  %6 = linalg.fill ins(%ninf : f32) outs(%5 : tensor<2x8x128xf32>) -> tensor<2x8x128xf32>
  %7 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%4 : tensor<2x8x128x128xf32>) outs(%6 : tensor<2x8x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %16 = arith.maximumf %in, %out : f32
    linalg.yield %16 : f32
  } -> tensor<2x8x128xf32>
  %9 = linalg.fill ins(%zero : f32) outs(%5 : tensor<2x8x128xf32>) -> tensor<2x8x128xf32>
  %10 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%4, %7 : tensor<2x8x128x128xf32>, tensor<2x8x128xf32>) outs(%9 : tensor<2x8x128xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %16 = arith.subf %in, %in_3 : f32
    %17 = math.exp %16 : f32
    %18 = arith.addf %17, %out : f32
    linalg.yield %18 : f32
  } -> tensor<2x8x128xf32>
  %12 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4, %7, %10 : tensor<2x8x128x128xf32>, tensor<2x8x128xf32>, tensor<2x8x128xf32>) outs(%0 : tensor<2x8x128x128xf32>) {
  ^bb0(%in: f32, %in_3: f32, %in_4: f32, %out: f32):
    %16 = arith.subf %in, %in_3 : f32
    %17 = math.exp %16 : f32
    %18 = arith.divf %17, %in_4 : f32
    linalg.yield %18 : f32
  } -> tensor<2x8x128x128xf32>
  %13 = tensor.empty() : tensor<2x8x128x64xf32>
  %14 = linalg.fill ins(%zero : f32) outs(%13 : tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32>
  %15 = linalg.generic {indexing_maps = [#q, #v, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%12, %v : tensor<2x8x128x128xf32>, tensor<2x8x128x64xf32>) outs(%14 : tensor<2x8x128x64xf32>) {
  ^bb0(%in: f32, %in_3: f32, %out: f32):
    %16 = arith.mulf %in, %in_3 : f32
    %17 = arith.addf %out, %16 : f32
    linalg.yield %17 : f32
  } -> tensor<2x8x128x64xf32>
  return %15 : tensor<2x8x128x64xf32>
}

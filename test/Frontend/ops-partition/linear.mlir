// linear as one contraction over (b, s, o, i): column-parallel (weight
// Shard(0)) needs nothing; row-parallel (weight Shard(1), input sharded on
// its last dim) leaves a partial sum that is reduced once, before the
// replicated bias is added. A sequence-sharded input stays sharded on S
// through the contraction: S is a loop of its own, not merged with B.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>

// CHECK-LABEL: func.func @colwise
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<2x16x256xf32>
// CHECK-SAME:    %[[W:[^:]*]]: tensor<512x256xf32>
// CHECK-SAME:    %[[B:[^:]*]]: tensor<512xf32>
// CHECK-SAME:    -> (tensor<2x16x512xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       %[[P:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<2x16x256xf32>, tensor<512x256xf32>) outs(%{{.*}} : tensor<2x16x512xf32>)
// CHECK:       %[[Y:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[B]] : tensor<2x16x512xf32>, tensor<512xf32>)
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return %[[Y]]
func.func @colwise(%x: tensor<2x16x256xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
                   %w: tensor<1024x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                   %b: tensor<1024xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<2x16x1024xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>}) {
  %0 = tensor.empty() : tensor<2x16x1024xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x16x1024xf32>) -> tensor<2x16x1024xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x16x256xf32>, tensor<1024x256xf32>) outs(%1 : tensor<2x16x1024xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.mulf %in, %in_0 : f32
    %6 = arith.addf %out, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<2x16x1024xf32>
  %3 = tensor.empty() : tensor<2x16x1024xf32>
  %4 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %b : tensor<2x16x1024xf32>, tensor<1024xf32>) outs(%3 : tensor<2x16x1024xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.addf %in, %in_0 : f32
    linalg.yield %5 : f32
  } -> tensor<2x16x1024xf32>
  return %4 : tensor<2x16x1024xf32>
}

// CHECK-LABEL: func.func @rowwise
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<2x16x512xf32>
// CHECK-SAME:    %[[W:[^:]*]]: tensor<256x512xf32>
// CHECK-SAME:    %[[B:[^:]*]]: tensor<256xf32>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       %[[P:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<2x16x512xf32>, tensor<256x512xf32>) outs(%{{.*}} : tensor<2x16x256xf32>)
// CHECK:       %[[R:.*]] = dtensor.all_reduce sum %[[P]] on @tp mesh_dims [0] : tensor<2x16x256xf32>
// CHECK:       %[[Y:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[B]] : tensor<2x16x256xf32>, tensor<256xf32>)
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return %[[Y]]
func.func @rowwise(%x: tensor<2x16x1024xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
                   %w: tensor<256x1024xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                   %b: tensor<256xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<2x16x256xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.empty() : tensor<2x16x256xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x16x256xf32>) -> tensor<2x16x256xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x16x1024xf32>, tensor<256x1024xf32>) outs(%1 : tensor<2x16x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.mulf %in, %in_0 : f32
    %6 = arith.addf %out, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<2x16x256xf32>
  %3 = tensor.empty() : tensor<2x16x256xf32>
  %4 = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %b : tensor<2x16x256xf32>, tensor<256xf32>) outs(%3 : tensor<2x16x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.addf %in, %in_0 : f32
    linalg.yield %5 : f32
  } -> tensor<2x16x256xf32>
  return %4 : tensor<2x16x256xf32>
}

// Row-parallel into a sequence-sharded result (sequence parallelism): the
// partial sum is reduce-scattered along S, not all-reduced.
// CHECK-LABEL: func.func @rowwise_to_sequence
// CHECK:       %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x16x256xf32>)
// CHECK:       dtensor.reduce_scatter sum %[[P]] on @tp mesh_dims [0] scatter_dim 1 : tensor<2x16x256xf32> -> tensor<2x8x256xf32>
// CHECK-NOT:   dtensor.all_
func.func @rowwise_to_sequence(%x: tensor<2x16x1024xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
                               %w: tensor<256x1024xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<2x16x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %0 = tensor.empty() : tensor<2x16x256xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x16x256xf32>) -> tensor<2x16x256xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x16x1024xf32>, tensor<256x1024xf32>) outs(%1 : tensor<2x16x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.mulf %in, %in_0 : f32
    %6 = arith.addf %out, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<2x16x256xf32>
  return %2 : tensor<2x16x256xf32>
}

// CHECK-LABEL: func.func @sequence_sharded
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<2x8x256xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<2x8x256xf32>, tensor<128x256xf32>) outs(%{{.*}} : tensor<2x8x128xf32>)
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return
func.func @sequence_sharded(%x: tensor<2x16x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                            %w: tensor<128x256xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<2x16x128xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %0 = tensor.empty() : tensor<2x16x128xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x16x128xf32>) -> tensor<2x16x128xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x16x256xf32>, tensor<128x256xf32>) outs(%1 : tensor<2x16x128xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %5 = arith.mulf %in, %in_0 : f32
    %6 = arith.addf %out, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<2x16x128xf32>
  return %2 : tensor<2x16x128xf32>
}

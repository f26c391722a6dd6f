// softmax, log_softmax and argmax over a sharded dim (logits sharded over
// the vocabulary): each rank reduces its columns and only per-row values
// are combined (all_reduce max, then sum; max, then min of the indices);
// the results stay sharded like the logits. No all_gather.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @softmax
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<8x16000xf32>
// CHECK-SAME:    -> (tensor<8x16000xf32>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x16000xf32>)
// CHECK:       %[[GMAX:.*]] = dtensor.all_reduce max %[[MAX]] on @tp mesh_dims [0] : tensor<8xf32>
// CHECK:       %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[GMAX]] : tensor<8x16000xf32>, tensor<8xf32>)
// CHECK:       %[[GSUM:.*]] = dtensor.all_reduce sum %[[SUM]] on @tp mesh_dims [0] : tensor<8xf32>
// CHECK:       %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[GMAX]], %[[GSUM]] : tensor<8x16000xf32>, tensor<8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8x16000xf32>)
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return %[[Y]]
func.func @softmax(%x: tensor<8x32000xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x32000xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %0 = tensor.empty() : tensor<8xf32>
  %cst = arith.constant 0xFF800000 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x32000xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %8 = arith.maximumf %in, %out : f32
    linalg.yield %8 : f32
  } -> tensor<8xf32>
  %3 = tensor.empty() : tensor<8xf32>
  %cst_0 = arith.constant 0.000000e+00 : f32
  %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<8xf32>) -> tensor<8xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x, %2 : tensor<8x32000xf32>, tensor<8xf32>) outs(%4 : tensor<8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %8 = arith.subf %in, %in_1 : f32
    %9 = math.exp %8 : f32
    %10 = arith.addf %9, %out : f32
    linalg.yield %10 : f32
  } -> tensor<8xf32>
  %6 = tensor.empty() : tensor<8x32000xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %2, %5 : tensor<8x32000xf32>, tensor<8xf32>, tensor<8xf32>) outs(%6 : tensor<8x32000xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %out: f32):
    %8 = arith.subf %in, %in_1 : f32
    %9 = math.exp %8 : f32
    %10 = arith.divf %9, %in_2 : f32
    linalg.yield %10 : f32
  } -> tensor<8x32000xf32>
  return %7 : tensor<8x32000xf32>
}

// CHECK-LABEL: func.func @log_softmax_bf16
// CHECK-NOT:   dtensor.all_gather
// CHECK:       dtensor.all_reduce max %{{.*}} on @tp mesh_dims [0] : tensor<8xf32>
// CHECK:       dtensor.all_reduce sum %{{.*}} on @tp mesh_dims [0] : tensor<8xf32>
// CHECK:       %[[Y:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x16000xbf16>)
// CHECK:         math.log
// CHECK:         arith.truncf
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return %[[Y]]
func.func @log_softmax_bf16(%x: tensor<8x32000xbf16> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x32000xbf16> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %0 = tensor.empty() : tensor<8xf32>
  %cst = arith.constant 0xFF800000 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x32000xbf16>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %8 = arith.maximumf %e, %out : f32
    linalg.yield %8 : f32
  } -> tensor<8xf32>
  %cst_0 = arith.constant 0.000000e+00 : f32
  %4 = linalg.fill ins(%cst_0 : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x, %2 : tensor<8x32000xbf16>, tensor<8xf32>) outs(%4 : tensor<8xf32>) {
  ^bb0(%in: bf16, %in_1: f32, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %8 = arith.subf %e, %in_1 : f32
    %9 = math.exp %8 : f32
    %10 = arith.addf %9, %out : f32
    linalg.yield %10 : f32
  } -> tensor<8xf32>
  %6 = tensor.empty() : tensor<8x32000xbf16>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %2, %5 : tensor<8x32000xbf16>, tensor<8xf32>, tensor<8xf32>) outs(%6 : tensor<8x32000xbf16>) {
  ^bb0(%in: bf16, %in_1: f32, %in_2: f32, %out: bf16):
    %e = arith.extf %in : bf16 to f32
    %8 = arith.subf %e, %in_1 : f32
    %9 = math.log %in_2 : f32
    %10 = arith.subf %8, %9 : f32
    %11 = arith.truncf %10 : f32 to bf16
    linalg.yield %11 : bf16
  } -> tensor<8x32000xbf16>
  return %7 : tensor<8x32000xbf16>
}

// argmax: the max, then the smallest global index holding it; the row
// results are replicated.
// CHECK-LABEL: func.func @argmax
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<8x16000xf32>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       %[[OFF:.*]] = arith.muli %{{.*}}, %c16000 : index
// CHECK:       %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x16000xf32>)
// CHECK:       %[[GMAX:.*]] = dtensor.all_reduce max %[[MAX]] on @tp mesh_dims [0] : tensor<8xf32>
// CHECK:       %[[IDX:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[GMAX]] : tensor<8x16000xf32>, tensor<8xf32>)
// CHECK:         %[[COL:.*]] = linalg.index 1
// CHECK:         %[[GCOL:.*]] = arith.addi %[[COL]], %[[OFF]] : index
// CHECK:         arith.index_cast %[[GCOL]] : index to i64
// CHECK:         arith.minsi
// CHECK:       %[[G:.*]] = dtensor.all_reduce min %[[IDX]] on @tp mesh_dims [0] : tensor<8xi64>
// CHECK:       return %[[G]]
func.func @argmax(%x: tensor<8x32000xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8xi64> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.empty() : tensor<8xf32>
  %cst = arith.constant 0xFF800000 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x32000xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.maximumf %in, %out : f32
    linalg.yield %6 : f32
  } -> tensor<8xf32>
  %3 = tensor.empty() : tensor<8xi64>
  %c9223372036854775807_i64 = arith.constant 9223372036854775807 : i64
  %4 = linalg.fill ins(%c9223372036854775807_i64 : i64) outs(%3 : tensor<8xi64>) -> tensor<8xi64>
  %5 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x, %2 : tensor<8x32000xf32>, tensor<8xf32>) outs(%4 : tensor<8xi64>) {
  ^bb0(%in: f32, %in_0: f32, %out: i64):
    %6 = arith.cmpf oeq, %in, %in_0 : f32
    %7 = arith.cmpf uno, %in, %in : f32
    %8 = arith.ori %6, %7 : i1
    %9 = linalg.index 1 : index
    %10 = arith.index_cast %9 : index to i64
    %11 = arith.select %8, %10, %c9223372036854775807_i64 : i64
    %12 = arith.minsi %11, %out : i64
    linalg.yield %12 : i64
  } -> tensor<8xi64>
  return %5 : tensor<8xi64>
}

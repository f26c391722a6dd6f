// cross_entropy on logits sharded over the vocabulary (a colwise LM head):
// the max, the sum of exponentials and the target logit are reduced per
// row (all_reduce max, then sum), never the logits themselves. (With tiny
// logits the cost model rightly prefers one all_gather to three reductions,
// hence a realistic vocabulary.)
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0) -> (d0)>
#map3 = affine_map<(d0) -> ()>
#map4 = affine_map<() -> ()>

// CHECK-LABEL: func.func @cross_entropy
// CHECK-SAME:    (%[[L:[^:]*]]: tensor<8x16000xf32>
// CHECK-SAME:    %[[T:[^:]*]]: tensor<8xi64>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       %[[OFF:.*]] = arith.muli %{{.*}}, %c16000 : index
// CHECK:       %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[L]] : tensor<8x16000xf32>)
// CHECK:         arith.maximumf
// CHECK:       %[[GMAX:.*]] = dtensor.all_reduce max %[[MAX]] on @tp mesh_dims [0] : tensor<8xf32>
// CHECK:       %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[L]], %[[GMAX]] : tensor<8x16000xf32>, tensor<8xf32>)
// The target's logit, found by its global column index.
// CHECK:       %[[PICK:.*]] = linalg.generic {{.*}} ins(%[[L]], %[[T]] : tensor<8x16000xf32>, tensor<8xi64>)
// CHECK:         %[[COL:.*]] = linalg.index 1
// CHECK:         %[[GCOL:.*]] = arith.addi %[[COL]], %[[OFF]] : index
// CHECK:         arith.cmpi eq, %[[GCOL]]
// CHECK-DAG:   dtensor.all_reduce sum %[[SUM]] on @tp mesh_dims [0] : tensor<8xf32>
// CHECK-DAG:   dtensor.all_reduce sum %[[PICK]] on @tp mesh_dims [0] : tensor<8xf32>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       return {{.*}} : tensor<f32>
func.func @cross_entropy(
    %logits: tensor<8x32000xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %target: tensor<8xi64> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<f32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.empty() : tensor<8xf32>
  %cst = arith.constant 0xFF800000 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<8xf32>) -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%logits : tensor<8x32000xf32>) outs(%1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %18 = arith.maximumf %in, %out : f32
    linalg.yield %18 : f32
  } -> tensor<8xf32>
  %3 = tensor.empty() : tensor<8xf32>
  %cst_0 = arith.constant 0.000000e+00 : f32
  %4 = linalg.fill ins(%cst_0 : f32) outs(%3 : tensor<8xf32>) -> tensor<8xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%logits, %2 : tensor<8x32000xf32>, tensor<8xf32>) outs(%4 : tensor<8xf32>) {
  ^bb0(%in: f32, %in_4: f32, %out: f32):
    %18 = arith.subf %in, %in_4 : f32
    %19 = math.exp %18 : f32
    %20 = arith.addf %19, %out : f32
    linalg.yield %20 : f32
  } -> tensor<8xf32>
  %6 = tensor.empty() : tensor<8xf32>
  %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<8xf32>) -> tensor<8xf32>
  %8 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%logits, %target : tensor<8x32000xf32>, tensor<8xi64>) outs(%7 : tensor<8xf32>) {
  ^bb0(%in: f32, %in_4: i64, %out: f32):
    %18 = linalg.index 1 : index
    %19 = arith.index_cast %in_4 : i64 to index
    %20 = arith.cmpi eq, %18, %19 : index
    %cst_5 = arith.constant 0.000000e+00 : f32
    %21 = arith.select %20, %in, %cst_5 : f32
    %22 = arith.addf %21, %out : f32
    linalg.yield %22 : f32
  } -> tensor<8xf32>
  %9 = tensor.empty() : tensor<8xf32>
  %10 = linalg.generic {indexing_maps = [#map2, #map2, #map2, #map2, #map2], iterator_types = ["parallel"]} ins(%2, %5, %8, %target : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi64>) outs(%9 : tensor<8xf32>) {
  ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: i64, %out: f32):
    %18 = math.log %in_4 : f32
    %19 = arith.addf %18, %in : f32
    %20 = arith.subf %19, %in_5 : f32
    %cst_7 = arith.constant 0.000000e+00 : f32
    %c-100_i64 = arith.constant -100 : i64
    %21 = arith.cmpi eq, %in_6, %c-100_i64 : i64
    %22 = arith.select %21, %cst_7, %20 : f32
    linalg.yield %22 : f32
  } -> tensor<8xf32>
  %11 = tensor.empty() : tensor<f32>
  %12 = linalg.fill ins(%cst_0 : f32) outs(%11 : tensor<f32>) -> tensor<f32>
  %15:2 = linalg.generic {indexing_maps = [#map2, #map2, #map3, #map3], iterator_types = ["reduction"]} ins(%10, %target : tensor<8xf32>, tensor<8xi64>) outs(%12, %12 : tensor<f32>, tensor<f32>) {
  ^bb0(%in: f32, %in_4: i64, %out: f32, %out_5: f32):
    %cst_6 = arith.constant 1.000000e+00 : f32
    %c-100_i64 = arith.constant -100 : i64
    %18 = arith.cmpi eq, %in_4, %c-100_i64 : i64
    %19 = arith.select %18, %cst_0, %cst_6 : f32
    %20 = arith.addf %in, %out : f32
    %21 = arith.addf %19, %out_5 : f32
    linalg.yield %20, %21 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  %16 = tensor.empty() : tensor<f32>
  %17 = linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = []} ins(%15#0, %15#1 : tensor<f32>, tensor<f32>) outs(%16 : tensor<f32>) {
  ^bb0(%in: f32, %in_4: f32, %out: f32):
    %18 = arith.divf %in, %in_4 : f32
    linalg.yield %18 : f32
  } -> tensor<f32>
  return %17 : tensor<f32>
}

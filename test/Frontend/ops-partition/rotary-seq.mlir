// rotary on a sequence-sharded x[B, S, H, D]: no communication; each rank
// rotates its positions, the global ones (the rank's offset is added to the
// sequence index).
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

#map = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 0, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, 1, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// CHECK-LABEL: func.func @rotary
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<2x32x4x8xf32>
// CHECK-SAME:    -> (tensor<2x32x4x8xf32>
// CHECK-NOT:   dtensor.all
// CHECK:       %[[OFF:.*]] = arith.muli %{{.*}}, %c32 : index
// CHECK:       %[[H:.*]] = tensor.expand_shape %[[X]] {{.*}} into tensor<2x32x4x2x4xf32>
// CHECK:       %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[H]], %{{.*}} : tensor<2x32x4x2x4xf32>, tensor<2x32x4x2x4xf32>, tensor<4xf32>)
// CHECK:         %[[S:.*]] = linalg.index 1
// CHECK:         %[[GS:.*]] = arith.addi %[[S]], %[[OFF]] : index
// CHECK:         arith.index_cast %[[GS]] : index to i64
// CHECK:       %[[Y:.*]] = tensor.collapse_shape %[[R]] {{.*}} into tensor<2x32x4x8xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return %[[Y]]
func.func @rotary(%x: tensor<2x64x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<2x64x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %expanded = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [2, 64, 4, 2, 4] : tensor<2x64x4x8xf32> into tensor<2x64x4x2x4xf32>
  %cst = arith.constant dense<[1.000000e+00, 1.000000e-01, 0.00999999977, 1.000000e-03]> : tensor<4xf32>
  %0 = tensor.empty() : tensor<2x64x4x2x4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %expanded, %cst : tensor<2x64x4x2x4xf32>, tensor<2x64x4x2x4xf32>, tensor<4xf32>) outs(%0 : tensor<2x64x4x2x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %in_1: f32, %out: f32):
    %2 = linalg.index 1 : index
    %3 = arith.index_cast %2 : index to i64
    %4 = arith.sitofp %3 : i64 to f32
    %5 = arith.mulf %4, %in_1 : f32
    %6 = math.cos %5 : f32
    %7 = math.sin %5 : f32
    %8 = arith.mulf %in_0, %7 : f32
    %9 = arith.mulf %in, %6 : f32
    %10 = arith.subf %9, %8 : f32
    %11 = arith.mulf %in, %7 : f32
    %12 = arith.mulf %in_0, %6 : f32
    %13 = arith.addf %12, %11 : f32
    %14 = linalg.index 3 : index
    %c0 = arith.constant 0 : index
    %15 = arith.cmpi eq, %14, %c0 : index
    %16 = arith.select %15, %10, %13 : f32
    linalg.yield %16 : f32
  } -> tensor<2x64x4x2x4xf32>
  %collapsed = tensor.collapse_shape %1 [[0], [1], [2], [3, 4]] : tensor<2x64x4x2x4xf32> into tensor<2x64x4x8xf32>
  return %collapsed : tensor<2x64x4x8xf32>
}

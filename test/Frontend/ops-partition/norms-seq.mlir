// layer_norm and rms_norm under sequence parallelism: x[B, S, D] sharded on
// S normalizes each position locally, with no communication; the weight is
// replicated.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<2x32x64xf32>
// CHECK-SAME:    -> (tensor<2x32x64xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       linalg.generic {{.*}} ins(%[[X]] : tensor<2x32x64xf32>) outs(%{{.*}} : tensor<2x32xf32>)
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return
func.func @layer_norm(%x: tensor<2x64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                      %w: tensor<64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
                      %b: tensor<64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<2x64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %0 = tensor.empty() : tensor<2x64xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x64xf32>) -> tensor<2x64xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x64x64xf32>) outs(%1 : tensor<2x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %8 = arith.addf %in, %out : f32
    linalg.yield %8 : f32
  } -> tensor<2x64xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %2 : tensor<2x64x64xf32>, tensor<2x64xf32>) outs(%1 : tensor<2x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %cst_2 = arith.constant 6.400000e+01 : f32
    %8 = arith.divf %in_1, %cst_2 : f32
    %9 = arith.subf %in, %8 : f32
    %10 = arith.mulf %9, %9 : f32
    %11 = arith.addf %10, %out : f32
    linalg.yield %11 : f32
  } -> tensor<2x64xf32>
  %6 = tensor.empty() : tensor<2x64x64xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map1, #map2, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %2, %5, %w, %b : tensor<2x64x64xf32>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<64xf32>, tensor<64xf32>) outs(%6 : tensor<2x64x64xf32>) {
  ^bb0(%in: f32, %in_1: f32, %in_2: f32, %in_3: f32, %in_4: f32, %out: f32):
    %cst_3 = arith.constant 6.400000e+01 : f32
    %8 = arith.divf %in_2, %cst_3 : f32
    %cst_4 = arith.constant 9.99999974E-6 : f32
    %9 = arith.addf %8, %cst_4 : f32
    %10 = math.rsqrt %9 : f32
    %11 = arith.divf %in_1, %cst_3 : f32
    %12 = arith.subf %in, %11 : f32
    %13 = arith.mulf %12, %10 : f32
    %14 = arith.mulf %13, %in_3 : f32
    %15 = arith.addf %14, %in_4 : f32
    linalg.yield %15 : f32
  } -> tensor<2x64x64xf32>
  return %7 : tensor<2x64x64xf32>
}

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<2x32x64xbf16>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       linalg.generic {{.*}} ins(%[[X]] : tensor<2x32x64xbf16>) outs(%{{.*}} : tensor<2x32xf32>)
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return
func.func @rms_norm(%x: tensor<2x64x64xbf16> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                    %w: tensor<64xbf16> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<2x64x64xbf16> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %0 = tensor.empty() : tensor<2x64xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x64xf32>) -> tensor<2x64xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x64x64xbf16>) outs(%1 : tensor<2x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %e = arith.extf %in : bf16 to f32
    %s = arith.mulf %e, %e : f32
    %8 = arith.addf %s, %out : f32
    linalg.yield %8 : f32
  } -> tensor<2x64xf32>
  %6 = tensor.empty() : tensor<2x64x64xbf16>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %2, %w : tensor<2x64x64xbf16>, tensor<2x64xf32>, tensor<64xbf16>) outs(%6 : tensor<2x64x64xbf16>) {
  ^bb0(%in: bf16, %in_1: f32, %in_2: bf16, %out: bf16):
    %cst_3 = arith.constant 6.400000e+01 : f32
    %8 = arith.divf %in_1, %cst_3 : f32
    %cst_4 = arith.constant 0.0078125 : f32
    %9 = arith.addf %8, %cst_4 : f32
    %10 = math.rsqrt %9 : f32
    %e = arith.extf %in : bf16 to f32
    %11 = arith.mulf %e, %10 : f32
    %12 = arith.truncf %11 : f32 to bf16
    %13 = arith.extf %12 : bf16 to f32
    %14 = arith.extf %in_2 : bf16 to f32
    %15 = arith.mulf %13, %14 : f32
    %16 = arith.truncf %15 : f32 to bf16
    linalg.yield %16 : bf16
  } -> tensor<2x64x64xbf16>
  return %7 : tensor<2x64x64xbf16>
}

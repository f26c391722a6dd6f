// Partitioning puts a local map's body in its place, bound to the rank's
// pieces of its inputs; the body is per-rank code and is not changed.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition -split-input-file | FileCheck %s

dtensor.mesh @tp shape [4]

// CHECK-LABEL: func.func @row_parallel
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32> {{.*}}, %[[W:.*]]: tensor<16x4xf32>
// CHECK-NOT: dtensor.local_map
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK: %[[R:.*]] = dtensor.all_reduce sum %[[P]] on @tp mesh_dims [0] : tensor<8x4xf32>
// CHECK: return %[[R]]
func.func @row_parallel(
    %x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %w: tensor<64x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %y = dtensor.local_map (%x, %w)
      in [#dtensor.layout<@tp, [shard<1>]>, #dtensor.layout<@tp, [shard<0>]>]
      out [#dtensor.layout<@tp, [partial<sum>]>] {
  ^bb0(%lx: tensor<8x16xf32>, %lw: tensor<16x4xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %p = linalg.matmul ins(%lx, %lw : tensor<8x16xf32>, tensor<16x4xf32>)
                       outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
    dtensor.yield %p : tensor<8x4xf32>
  } : (tensor<8x64xf32>, tensor<64x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

dtensor.mesh @m3 shape [3]

// Uneven: 10 rows on 3 ranks are 4, 4 and 2. The body's dynamic rows are
// the rank's; its result, declared Shard(0) of a 10-row tensor, is gathered
// to all 10 rows (not 3 x 4 = 12).
// CHECK-LABEL: func.func @uneven
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32> {{.*}}) -> (tensor<10x8xf32>
// CHECK: %[[C:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[E:.*]] = tensor.empty(%[[C]]) : tensor<?x8xf32>
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x8xf32>) outs(%[[E]] : tensor<?x8xf32>)
// CHECK: %[[G:.*]] = dtensor.all_gather %[[D]] on @m3 mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
// CHECK: return %[[G]]
func.func @uneven(
    %x: tensor<10x8xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>})
    -> (tensor<10x8xf32> {dtensor.layout = #dtensor.layout<@m3, [replicate]>}) {
  %y = dtensor.local_map (%x) in [#dtensor.layout<@m3, [shard<0>]>]
      out [#dtensor.layout<@m3, [shard<0>]>] {
  ^bb0(%lx: tensor<?x8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %lx, %c0 : tensor<?x8xf32>
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %d = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%lx : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %v = arith.addf %in, %in : f32
      linalg.yield %v : f32
    } -> tensor<?x8xf32>
    dtensor.yield %d : tensor<?x8xf32>
  } : (tensor<10x8xf32>) -> tensor<10x8xf32>
  return %y : tensor<10x8xf32>
}

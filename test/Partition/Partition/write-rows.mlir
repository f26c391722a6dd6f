// A KV cache sharded on its heads stays sharded through dtensor.write_rows:
// each rank writes its heads of every row, with no communication, on 2
// ranks and on 3 (where torch.chunk splits 4 heads 2, 2, 0, so the local
// head dim is dynamic). New rows that arrive replicated are cut
// to the rank's heads (a chunk, no communication). A cache sharded on a dim
// that data indexes (slots) must be gathered first.
// RUN: dtensor-opt %s --split-input-file --dtensor-propagate --dtensor-partition | FileCheck %s

// CHECK-LABEL: func.func @heads_2(
// CHECK-SAME: %[[C:[^:]*]]: tensor<4x16x2x8xf32> {{.*}}, %[[V:[^:]*]]: tensor<2x1x2x8xf32> {{.*}}, %[[S:[^:]*]]: tensor<2xi64> {{.*}}, %[[P:[^:]*]]: tensor<2xi64> {{.*}}) -> (tensor<4x16x2x8xf32>
// CHECK-NEXT: %[[R:.*]] = dtensor.write_rows %[[V]] into %[[C]] at slots(%[[S]]) positions(%[[P]]) : tensor<2x1x2x8xf32> into tensor<4x16x2x8xf32>, tensor<2xi64>, tensor<2xi64>
// CHECK-NEXT: return %[[R]]
dtensor.mesh @tp shape [2]
func.func @heads_2(
    %cache: tensor<4x16x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %new: tensor<2x1x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %slots: tensor<2xi64>, %pos: tensor<2xi64>)
    -> (tensor<4x16x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>}) {
  %r = dtensor.write_rows %new into %cache at slots(%slots) positions(%pos)
      : tensor<2x1x4x8xf32> into tensor<4x16x4x8xf32>, tensor<2xi64>, tensor<2xi64>
  return %r : tensor<4x16x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @heads_3_uneven(
// CHECK-SAME: %[[C:[^:]*]]: tensor<4x16x?x8xf32> {{.*}}, %[[V:[^:]*]]: tensor<2x1x4x8xf32> {{.*}}, %[[S:[^:]*]]: tensor<2xi32> {{.*}}, %[[P:[^:]*]]: tensor<2xi64> {{.*}}) -> (tensor<4x16x?x8xf32>
// CHECK-NEXT: %[[VL:.*]] = dtensor.chunk %[[V]] on @tp3 mesh_dims [0] dim 2 : tensor<2x1x4x8xf32> -> tensor<2x1x?x8xf32>
// CHECK-NEXT: %[[R:.*]] = dtensor.write_rows %[[VL]] into %[[C]] at slots(%[[S]]) positions(%[[P]]) : tensor<2x1x?x8xf32> into tensor<4x16x?x8xf32>, tensor<2xi32>, tensor<2xi64>
// CHECK-NEXT: return %[[R]]
dtensor.mesh @tp3 shape [3]
func.func @heads_3_uneven(
    %cache: tensor<4x16x4x8xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<2>]>},
    %new: tensor<2x1x4x8xf32> {dtensor.layout = #dtensor.layout<@tp3, [replicate]>},
    %slots: tensor<2xi32>, %pos: tensor<2xi64>)
    -> (tensor<4x16x4x8xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<2>]>}) {
  %r = dtensor.write_rows %new into %cache at slots(%slots) positions(%pos)
      : tensor<2x1x4x8xf32> into tensor<4x16x4x8xf32>, tensor<2xi32>, tensor<2xi64>
  return %r : tensor<4x16x4x8xf32>
}

// -----

// Slots sharded: the rows are written on the whole (gathered) cache.
// CHECK-LABEL: func.func @slots_sharded(
// CHECK-NEXT: %[[G:.*]] = dtensor.all_gather %{{.*}} on @tp mesh_dims [0] gather_dim 0 : tensor<2x16x4x8xf32> -> tensor<4x16x4x8xf32>
// CHECK-NEXT: dtensor.write_rows %{{.*}} into %[[G]] at
dtensor.mesh @tp shape [2]
func.func @slots_sharded(
    %cache: tensor<4x16x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %new: tensor<2x1x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %slots: tensor<2xi64>, %pos: tensor<2xi64>)
    -> (tensor<4x16x4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %r = dtensor.write_rows %new into %cache at slots(%slots) positions(%pos)
      : tensor<2x1x4x8xf32> into tensor<4x16x4x8xf32>, tensor<2xi64>, tensor<2xi64>
  return %r : tensor<4x16x4x8xf32>
}

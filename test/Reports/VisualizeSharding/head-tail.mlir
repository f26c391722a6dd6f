// --dtensor-visualize-sharding of a head-tail shard (context parallelism's
// load balancing): 10 positions over 2 ranks in pieces of 3, 3, 3, 1; rank
// 0 holds the first and the last piece, rank 1 the two middle ones.
// RUN: dtensor-opt %s --dtensor-visualize-sharding -o /dev/null | FileCheck %s

dtensor.mesh @cp shape [2]

// CHECK-LABEL: func @f: %arg0 tensor<2x10xf32> [S(1,head_tail)] on @cp shape [2]
// CHECK-NEXT:    Col 0-2  Col 3-5  Col 6-8  Col 9
// CHECK-NEXT:    Row 0-1  0        1        1        0
func.func @f(%x: tensor<2x10xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<1, head_tail>]>}) -> tensor<2x10xf32> {
  return %x : tensor<2x10xf32>
}

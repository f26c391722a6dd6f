// Head-tail shards (context parallelism's load balancing): rank r of n holds
// torch.chunk pieces r and 2n-1-r of 2n. Local shapes, loop indices mapped
// to global positions piece by piece, and redistributes to and from
// replicate.
// RUN: dtensor-opt %s --dtensor-partition | FileCheck %s
dtensor.mesh @m2 shape [2]

#id = affine_map<(d0, d1) -> (d0, d1)>

// 13 rows over 2 ranks: pieces [0,4) [4,8) [8,12) [12,13); rank r holds
// piece r (from BEGIN, HEAD rows) then piece 3-r (from TAIL).
// CHECK-LABEL: func.func @causal_mask(%arg0: tensor<?x13xf32>
// CHECK:       %[[R:.*]] = dtensor.mesh_coord on @m2 mesh_dims [0]
// CHECK:       %[[C4:.*]] = arith.constant 4 : index
// CHECK:       %[[START:.*]] = arith.muli %[[R]], %[[C4]]
// CHECK:       %[[BEGIN:.*]] = arith.minsi %[[START]], %{{.*}}
// CHECK:       %[[HEAD:.*]] = arith.subi %{{.*}}, %[[BEGIN]]
// CHECK:       %[[C3:.*]] = arith.constant 3 : index
// CHECK:       %[[OTHER:.*]] = arith.subi %[[C3]], %[[R]]
// CHECK:       %[[TSTART:.*]] = arith.muli %[[OTHER]], %[[C4]]
// CHECK:       %[[TAIL:.*]] = arith.minsi %[[TSTART]], %{{.*}}
// CHECK:       %[[SHIFT:.*]] = arith.subi %[[TAIL]], %[[HEAD]] : index
// CHECK:       linalg.generic
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT:    %[[INHEAD:.*]] = arith.addi %[[I]], %[[BEGIN]] : index
// CHECK-NEXT:    %[[ISHEAD:.*]] = arith.cmpi ult, %[[I]], %[[HEAD]] : index
// CHECK-NEXT:    %[[INTAIL:.*]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK-NEXT:    %[[ROW:.*]] = arith.select %[[ISHEAD]], %[[INHEAD]], %[[INTAIL]] : index
// CHECK-NEXT:    %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:    arith.cmpi ugt, %[[J]], %[[ROW]] : index
func.func @causal_mask(%x: tensor<13x13xf32> {dtensor.layout = #dtensor.layout<@m2, [shard<0, head_tail>]>}) -> (tensor<13x13xf32> {dtensor.layout = #dtensor.layout<@m2, [shard<0, head_tail>]>}) {
  %ninf = arith.constant -1.0e30 : f32
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<13x13xf32>) outs(%x : tensor<13x13xf32>) attrs = {dtensor.layouts = [#dtensor.layout<@m2, [shard<0, head_tail>]>]} {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %masked = arith.cmpi ugt, %j, %i : index
    %v = arith.select %masked, %ninf, %in : f32
    linalg.yield %v : f32
  } -> tensor<13x13xf32>
  return %m : tensor<13x13xf32>
}

// Uneven: the ranks hold 5 and 8 columns; each pads to 8, one all_gather,
// and the four pieces go back in global order from where their ranks put
// them (rank 0: pieces 0 and 3 at 0 and 4; rank 1: pieces 1 and 2 at 8 and
// 12).
// CHECK-LABEL: func.func @gather(%arg0: tensor<2x?xf32>
// CHECK:       %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<2x8xf32>
// CHECK:       %[[PADDED:.*]] = tensor.insert_slice %arg0 into %[[ZEROS]][0, 0] [2, %{{.*}}] [1, 1] : tensor<2x?xf32> into tensor<2x8xf32>
// CHECK:       %[[G:.*]] = dtensor.all_gather %[[PADDED]] on @m2 mesh_dims [0] gather_dim 1 : tensor<2x8xf32> -> tensor<2x16xf32>
// CHECK:       tensor.extract_slice %[[G]][0, 0] [2, 4] [1, 1]
// CHECK:       tensor.insert_slice {{.*}}[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x13xf32>
// CHECK:       tensor.extract_slice %[[G]][0, 8] [2, 4] [1, 1]
// CHECK:       tensor.insert_slice {{.*}}[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x13xf32>
// CHECK:       tensor.extract_slice %[[G]][0, 12] [2, 4] [1, 1]
// CHECK:       tensor.insert_slice {{.*}}[0, 8] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x13xf32>
// CHECK:       tensor.extract_slice %[[G]][0, 4] [2, 1] [1, 1]
// CHECK:       %[[OUT:.*]] = tensor.insert_slice {{.*}}[0, 12] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x13xf32>
// CHECK-NEXT:  return %[[OUT]]
func.func @gather(%x: tensor<2x13xf32> {dtensor.layout = #dtensor.layout<@m2, [shard<1, head_tail>]>}) -> (tensor<2x13xf32> {dtensor.layout = #dtensor.layout<@m2, [replicate]>}) {
  %0 = dtensor.redistribute %x from <@m2, [shard<1, head_tail>]> to <@m2, [replicate]> : tensor<2x13xf32>
  return %0 : tensor<2x13xf32>
}

// Even: no padding.
// CHECK-LABEL: func.func @gather_even(%arg0: tensor<2x4xf32>
// CHECK-NEXT:  %[[G:.*]] = dtensor.all_gather %arg0 on @m2 mesh_dims [0] gather_dim 1 : tensor<2x4xf32> -> tensor<2x8xf32>
// CHECK:       tensor.extract_slice %[[G]][0, 4] [2, 2] [1, 1]
// CHECK:       tensor.insert_slice {{.*}}[0, 2] [2, 2] [1, 1]
func.func @gather_even(%x: tensor<2x8xf32> {dtensor.layout = #dtensor.layout<@m2, [shard<1, head_tail>]>}) -> (tensor<2x8xf32> {dtensor.layout = #dtensor.layout<@m2, [replicate]>}) {
  %0 = dtensor.redistribute %x from <@m2, [shard<1, head_tail>]> to <@m2, [replicate]> : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// Replicate -> head-tail: the rank's two pieces, one after the other.
// CHECK-LABEL: func.func @chunk(%arg0: tensor<2x13xf32>
// CHECK-SAME:  -> (tensor<2x?xf32>
// CHECK:       %[[BEGIN:.*]] = arith.minsi
// CHECK:       %[[HEAD:.*]] = arith.subi %{{.*}}, %[[BEGIN]]
// CHECK:       %[[TAIL:.*]] = arith.minsi
// CHECK:       %[[SIZE:.*]] = arith.addi %[[HEAD]], %{{.*}}
// CHECK:       %[[REST:.*]] = arith.subi %[[SIZE]], %[[HEAD]]
// CHECK:       %[[A:.*]] = tensor.extract_slice %arg0[0, %[[BEGIN]]] [2, %[[HEAD]]] [1, 1]
// CHECK:       %[[B:.*]] = tensor.extract_slice %arg0[0, %[[TAIL]]] [2, %[[REST]]] [1, 1]
// CHECK:       %[[E:.*]] = tensor.empty(%[[SIZE]]) : tensor<2x?xf32>
// CHECK:       %[[X:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, %[[HEAD]]]
// CHECK:       %[[Y:.*]] = tensor.insert_slice %[[B]] into %[[X]][0, %[[HEAD]]] [2, %[[REST]]]
// CHECK:       return %[[Y]]
func.func @chunk(%x: tensor<2x13xf32> {dtensor.layout = #dtensor.layout<@m2, [replicate]>}) -> (tensor<2x13xf32> {dtensor.layout = #dtensor.layout<@m2, [shard<1, head_tail>]>}) {
  %0 = dtensor.redistribute %x from <@m2, [replicate]> to <@m2, [shard<1, head_tail>]> : tensor<2x13xf32>
  return %0 : tensor<2x13xf32>
}

// A constant keeps the rank's two pieces.
// CHECK-LABEL: func.func @constant()
// CHECK-SAME:  -> (tensor<4x2xf32>
// CHECK:       %[[CST:.*]] = arith.constant dense<{{.*}}> : tensor<8x2xf32>
// CHECK:       %[[ALL:.*]] = tensor.extract_slice %[[CST]][0, 0] [8, 2] [1, 1]
// CHECK:       tensor.extract_slice %[[ALL]][%{{.*}}, 0] [%{{.*}}, 2] [1, 1] : tensor<8x2xf32> to tensor<?x2xf32>
// CHECK:       tensor.extract_slice %[[ALL]][%{{.*}}, 0] [%{{.*}}, 2] [1, 1] : tensor<8x2xf32> to tensor<?x2xf32>
// CHECK:       tensor.insert_slice {{.*}} into tensor<4x2xf32>
// CHECK:       %[[OUT:.*]] = tensor.insert_slice {{.*}} into tensor<4x2xf32>
// CHECK-NEXT:  return %[[OUT]]
func.func @constant() -> (tensor<8x2xf32> {dtensor.layout = #dtensor.layout<@m2, [shard<0, head_tail>]>}) {
  %c = arith.constant {dtensor.layouts = [#dtensor.layout<@m2, [shard<0, head_tail>]>]} dense<[[0.0, 0.5], [1.0, 1.5], [2.0, 2.5], [3.0, 3.5], [4.0, 4.5], [5.0, 5.5], [6.0, 6.5], [7.0, 7.5]]> : tensor<8x2xf32>
  return %c : tensor<8x2xf32>
}

dtensor.mesh @m1 shape [1]

// One rank holds the whole dim in order: no copies either way.
// CHECK-LABEL: func.func @one_rank(%arg0: tensor<2x13xf32>
// CHECK-NEXT:  return %arg0 : tensor<2x13xf32>
func.func @one_rank(%x: tensor<2x13xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<1, head_tail>]>}) -> (tensor<2x13xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<1, head_tail>]>}) {
  %0 = dtensor.redistribute %x from <@m1, [shard<1, head_tail>]> to <@m1, [replicate]> : tensor<2x13xf32>
  %1 = dtensor.redistribute %0 from <@m1, [replicate]> to <@m1, [shard<1, head_tail>]> : tensor<2x13xf32>
  return %1 : tensor<2x13xf32>
}

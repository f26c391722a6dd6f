// embedding with the table sharded over the vocabulary (rowwise, vocab
// parallel): each rank looks up the ids it holds (zero rows for the
// others) and the partial results are summed. With the table sharded on
// the embedding dim (colwise) the lookup is local and the result sharded.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

// CHECK-LABEL: func.func @vocab_parallel
// CHECK-SAME:    (%[[IDS:[^:]*]]: tensor<4x128xi64>
// CHECK-SAME:    %[[T:[^:]*]]: tensor<16000x256xf32>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       %[[OFF:.*]] = arith.muli %{{.*}}, %c16000 : index
// CHECK:       %[[I:.*]] = tensor.expand_shape %[[IDS]]
// CHECK-NOT:   tensor.gather
// CHECK:       %[[L:.*]] = linalg.generic
// CHECK-SAME:    outs(%{{.*}} : tensor<4x128x256xf32>)
// CHECK:         %[[ID:.*]] = tensor.extract %[[I]]
// CHECK:         %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK:         %[[LOCAL:.*]] = arith.subi %[[ROW]], %[[OFF]] : index
// CHECK:         scf.if
// CHECK:           tensor.extract %[[T]][%[[LOCAL]]
// CHECK:       %[[R:.*]] = dtensor.all_reduce sum %[[L]] on @tp mesh_dims [0] : tensor<4x128x256xf32>
// CHECK:       return %[[R]]
func.func @vocab_parallel(%ids: tensor<4x128xi64> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
                          %table: tensor<32000x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<4x128x256xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %expanded = tensor.expand_shape %ids [[0], [1, 2]] output_shape [4, 128, 1] : tensor<4x128xi64> into tensor<4x128x1xi64>
  %gather = tensor.gather %table[%expanded] gather_dims([0]) : (tensor<32000x256xf32>, tensor<4x128x1xi64>) -> tensor<4x128x256xf32>
  return %gather : tensor<4x128x256xf32>
}

// Into a sequence-sharded result: the partial sums are reduce-scattered.
// CHECK-LABEL: func.func @vocab_parallel_to_sequence
// CHECK:       dtensor.reduce_scatter sum %{{.*}} on @tp mesh_dims [0] scatter_dim 1 : tensor<4x128x256xf32> -> tensor<4x64x256xf32>
func.func @vocab_parallel_to_sequence(%ids: tensor<4x128xi64> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
                                      %table: tensor<32000x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<4x128x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %expanded = tensor.expand_shape %ids [[0], [1, 2]] output_shape [4, 128, 1] : tensor<4x128xi64> into tensor<4x128x1xi64>
  %gather = tensor.gather %table[%expanded] gather_dims([0]) : (tensor<32000x256xf32>, tensor<4x128x1xi64>) -> tensor<4x128x256xf32>
  return %gather : tensor<4x128x256xf32>
}

// CHECK-LABEL: func.func @colwise
// CHECK-SAME:    %[[T:[^:]*]]: tensor<32000x128xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       %[[G:.*]] = tensor.gather %[[T]]
// CHECK-SAME:    -> tensor<4x128x128xf32>
// CHECK-NOT:   {{dtensor\.(all_|chunk|reduce_scatter)}}
// CHECK:       return %[[G]]
func.func @colwise(%ids: tensor<4x128xi64> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
                   %table: tensor<32000x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<4x128x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<2>]>}) {
  %expanded = tensor.expand_shape %ids [[0], [1, 2]] output_shape [4, 128, 1] : tensor<4x128xi64> into tensor<4x128x1xi64>
  %gather = tensor.gather %table[%expanded] gather_dims([0]) : (tensor<32000x256xf32>, tensor<4x128x1xi64>) -> tensor<4x128x256xf32>
  return %gather : tensor<4x128x256xf32>
}

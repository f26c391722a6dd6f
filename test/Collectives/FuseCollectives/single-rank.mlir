// Collectives and chunks over groups of one rank are their inputs; over
// larger groups, or where a type changes, they stay.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='bucket-bytes=0 overlap=false' | FileCheck %s
// RUN: dtensor-opt %s --dtensor-fuse-collectives='bucket-bytes=0 overlap=false explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN-COUNT-6: remark: explain: dtensor.{{[a-z_]+}} rewritten by single-rank-groups: a group of one rank communicates nothing (removed)

dtensor.mesh @m shape [2, 1]

// CHECK-LABEL: func.func @single_rank
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: dtensor.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @single_rank(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = dtensor.all_reduce sum %x on @m mesh_dims [1] : tensor<4x8xf32>
  %1 = dtensor.all_gather %x on @m mesh_dims [1] gather_dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = dtensor.reduce_scatter sum %x on @m mesh_dims [1] scatter_dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = dtensor.all_to_all %x on @m mesh_dims [1] split_dim 0 concat_dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  %4 = dtensor.broadcast %x on @m mesh_dims [1] root 0 : tensor<4x8xf32>
  %5 = dtensor.chunk %x on @m mesh_dims [1] dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// Over the dim of size 2 the collective stays.
// CHECK-LABEL: func.func @two_ranks
// CHECK: dtensor.all_reduce
func.func @two_ranks(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A variadic all_reduce over one rank: every result is its input.
// CHECK-LABEL: func.func @variadic
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<2xf32>)
// CHECK-NEXT: return %[[X]], %[[Y]]
func.func @variadic(%x: tensor<4x8xf32>, %y: tensor<2xf32>) -> (tensor<4x8xf32>, tensor<2xf32>) {
  %0:2 = dtensor.all_reduce sum %x, %y on @m mesh_dims [1] : tensor<4x8xf32>, tensor<2xf32>
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<2xf32>
}

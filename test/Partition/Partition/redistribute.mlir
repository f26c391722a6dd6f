// Every transition of a redistribute becomes the local steps the planner
// picks, on 1-D meshes of 2 and 3 ranks and on a 2x2 mesh, even and uneven.
// RUN: dtensor-opt %s --dtensor-partition | FileCheck %s
dtensor.mesh @m1 shape [2]
dtensor.mesh @m3 shape [3]
dtensor.mesh @m22 shape [2, 2]


// S->R: one all_gather.
// CHECK-LABEL: func.func @s_to_r(%arg0: tensor<4x6xf32> {dtensor.global_shape = array<i64: 8, 6>, dtensor.layout = #dtensor.layout<@m1, [shard<0>]>}) -> (tensor<8x6xf32> {dtensor.global_shape = array<i64: 8, 6>, dtensor.layout = #dtensor.layout<@m1, [replicate]>})
// CHECK-NEXT:  %[[G:.*]] = dtensor.all_gather %arg0 on @m1 mesh_dims [0] gather_dim 0 : tensor<4x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:  return %[[G]]
func.func @s_to_r(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<0>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [replicate]>}) {
  %0 = dtensor.redistribute %x from <@m1, [shard<0>]> to <@m1, [replicate]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// P->R: one all_reduce of the same kind.
// CHECK-LABEL: func.func @p_to_r
// CHECK-NEXT:  %[[R:.*]] = dtensor.all_reduce avg %arg0 on @m1 mesh_dims [0] : tensor<8x6xf32>
// CHECK-NEXT:  return %[[R]]
func.func @p_to_r(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [partial<avg>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [replicate]>}) {
  %0 = dtensor.redistribute %x from <@m1, [partial<avg>]> to <@m1, [replicate]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// P->S: one reduce_scatter.
// CHECK-LABEL: func.func @p_to_s
// CHECK-NEXT:  %[[R:.*]] = dtensor.reduce_scatter sum %arg0 on @m1 mesh_dims [0] scatter_dim 1 : tensor<8x6xf32> -> tensor<8x3xf32>
// CHECK-NEXT:  return %[[R]]
func.func @p_to_s(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [partial<sum>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<1>]>}) {
  %0 = dtensor.redistribute %x from <@m1, [partial<sum>]> to <@m1, [shard<1>]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// S(0)->S(1): one all_to_all.
// CHECK-LABEL: func.func @s_to_s
// CHECK-NEXT:  %[[R:.*]] = dtensor.all_to_all %arg0 on @m1 mesh_dims [0] split_dim 1 concat_dim 0 : tensor<4x6xf32> -> tensor<8x3xf32>
// CHECK-NEXT:  return %[[R]]
func.func @s_to_s(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<0>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<1>]>}) {
  %0 = dtensor.redistribute %x from <@m1, [shard<0>]> to <@m1, [shard<1>]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// R->S: a local chunk, no communication.
// CHECK-LABEL: func.func @r_to_s
// CHECK-NEXT:  %[[R:.*]] = dtensor.chunk %arg0 on @m1 mesh_dims [0] dim 1 : tensor<8x6xf32> -> tensor<8x3xf32>
// CHECK-NEXT:  return %[[R]]
func.func @r_to_s(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [replicate]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<1>]>}) {
  %0 = dtensor.redistribute %x from <@m1, [replicate]> to <@m1, [shard<1>]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// R->P(sum): rank 0 of the group keeps the data, the others hold zeros.
// R->P(max) is the identity.
// CHECK-LABEL: func.func @r_to_p
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[COORD:.*]] = dtensor.mesh_coord on @m1 mesh_dims [0] : index
// CHECK:       %[[FIRST:.*]] = arith.cmpi eq, %[[COORD]], %[[C0]] : index
// CHECK-NEXT:  %[[E:.*]] = tensor.empty() : tensor<8x6xf32>
// CHECK-NEXT:  %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[ZEROS:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<8x6xf32>)
// CHECK-NEXT:  %[[SEL:.*]] = arith.select %[[FIRST]], %arg0, %[[ZEROS]] : tensor<8x6xf32>
// CHECK-NEXT:  return %[[SEL]], %arg0
func.func @r_to_p(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [replicate]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [partial<sum>]>}, tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [partial<max>]>}) {
  %0 = dtensor.redistribute %x from <@m1, [replicate]> to <@m1, [partial<sum>]> : tensor<8x6xf32>
  %1 = dtensor.redistribute %x from <@m1, [replicate]> to <@m1, [partial<max>]> : tensor<8x6xf32>
  return %0, %1 : tensor<8x6xf32>, tensor<8x6xf32>
}

// Uneven shards (10 rows and 7 columns over 3 ranks: 4, 4, 2 and 3, 3, 1)
// have dynamic local dims.
// CHECK-LABEL: func.func @uneven(%arg0: tensor<?x7xf32> {{.*}}) -> (tensor<10x?xf32>
// CHECK-NEXT:  %[[R:.*]] = dtensor.all_to_all %arg0 on @m3 mesh_dims [0] split_dim 1 concat_dim 0 : tensor<?x7xf32> -> tensor<10x?xf32>
// CHECK-NEXT:  return %[[R]]
func.func @uneven(%x: tensor<10x7xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<10x7xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<1>]>}) {
  %0 = dtensor.redistribute %x from <@m3, [shard<0>]> to <@m3, [shard<1>]> : tensor<10x7xf32>
  return %0 : tensor<10x7xf32>
}

// CHECK-LABEL: func.func @uneven_p_to_s
// CHECK-NEXT:  %[[R:.*]] = dtensor.reduce_scatter sum %arg0 on @m3 mesh_dims [0] scatter_dim 0 : tensor<10x7xf32> -> tensor<?x7xf32>
// CHECK-NEXT:  return %[[R]]
func.func @uneven_p_to_s(%x: tensor<10x7xf32> {dtensor.layout = #dtensor.layout<@m3, [partial<sum>]>}) -> (tensor<10x7xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) {
  %0 = dtensor.redistribute %x from <@m3, [partial<sum>]> to <@m3, [shard<0>]> : tensor<10x7xf32>
  return %0 : tensor<10x7xf32>
}

// (S0, S0)->(R, R): one all_gather over both mesh dims, not two.
// CHECK-LABEL: func.func @both_to_r
// CHECK-NEXT:  %[[R:.*]] = dtensor.all_gather %arg0 on @m22 mesh_dims [0, 1] gather_dim 0 : tensor<2x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT:  return %[[R]]
func.func @both_to_r(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, shard<0>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [replicate, replicate]>}) {
  %0 = dtensor.redistribute %x from <@m22, [shard<0>, shard<0>]> to <@m22, [replicate, replicate]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// (S0, S1)->(S1, S0) never replicates the whole tensor: gather rows over
// mesh dim 0 ([R, S1], 8x3), swap the shard of mesh dim 1 from columns to
// rows ([R, S0], 4x6), keep this rank's columns ([S1, S0], 4x3).
// CHECK-LABEL: func.func @transpose
// CHECK-NEXT:  %[[G:.*]] = dtensor.all_gather %arg0 on @m22 mesh_dims [0] gather_dim 0 : tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT:  %[[T:.*]] = dtensor.all_to_all %[[G]] on @m22 mesh_dims [1] split_dim 0 concat_dim 1 : tensor<8x3xf32> -> tensor<4x6xf32>
// CHECK-NEXT:  %[[C:.*]] = dtensor.chunk %[[T]] on @m22 mesh_dims [0] dim 1 : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK-NEXT:  return %[[C]]
func.func @transpose(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, shard<1>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<1>, shard<0>]>}) {
  %0 = dtensor.redistribute %x from <@m22, [shard<0>, shard<1>]> to <@m22, [shard<1>, shard<0>]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// [P, S0]->[S0, R]: gather the inner shard, then reduce-scatter the partial
// sum into the outer one.
// CHECK-LABEL: func.func @mixed
// CHECK-NEXT:  %[[G:.*]] = dtensor.all_gather %arg0 on @m22 mesh_dims [1] gather_dim 0 : tensor<5x6xf32> -> tensor<10x6xf32>
// CHECK-NEXT:  %[[S:.*]] = dtensor.reduce_scatter sum %[[G]] on @m22 mesh_dims [0] scatter_dim 0 : tensor<10x6xf32> -> tensor<5x6xf32>
// CHECK-NEXT:  return %[[S]]
func.func @mixed(%x: tensor<10x6xf32> {dtensor.layout = #dtensor.layout<@m22, [partial<sum>, shard<0>]>}) -> (tensor<10x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, replicate]>}) {
  %0 = dtensor.redistribute %x from <@m22, [partial<sum>, shard<0>]> to <@m22, [shard<0>, replicate]> : tensor<10x6xf32>
  return %0 : tensor<10x6xf32>
}

// R->P(sum) over mesh dim 1 only: the group index is the mesh dim 1 coord.
// CHECK-LABEL: func.func @r_to_p_2d
// CHECK:       %[[COORD:.*]]:2 = dtensor.mesh_coord on @m22 mesh_dims [0, 1] : index, index
// CHECK-NEXT:  arith.cmpi eq, %[[COORD]]#1, %{{.*}} : index
// CHECK:       arith.select
func.func @r_to_p_2d(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [replicate, replicate]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [replicate, partial<sum>]>}) {
  %0 = dtensor.redistribute %x from <@m22, [replicate, replicate]> to <@m22, [replicate, partial<sum>]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// 10 rows nested over a 2x2 mesh are 3, 2, 3, 2 rows; gathering the inner
// mesh dim gives the 5 rows of the outer shard.
// CHECK-LABEL: func.func @nested_uneven(%arg0: tensor<?x6xf32>
// CHECK-NEXT:  %[[G:.*]] = dtensor.all_gather %arg0 on @m22 mesh_dims [1] gather_dim 0 : tensor<?x6xf32> -> tensor<5x6xf32>
// CHECK-NEXT:  return %[[G]]
func.func @nested_uneven(%x: tensor<10x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, shard<0>]>}) -> (tensor<10x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, replicate]>}) {
  %0 = dtensor.redistribute %x from <@m22, [shard<0>, shard<0>]> to <@m22, [shard<0>, replicate]> : tensor<10x6xf32>
  return %0 : tensor<10x6xf32>
}

// CHECK-LABEL: func.func @r_to_nested
// CHECK-NEXT:  %[[C:.*]] = dtensor.chunk %arg0 on @m22 mesh_dims [0, 1] dim 0 : tensor<10x6xf32> -> tensor<?x6xf32>
// CHECK-NEXT:  return %[[C]]
func.func @r_to_nested(%x: tensor<10x6xf32> {dtensor.layout = #dtensor.layout<@m22, [replicate, replicate]>}) -> (tensor<10x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, shard<0>]>}) {
  %0 = dtensor.redistribute %x from <@m22, [replicate, replicate]> to <@m22, [shard<0>, shard<0>]> : tensor<10x6xf32>
  return %0 : tensor<10x6xf32>
}

// (P(max), P(max))->(R, R): one all_reduce over both mesh dims.
// CHECK-LABEL: func.func @max_to_r
// CHECK-NEXT:  %[[R:.*]] = dtensor.all_reduce max %arg0 on @m22 mesh_dims [0, 1] : tensor<8x6xf32>
// CHECK-NEXT:  return %[[R]]
func.func @max_to_r(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [partial<max>, partial<max>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m22, [replicate, replicate]>}) {
  %0 = dtensor.redistribute %x from <@m22, [partial<max>, partial<max>]> to <@m22, [replicate, replicate]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// S->P(sum): no communication; each rank's shard at its offset in zeros of
// the joined size (DTensor's Shard -> Partial). Uneven on 3 ranks (3, 2, 2
// rows, offset min(3 * coord, 7)), and nested: over mesh dim 1 inside the
// mesh dim 0 shard, the offset is relative to that shard.
// CHECK-LABEL: func.func @s_to_p(
// CHECK-NEXT:  %[[COORD:.*]] = dtensor.mesh_coord on @m1 mesh_dims [0] : index
// CHECK-NEXT:  %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:  %[[OFF:.*]] = arith.muli %[[COORD]], %[[C4]] : index
// CHECK-NEXT:  %[[E:.*]] = tensor.empty() : tensor<8x6xf32>
// CHECK-NEXT:  %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[ZEROS:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<8x6xf32>)
// CHECK-NEXT:  %[[PAD:.*]] = tensor.insert_slice %arg0 into %[[ZEROS]][%[[OFF]], 0] [4, 6] [1, 1] : tensor<4x6xf32> into tensor<8x6xf32>
// CHECK-NEXT:  return %[[PAD]]
func.func @s_to_p(%x: tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [shard<0>]>}) -> (tensor<8x6xf32> {dtensor.layout = #dtensor.layout<@m1, [partial<sum>]>}) {
  %0 = dtensor.redistribute %x from <@m1, [shard<0>]> to <@m1, [partial<sum>]> : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// CHECK-LABEL: func.func @s_to_p_uneven(
// CHECK-SAME:    %arg0: tensor<?x6xf32>
// CHECK-NOT:   dtensor.all_gather
// CHECK:       %[[OFF:.*]] = arith.minsi
// CHECK:       %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<7x6xf32>
// CHECK:       %[[ROWS:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x6xf32>
// CHECK-NEXT:  %[[PAD:.*]] = tensor.insert_slice %arg0 into %[[ZEROS]][%[[OFF]], 0] [%[[ROWS]], 6] [1, 1] : tensor<?x6xf32> into tensor<7x6xf32>
// CHECK-NEXT:  return %[[PAD]]
func.func @s_to_p_uneven(%x: tensor<7x6xf32> {dtensor.layout = #dtensor.layout<@m3, [shard<0>]>}) -> (tensor<7x6xf32> {dtensor.layout = #dtensor.layout<@m3, [partial<sum>]>}) {
  %0 = dtensor.redistribute %x from <@m3, [shard<0>]> to <@m3, [partial<sum>]> : tensor<7x6xf32>
  return %0 : tensor<7x6xf32>
}

// CHECK-LABEL: func.func @s_to_p_nested(
// CHECK-SAME:    -> (tensor<?x6xf32> {{.*}}[shard<0>, partial<sum>]>})
// CHECK-NOT:   dtensor.all_gather
// CHECK:       arith.subi
// CHECK:       arith.subi
// CHECK:       %[[INNER:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:  %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x6xf32>
// CHECK:       %[[ZEROS:.*]] = linalg.fill {{.*}} outs(%[[E]] : tensor<?x6xf32>)
// CHECK:       tensor.insert_slice %arg0 into %[[ZEROS]][%[[INNER]], 0]
func.func @s_to_p_nested(%x: tensor<5x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, shard<0>]>}) -> (tensor<5x6xf32> {dtensor.layout = #dtensor.layout<@m22, [shard<0>, partial<sum>]>}) {
  %0 = dtensor.redistribute %x from <@m22, [shard<0>, shard<0>]> to <@m22, [shard<0>, partial<sum>]> : tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}

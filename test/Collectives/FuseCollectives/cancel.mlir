// Cancellations and strength reductions of --dtensor-fuse-collectives, each
// with the cases where the types do not prove the rewrite exact. Bucketing
// and overlap are off so that only this phase shows.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='bucket-bytes=0 overlap=false' | FileCheck %s
// The statistics remark: of the 42 collectives not yet issued by a start
// (43 in the file), 12 go (43 - 31 remain in the output).
// RUN: dtensor-opt %s --dtensor-fuse-collectives='bucket-bytes=0 overlap=false statistics=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: remark: dtensor-fuse-collectives: 42 collectives in, 12 removed by cancelling and strength reduction, 0 buckets of 0 collectives, 0 split for overlap
// With explain: a remark per rewrite at the collective it rewrote, naming
// the rewrite, and one per bucket (bucketing on here); none without it.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false' -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET
// EXPLAIN-DAG: cancel.mlir:{{[0-9]+}}:8: remark: explain: dtensor.chunk rewritten by chunk-of-all-gather: a chunk of an all_gather over the same groups is each rank's own shard (both removed)
// EXPLAIN-DAG: remark: explain: dtensor.all_gather rewritten by all-gather-of-chunk: gathering the chunks of a replicated value gives the value back
// EXPLAIN-DAG: remark: explain: dtensor.all_to_all rewritten by all-to-all-round-trip: an all_to_all and its inverse cancel
// EXPLAIN-DAG: remark: explain: dtensor.all_reduce rewritten by all-reduce-of-chunks: an all_reduce whose users all chunk it is a reduce_scatter
// EXPLAIN-DAG: remark: explain: dtensor.all_gather rewritten by all-gather-of-reduce-scatter: a reduce_scatter gathered again is one all_reduce
// EXPLAIN-DAG: remark: explain: dtensor.all_reduce rewritten by drop-unused-pairs: results nobody reads are dropped from the collective
// EXPLAIN-DAG: remark: explain: bucketing: 3 independent dtensor.all_reduce ops over the same groups become one call of 1728 bytes per rank (bucket-bytes 26214400)
// QUIET-NOT: remark

dtensor.mesh @tp shape [4]
dtensor.mesh @m shape [2, 3]

//===----------------------------------------------------------------------===//
// chunk(all_gather(x)) -> x
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @gather_then_chunk
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @gather_then_chunk(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %g = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %c = dtensor.chunk %g on @tp mesh_dims [0] dim 0 : tensor<8x8xf32> -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// Nested over both dims of a 2-D mesh, in the same order.
// CHECK-LABEL: func.func @gather_then_chunk_2d
// CHECK-SAME: (%[[X:.*]]: tensor<4x2xf32>)
// CHECK-NEXT: return %[[X]]
func.func @gather_then_chunk_2d(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %g = dtensor.all_gather %x on @m mesh_dims [1, 0] gather_dim 1 : tensor<4x2xf32> -> tensor<4x12xf32>
  %c = dtensor.chunk %g on @m mesh_dims [1, 0] dim 1 : tensor<4x12xf32> -> tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// The gathered piece is still needed by another user: the all_gather stays.
// CHECK-LABEL: func.func @gather_then_chunk_other_user
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[G:.*]] = dtensor.all_gather %[[X]]
// CHECK-NEXT: return %[[X]], %[[G]]
func.func @gather_then_chunk_other_user(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<8x8xf32>) {
  %g = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %c = dtensor.chunk %g on @tp mesh_dims [0] dim 0 : tensor<8x8xf32> -> tensor<2x8xf32>
  return %c, %g : tensor<2x8xf32>, tensor<8x8xf32>
}

// Uneven shards of unknown origin: each rank may hold any number of the 10
// rows, so chunking the gathered rows need not give them back.
// CHECK-LABEL: func.func @gather_then_chunk_unknown_shards
// CHECK-NEXT: dtensor.all_gather
// CHECK-NEXT: dtensor.chunk
func.func @gather_then_chunk_unknown_shards(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %g = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  %c = dtensor.chunk %g on @tp mesh_dims [0] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// Uneven shards cut by an all_to_all over the same groups are chunks: 10
// rows split 3, 3, 3, 1 and come back the same way.
// CHECK-LABEL: func.func @gather_then_chunk_uneven
// CHECK-NEXT: %[[T:.*]] = dtensor.all_to_all
// CHECK-NEXT: return %[[T]]
func.func @gather_then_chunk_uneven(%x: tensor<10x2xf32>) -> tensor<?x8xf32> {
  %t = dtensor.all_to_all %x on @tp mesh_dims [0] split_dim 0 concat_dim 1 : tensor<10x2xf32> -> tensor<?x8xf32>
  %g = dtensor.all_gather %t on @tp mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  %c = dtensor.chunk %g on @tp mesh_dims [0] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// Chunking over other mesh dims, over the same dims in another order, or
// along another tensor dim cuts other pieces.
// CHECK-LABEL: func.func @gather_then_chunk_mismatch
// CHECK-NEXT: %[[G:.*]] = dtensor.all_gather %{{.*}} on @m mesh_dims [0, 1] gather_dim 1
// CHECK-NEXT: %[[A:.*]] = dtensor.chunk %[[G]] on @m mesh_dims [1, 0] dim 1
// CHECK-NEXT: %[[G1:.*]] = dtensor.all_gather %{{.*}} on @m mesh_dims [1] gather_dim 1
// CHECK-NEXT: %[[B:.*]] = dtensor.chunk %[[G1]] on @m mesh_dims [0] dim 1
// CHECK-NEXT: %[[C:.*]] = dtensor.chunk %[[G1]] on @m mesh_dims [1] dim 0
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]]
func.func @gather_then_chunk_mismatch(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>, tensor<?x6xf32>) {
  %g = dtensor.all_gather %x on @m mesh_dims [0, 1] gather_dim 1 : tensor<4x2xf32> -> tensor<4x12xf32>
  %a = dtensor.chunk %g on @m mesh_dims [1, 0] dim 1 : tensor<4x12xf32> -> tensor<4x2xf32>
  %g1 = dtensor.all_gather %x on @m mesh_dims [1] gather_dim 1 : tensor<4x2xf32> -> tensor<4x6xf32>
  %b = dtensor.chunk %g1 on @m mesh_dims [0] dim 1 : tensor<4x6xf32> -> tensor<4x3xf32>
  %c = dtensor.chunk %g1 on @m mesh_dims [1] dim 0 : tensor<4x6xf32> -> tensor<?x6xf32>
  return %a, %b, %c : tensor<4x2xf32>, tensor<4x3xf32>, tensor<?x6xf32>
}

// A chunk typed differently from the shard (dynamic where the shard is
// static) would need a cast; it stays.
// CHECK-LABEL: func.func @gather_then_chunk_other_type
// CHECK-NEXT: dtensor.all_gather
// CHECK-NEXT: dtensor.chunk
func.func @gather_then_chunk_other_type(%x: tensor<2x8xf32>) -> tensor<?x8xf32> {
  %g = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %c = dtensor.chunk %g on @tp mesh_dims [0] dim 0 : tensor<8x8xf32> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// One pair of a variadic all_gather cancels; the other stays gathered.
// CHECK-LABEL: func.func @gather_then_chunk_variadic
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[G:.*]] = dtensor.all_gather %[[Y]] on @tp mesh_dims [0] gather_dim 0 : tensor<3xf32> -> tensor<12xf32>
// CHECK-NEXT: return %[[X]], %[[G]]
func.func @gather_then_chunk_variadic(%x: tensor<2x8xf32>, %y: tensor<3xf32>) -> (tensor<2x8xf32>, tensor<12xf32>) {
  %g:2 = dtensor.all_gather %x, %y on @tp mesh_dims [0] gather_dim 0 : tensor<2x8xf32>, tensor<3xf32> -> tensor<8x8xf32>, tensor<12xf32>
  %c = dtensor.chunk %g#0 on @tp mesh_dims [0] dim 0 : tensor<8x8xf32> -> tensor<2x8xf32>
  return %c, %g#1 : tensor<2x8xf32>, tensor<12xf32>
}

//===----------------------------------------------------------------------===//
// all_gather(chunk(x)) -> x
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @chunk_then_gather
// CHECK-SAME: (%[[X:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @chunk_then_gather(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = dtensor.chunk %x on @tp mesh_dims [0] dim 1 : tensor<8x8xf32> -> tensor<8x2xf32>
  %g = dtensor.all_gather %c on @tp mesh_dims [0] gather_dim 1 : tensor<8x2xf32> -> tensor<8x8xf32>
  return %g : tensor<8x8xf32>
}

// Uneven on a 2-D mesh: over mesh dims [0, 1] the 10 rows split 5 + 5, then
// each half 2, 2, 1; gathering in the same order puts them back together.
// CHECK-LABEL: func.func @chunk_then_gather_uneven_2d
// CHECK-SAME: (%[[X:.*]]: tensor<10x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @chunk_then_gather_uneven_2d(%x: tensor<10x8xf32>) -> tensor<10x8xf32> {
  %c = dtensor.chunk %x on @m mesh_dims [0, 1] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  %g = dtensor.all_gather %c on @m mesh_dims [0, 1] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  return %g : tensor<10x8xf32>
}

// The chunk keeps its other users; a gather whose type is not the chunked
// tensor's (dynamic where it is static) or over other mesh dims stays.
// CHECK-LABEL: func.func @chunk_then_gather_mismatch
// CHECK-SAME: (%[[X:.*]]: tensor<10x8xf32>)
// CHECK-NEXT: %[[C:.*]] = dtensor.chunk %[[X]] on @m mesh_dims [0, 1] dim 0
// CHECK-NEXT: %[[G:.*]] = dtensor.all_gather %[[C]] on @m mesh_dims [0, 1] gather_dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[H:.*]] = dtensor.all_gather %[[C]] on @m mesh_dims [1, 0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
// CHECK-NEXT: return %[[C]], %[[G]], %[[H]]
func.func @chunk_then_gather_mismatch(%x: tensor<10x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<10x8xf32>) {
  %c = dtensor.chunk %x on @m mesh_dims [0, 1] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  %g = dtensor.all_gather %c on @m mesh_dims [0, 1] gather_dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
  %h = dtensor.all_gather %c on @m mesh_dims [1, 0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  return %c, %g, %h : tensor<?x8xf32>, tensor<?x8xf32>, tensor<10x8xf32>
}

//===----------------------------------------------------------------------===//
// all_to_all there and back -> x
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @all_to_all_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @all_to_all_round_trip(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %t = dtensor.all_to_all %x on @tp mesh_dims [0] split_dim 1 concat_dim 0 : tensor<2x8xf32> -> tensor<8x2xf32>
  %b = dtensor.all_to_all %t on @tp mesh_dims [0] split_dim 0 concat_dim 1 : tensor<8x2xf32> -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// Uneven: rows that came from a chunk over the same groups go and come back.
// CHECK-LABEL: func.func @all_to_all_round_trip_uneven
// CHECK-NEXT: %[[C:.*]] = dtensor.chunk
// CHECK-NEXT: return %[[C]]
func.func @all_to_all_round_trip_uneven(%x: tensor<10x8xf32>) -> tensor<?x8xf32> {
  %c = dtensor.chunk %x on @tp mesh_dims [0] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  %t = dtensor.all_to_all %c on @tp mesh_dims [0] split_dim 1 concat_dim 0 : tensor<?x8xf32> -> tensor<10x2xf32>
  %b = dtensor.all_to_all %t on @tp mesh_dims [0] split_dim 0 concat_dim 1 : tensor<10x2xf32> -> tensor<?x8xf32>
  return %b : tensor<?x8xf32>
}

// Rows of unknown origin need not be split as the way back splits them; a
// second all_to_all in the same direction, or over other mesh dims, does not
// undo the first.
// CHECK-LABEL: func.func @all_to_all_no_round_trip
// CHECK-COUNT-6: dtensor.all_to_all
// CHECK-NEXT: return %{{.*}}, %{{.*}}, %{{.*}} :
func.func @all_to_all_no_round_trip(%x: tensor<?x8xf32>, %y: tensor<2x6xf32>, %z: tensor<2x2x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x9xf32>, tensor<2x8x2xf32>) {
  %t = dtensor.all_to_all %x on @tp mesh_dims [0] split_dim 1 concat_dim 0 : tensor<?x8xf32> -> tensor<?x2xf32>
  %b = dtensor.all_to_all %t on @tp mesh_dims [0] split_dim 0 concat_dim 1 : tensor<?x2xf32> -> tensor<?x8xf32>
  %u = dtensor.all_to_all %y on @m mesh_dims [0] split_dim 1 concat_dim 0 : tensor<2x6xf32> -> tensor<4x3xf32>
  %v = dtensor.all_to_all %u on @m mesh_dims [1] split_dim 0 concat_dim 1 : tensor<4x3xf32> -> tensor<?x9xf32>
  %w = dtensor.all_to_all %z on @tp mesh_dims [0] split_dim 2 concat_dim 0 : tensor<2x2x8xf32> -> tensor<8x2x2xf32>
  %k = dtensor.all_to_all %w on @tp mesh_dims [0] split_dim 0 concat_dim 1 : tensor<8x2x2xf32> -> tensor<2x8x2xf32>
  return %b, %v, %k : tensor<?x8xf32>, tensor<?x9xf32>, tensor<2x8x2xf32>
}

//===----------------------------------------------------------------------===//
// all_reduce whose users are all one chunk -> reduce_scatter
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_then_chunk
// CHECK-SAME: (%[[P:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[S:.*]] = dtensor.reduce_scatter avg %[[P]] on @tp mesh_dims [0] scatter_dim 1 : tensor<8x8xf32> -> tensor<8x2xf32>
// CHECK-NEXT: return %[[S]], %[[S]]
func.func @reduce_then_chunk(%p: tensor<8x8xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>) {
  %r = dtensor.all_reduce avg %p on @tp mesh_dims [0] : tensor<8x8xf32>
  %a = dtensor.chunk %r on @tp mesh_dims [0] dim 1 : tensor<8x8xf32> -> tensor<8x2xf32>
  %b = dtensor.chunk %r on @tp mesh_dims [0] dim 1 : tensor<8x8xf32> -> tensor<8x2xf32>
  return %a, %b : tensor<8x2xf32>, tensor<8x2xf32>
}

// Uneven, over both dims of a 2-D mesh, and variadic: every result's users
// are chunks along the same dim.
// CHECK-LABEL: func.func @reduce_then_chunk_uneven_2d
// CHECK-SAME: (%[[P:.*]]: tensor<10x8xf32>, %[[Q:.*]]: tensor<6xf32>)
// CHECK-NEXT: %[[S:.*]]:2 = dtensor.reduce_scatter max %[[P]], %[[Q]] on @m mesh_dims [1, 0] scatter_dim 0 : tensor<10x8xf32>, tensor<6xf32> -> tensor<?x8xf32>, tensor<1xf32>
// CHECK-NEXT: return %[[S]]#0, %[[S]]#1
func.func @reduce_then_chunk_uneven_2d(%p: tensor<10x8xf32>, %q: tensor<6xf32>) -> (tensor<?x8xf32>, tensor<1xf32>) {
  %r:2 = dtensor.all_reduce max %p, %q on @m mesh_dims [1, 0] : tensor<10x8xf32>, tensor<6xf32>
  %a = dtensor.chunk %r#0 on @m mesh_dims [1, 0] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  %b = dtensor.chunk %r#1 on @m mesh_dims [1, 0] dim 0 : tensor<6xf32> -> tensor<1xf32>
  return %a, %b : tensor<?x8xf32>, tensor<1xf32>
}

// Not when another user needs the whole reduced tensor, nor when a chunk is
// over other mesh dims, along another dim than its sibling, or typed
// otherwise than its sibling.
// CHECK-LABEL: func.func @reduce_then_chunk_mismatch
// CHECK-NEXT: dtensor.all_reduce
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.all_reduce
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.all_reduce
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.all_reduce
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.chunk
// CHECK-NOT: dtensor.reduce_scatter
func.func @reduce_then_chunk_mismatch(%p: tensor<12x12xf32>)
    -> (tensor<3x12xf32>, tensor<12x12xf32>, tensor<6x12xf32>, tensor<4x12xf32>, tensor<12x3xf32>, tensor<?x12xf32>) {
  %r = dtensor.all_reduce sum %p on @tp mesh_dims [0] : tensor<12x12xf32>
  %a = dtensor.chunk %r on @tp mesh_dims [0] dim 0 : tensor<12x12xf32> -> tensor<3x12xf32>
  %r2 = dtensor.all_reduce sum %p on @m mesh_dims [0, 1] : tensor<12x12xf32>
  %b = dtensor.chunk %r2 on @m mesh_dims [1] dim 0 : tensor<12x12xf32> -> tensor<4x12xf32>
  %b2 = dtensor.chunk %r2 on @m mesh_dims [1] dim 0 : tensor<12x12xf32> -> tensor<4x12xf32>
  %c = dtensor.chunk %r2 on @m mesh_dims [0] dim 0 : tensor<12x12xf32> -> tensor<6x12xf32>
  %r3 = dtensor.all_reduce sum %p on @tp mesh_dims [0] : tensor<12x12xf32>
  %d = dtensor.chunk %r3 on @tp mesh_dims [0] dim 1 : tensor<12x12xf32> -> tensor<12x3xf32>
  %e = dtensor.chunk %r3 on @tp mesh_dims [0] dim 0 : tensor<12x12xf32> -> tensor<3x12xf32>
  %r4 = dtensor.all_reduce sum %p on @tp mesh_dims [0] : tensor<12x12xf32>
  %f = dtensor.chunk %r4 on @tp mesh_dims [0] dim 0 : tensor<12x12xf32> -> tensor<3x12xf32>
  %g = dtensor.chunk %r4 on @tp mesh_dims [0] dim 0 : tensor<12x12xf32> -> tensor<?x12xf32>
  %sum = arith.addf %a, %e : tensor<3x12xf32>
  %sum2 = arith.addf %sum, %f : tensor<3x12xf32>
  %sum3 = arith.addf %b, %b2 : tensor<4x12xf32>
  return %sum2, %r, %c, %sum3, %d, %g : tensor<3x12xf32>, tensor<12x12xf32>, tensor<6x12xf32>, tensor<4x12xf32>, tensor<12x3xf32>, tensor<?x12xf32>
}

//===----------------------------------------------------------------------===//
// all_gather(reduce_scatter(x)) -> all_reduce(x)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @scatter_then_gather
// CHECK-SAME: (%[[P:.*]]: tensor<8x4xf32>)
// CHECK-NEXT: %[[R:.*]] = dtensor.all_reduce min %[[P]] on @tp mesh_dims [0] : tensor<8x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @scatter_then_gather(%p: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s = dtensor.reduce_scatter min %p on @tp mesh_dims [0] scatter_dim 0 : tensor<8x4xf32> -> tensor<2x4xf32>
  %g = dtensor.all_gather %s on @tp mesh_dims [0] gather_dim 0 : tensor<2x4xf32> -> tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}

// Uneven on a 2-D mesh; the scattered piece is used too, so it is cut from
// the all_reduce without communication.
// CHECK-LABEL: func.func @scatter_then_gather_uneven_2d
// CHECK-SAME: (%[[P:.*]]: tensor<10x4xf32>)
// CHECK-NEXT: %[[R:.*]] = dtensor.all_reduce sum %[[P]] on @m mesh_dims [0, 1] : tensor<10x4xf32>
// CHECK-NEXT: %[[S:.*]] = dtensor.chunk %[[R]] on @m mesh_dims [0, 1] dim 0 : tensor<10x4xf32> -> tensor<?x4xf32>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[S]]
// CHECK-NEXT: return %[[R]], %[[T]]
func.func @scatter_then_gather_uneven_2d(%p: tensor<10x4xf32>) -> (tensor<10x4xf32>, tensor<?x4xf32>) {
  %s = dtensor.reduce_scatter sum %p on @m mesh_dims [0, 1] scatter_dim 0 : tensor<10x4xf32> -> tensor<?x4xf32>
  %t = math.tanh %s : tensor<?x4xf32>
  %g = dtensor.all_gather %s on @m mesh_dims [0, 1] gather_dim 0 : tensor<?x4xf32> -> tensor<10x4xf32>
  return %g, %t : tensor<10x4xf32>, tensor<?x4xf32>
}

// Gathering along another dim, over other mesh dims, or into another type
// is not the reduction.
// CHECK-LABEL: func.func @scatter_then_gather_mismatch
// CHECK-NEXT: dtensor.reduce_scatter
// CHECK-NEXT: dtensor.all_gather
// CHECK-NEXT: dtensor.reduce_scatter
// CHECK-NEXT: dtensor.all_gather
// CHECK-NEXT: dtensor.reduce_scatter
// CHECK-NEXT: dtensor.all_gather
// CHECK-NEXT: return
func.func @scatter_then_gather_mismatch(%p: tensor<8x4xf32>, %q: tensor<12x6xf32>, %u: tensor<10x4xf32>)
    -> (tensor<2x16xf32>, tensor<12x9xf32>, tensor<?x4xf32>) {
  %s = dtensor.reduce_scatter sum %p on @tp mesh_dims [0] scatter_dim 0 : tensor<8x4xf32> -> tensor<2x4xf32>
  %g = dtensor.all_gather %s on @tp mesh_dims [0] gather_dim 1 : tensor<2x4xf32> -> tensor<2x16xf32>
  %s2 = dtensor.reduce_scatter sum %q on @m mesh_dims [0] scatter_dim 1 : tensor<12x6xf32> -> tensor<12x3xf32>
  %g2 = dtensor.all_gather %s2 on @m mesh_dims [1] gather_dim 1 : tensor<12x3xf32> -> tensor<12x9xf32>
  %s3 = dtensor.reduce_scatter sum %u on @tp mesh_dims [0] scatter_dim 0 : tensor<10x4xf32> -> tensor<?x4xf32>
  %g3 = dtensor.all_gather %s3 on @tp mesh_dims [0] gather_dim 0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %g, %g2, %g3 : tensor<2x16xf32>, tensor<12x9xf32>, tensor<?x4xf32>
}

//===----------------------------------------------------------------------===//
// Unused pairs, async collectives
//===----------------------------------------------------------------------===//

// A variadic collective keeps only the pairs whose result is used.
// CHECK-LABEL: func.func @unused_pairs
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<8xf32>, %[[Z:.*]]: tensor<2xf32>)
// CHECK-NEXT: %[[R:.*]]:2 = dtensor.all_reduce sum %[[X]], %[[Z]] on @tp mesh_dims [0] : tensor<4xf32>, tensor<2xf32>
// CHECK-NEXT: return %[[R]]#1, %[[R]]#0
func.func @unused_pairs(%x: tensor<4xf32>, %y: tensor<8xf32>, %z: tensor<2xf32>) -> (tensor<2xf32>, tensor<4xf32>) {
  %r:3 = dtensor.all_reduce sum %x, %y, %z on @tp mesh_dims [0] : tensor<4xf32>, tensor<8xf32>, tensor<2xf32>
  %g:2 = dtensor.all_gather %x, %y on @tp mesh_dims [0] gather_dim 0 : tensor<4xf32>, tensor<8xf32> -> tensor<16xf32>, tensor<32xf32>
  return %r#2, %r#0 : tensor<2xf32>, tensor<4xf32>
}

// A collective already issued by a dtensor.start is left alone.
// CHECK-LABEL: func.func @async_untouched
// CHECK-NEXT: dtensor.chunk
// CHECK-NEXT: dtensor.start
// CHECK-NEXT: dtensor.all_gather
// CHECK-NEXT: dtensor.yield
// CHECK-NEXT: }
// CHECK-NEXT: dtensor.wait
func.func @async_untouched(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = dtensor.chunk %x on @tp mesh_dims [0] dim 1 : tensor<8x8xf32> -> tensor<8x2xf32>
  %f = dtensor.start {
    %g = dtensor.all_gather %c on @tp mesh_dims [0] gather_dim 1 : tensor<8x2xf32> -> tensor<8x8xf32>
    dtensor.yield %g : tensor<8x8xf32>
  } : !dtensor.future<tensor<8x8xf32>>
  %w = dtensor.wait %f : !dtensor.future<tensor<8x8xf32>>
  return %w : tensor<8x8xf32>
}

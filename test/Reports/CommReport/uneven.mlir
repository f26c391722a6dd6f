// Uneven shards appear as dynamic dims in local types. Where the op's other
// side has the static size N of the split dim, the largest chunk is
// ceil(N/n) and every message counts as that chunk (as if padded to it);
// otherwise the call's bytes are not statically known: `?` in its row, and
// the total counts the known calls and says how many it leaves out.
// RUN: dtensor-opt %s --dtensor-comm-report -o /dev/null | FileCheck %s --strict-whitespace --match-full-lines

dtensor.mesh @tp shape [4]
dtensor.mesh @m2 shape [2, 2]

// 10 rows over 4 ranks: chunks of 3, 3, 3, 1; the largest is ceil(10/4) = 3.
//   all_gather ?x64 -> 10x64 f32: 3 shards of 3x64 f32 (768 B) = 2304.
//   reduce_scatter 10x64 -> ?x64 f32: 3 chunks of 3x64 f32 = 2304.
//   all_to_all ?x64 -> 10x16 (split 1, concat 0): pieces of 3 rows (the
//     largest shard of the 10-row result) x 16 columns f32 = 192 B, 3 sent
//     = 576.
//   all_to_all 8x10 -> 32x? (split 1, concat 0): pieces of 8 rows x
//     ceil(10/4) = 3 columns f32 = 96 B, 3 sent = 288.
//   all_reduce of 10 f32: 2*3 chunks of ceil(10/4) = 3 elements = 72.
// Nested sharding: 10 rows over [0, 1] of a 2x2 mesh are 3, 2, 3, 2 rows,
// and the largest is again ceil(10/4) = 3: gathering ?x8 f32 into 10x8
// sends 3 shards of 3x8 f32 (96 B) = 288.
// CHECK:func @derived
// CHECK-NEXT:  module     collective      reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  <unnamed>  all_gather      -          @tp   [0]        4      1      2304
// CHECK-NEXT:  <unnamed>  reduce_scatter  sum        @tp   [0]        4      1      2304
// CHECK-NEXT:  <unnamed>  all_to_all      -          @tp   [0]        4      2      864
// CHECK-NEXT:  <unnamed>  all_reduce      sum        @tp   [0]        4      1      72
// CHECK-NEXT:  <unnamed>  all_gather      -          @m2   [0, 1]     4      1      288
// CHECK-NEXT:  total                                                         6      5832
// CHECK-EMPTY:
func.func @derived(%s: tensor<?x64xf32>, %p: tensor<10x64xf32>,
                   %t: tensor<8x10xf32>, %v: tensor<10xf32>,
                   %n: tensor<?x8xf32>) {
  %0 = dtensor.all_gather %s on @tp mesh_dims [0] gather_dim 0
      : tensor<?x64xf32> -> tensor<10x64xf32>
  %1 = dtensor.reduce_scatter sum %p on @tp mesh_dims [0] scatter_dim 0
      : tensor<10x64xf32> -> tensor<?x64xf32>
  %2 = dtensor.all_to_all %s on @tp mesh_dims [0] split_dim 1 concat_dim 0
      : tensor<?x64xf32> -> tensor<10x16xf32>
  %3 = dtensor.all_to_all %t on @tp mesh_dims [0] split_dim 1 concat_dim 0
      : tensor<8x10xf32> -> tensor<32x?xf32>
  %4 = dtensor.all_reduce sum %v on @tp mesh_dims [0] : tensor<10xf32>
  %5 = dtensor.all_gather %n on @m2 mesh_dims [0, 1] gather_dim 0
      : tensor<?x8xf32> -> tensor<10x8xf32>
  return
}

// Sizes no type states: an all_reduce or broadcast of a dynamic tensor, a
// gather whose both sides are dynamic, a gather with a dynamic dim other
// than the gathered one. A row is `?` when any of its calls is; the total
// adds up the two calls that are known: 3072 + 6144 = 9216.
// CHECK-NEXT:func @unknown
// CHECK-NEXT:  module     collective  reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  <unnamed>  all_reduce  sum        @tp   [0]        4      2      ?
// CHECK-NEXT:  <unnamed>  broadcast   -          @tp   [0]        4      1      ?
// CHECK-NEXT:  <unnamed>  all_gather  -          @tp   [0]        4      3      ?
// CHECK-NEXT:  total                                                     6      9216 + ? (4 calls of unknown size)
// CHECK-EMPTY:
func.func @unknown(%d: tensor<?x64xf32>, %k: tensor<2x?xf32>,
                   %f: tensor<8x64xf32>) {
  %0 = dtensor.all_reduce sum %d on @tp mesh_dims [0] : tensor<?x64xf32>
  // Known (3072 B), but its row is not.
  %1 = dtensor.all_reduce sum %f on @tp mesh_dims [0] : tensor<8x64xf32>
  %2 = dtensor.broadcast %d on @tp mesh_dims [0] root 1 : tensor<?x64xf32>
  %3 = dtensor.all_gather %d on @tp mesh_dims [0] gather_dim 0
      : tensor<?x64xf32> -> tensor<?x64xf32>
  %4 = dtensor.all_gather %k on @tp mesh_dims [0] gather_dim 0
      : tensor<2x?xf32> -> tensor<8x?xf32>
  // Known: 3 shards of 8x64 f32 (2048 B) = 6144 B.
  %5 = dtensor.all_gather %f on @tp mesh_dims [0] gather_dim 1
      : tensor<8x64xf32> -> tensor<8x256xf32>
  return
}

// With no call known, the total is only `?`.
// CHECK-NEXT:func @all_unknown
// CHECK-NEXT:  module     collective  reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  <unnamed>  broadcast   -          @tp   [0]        4      1      ?
// CHECK-NEXT:  total                                                     1      ? (1 call of unknown size)
// CHECK-EMPTY:
// CHECK-NOT:{{.}}
func.func @all_unknown(%d: tensor<?x64xf32>) {
  %0 = dtensor.broadcast %d on @tp mesh_dims [0] root 0 : tensor<?x64xf32>
  return
}

// Group sizes and bytes on a 2x4 mesh: a group over mesh_dims [0] has 2
// ranks, over [1] 4, over [0, 1] (or [1, 0]) all 8. Every number below is
// worked out by hand from the ring model of docs/comm-report.md.
// RUN: dtensor-opt %s --dtensor-comm-report -o /dev/null | FileCheck %s --strict-whitespace --match-full-lines

dtensor.mesh @m shape [2, 4] names ["dp", "tp"]
dtensor.mesh @line shape [1, 4]

// all_reduce of 8x64 f32 = 512 elements; n ranks send 2(n-1) chunks of
// 512/n elements:
//   [1], n=4:    2*3 * 128 * 4 B = 3072
//   [0], n=2:    2*1 * 256 * 4 B = 2048
//   [0, 1], n=8: 2*7 *  64 * 4 B = 3584
// all_gather of 2x64 bf16 shards (256 B) over [0, 1]: 7 * 256 = 1792.
// reduce_scatter of 8x64 f32 over [0] into 4x64 (1024 B): 1 * 1024 = 1024.
// all_to_all 2x64 f32 over [1], split 1: pieces of 2x16 f32 (128 B), 3 sent
// = 384 (= (n-1)/n of the 512-byte input).
// broadcast of 8x64 i8 over [1, 0]: the whole 512 B once. [1, 0] orders
// the group differently from [0, 1], so it is a row of its own.
// A second all_reduce over [1] joins the first row: 2 calls, 6144 bytes.
// Total: 6144 + 2048 + 3584 + 1792 + 1024 + 384 + 512 + 512 = 16000.
// CHECK:func @collectives
// CHECK-NEXT:  module     collective      reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  <unnamed>  all_reduce      sum        @m    [1]        4      2      6144
// CHECK-NEXT:  <unnamed>  all_reduce      avg        @m    [0]        2      1      2048
// CHECK-NEXT:  <unnamed>  all_reduce      max        @m    [0, 1]     8      1      3584
// CHECK-NEXT:  <unnamed>  all_gather      -          @m    [0, 1]     8      1      1792
// CHECK-NEXT:  <unnamed>  reduce_scatter  sum        @m    [0]        2      1      1024
// CHECK-NEXT:  <unnamed>  all_to_all      -          @m    [1]        4      1      384
// CHECK-NEXT:  <unnamed>  broadcast       -          @m    [1, 0]     8      1      512
// CHECK-NEXT:  <unnamed>  broadcast       -          @m    [0, 1]     8      1      512
// CHECK-NEXT:  total                                                         9      16000
// CHECK-EMPTY:
func.func @collectives(%p: tensor<8x64xf32>, %s: tensor<2x64xbf16>,
                       %t: tensor<2x64xf32>, %r: tensor<8x64xi8>) {
  %0 = dtensor.all_reduce sum %p on @m mesh_dims [1] : tensor<8x64xf32>
  %1 = dtensor.all_reduce avg %p on @m mesh_dims [0] : tensor<8x64xf32>
  %2 = dtensor.all_reduce max %p on @m mesh_dims [0, 1] : tensor<8x64xf32>
  %3 = dtensor.all_gather %s on @m mesh_dims [0, 1] gather_dim 0
      : tensor<2x64xbf16> -> tensor<16x64xbf16>
  %4 = dtensor.reduce_scatter sum %p on @m mesh_dims [0] scatter_dim 0
      : tensor<8x64xf32> -> tensor<4x64xf32>
  %5 = dtensor.all_to_all %t on @m mesh_dims [1] split_dim 1 concat_dim 0
      : tensor<2x64xf32> -> tensor<8x16xf32>
  %6 = dtensor.broadcast %r on @m mesh_dims [1, 0] root 0 : tensor<8x64xi8>
  %7 = dtensor.broadcast %r on @m mesh_dims [0, 1] root 3 : tensor<8x64xi8>
  %8 = dtensor.all_reduce sum %0 on @m mesh_dims [1] : tensor<8x64xf32>
  // Not collectives: no row.
  %9 = dtensor.chunk %p on @m mesh_dims [0, 1] dim 0
      : tensor<8x64xf32> -> tensor<1x64xf32>
  %i, %j = dtensor.mesh_coord on @m mesh_dims [0, 1] : index, index
  return
}

// Element sizes are bit widths rounded up to bytes (i1 and i3 take one byte,
// complex<f32> eight). Each broadcast over [1] (4 ranks) sends its tensor
// once: 16 x 1 B = 16, 16 x 8 B = 128, 16 x 8 B = 128, 16 x 1 B = 16. index
// has no fixed width, so that call's bytes are not known.
// A group of one rank (mesh dim 0 of @line has size 1) sends nothing.
// CHECK-NEXT:func @element_sizes
// CHECK-NEXT:  module     collective  reduction  mesh   mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  <unnamed>  broadcast   -          @line  [1]        4      5      ?
// CHECK-NEXT:  <unnamed>  all_reduce  sum        @line  [0]        1      1      0
// CHECK-NEXT:  total                                                      6      288 + ? (1 call of unknown size)
// CHECK-EMPTY:
// CHECK-NOT:{{.}}
func.func @element_sizes(%a: tensor<16xi1>, %b: tensor<16xcomplex<f32>>,
                         %c: tensor<16xf64>, %d: tensor<16xi3>,
                         %e: tensor<16xindex>, %f: tensor<8x64xf32>) {
  %0 = dtensor.broadcast %a on @line mesh_dims [1] root 0 : tensor<16xi1>
  %1 = dtensor.broadcast %b on @line mesh_dims [1] root 0 : tensor<16xcomplex<f32>>
  %2 = dtensor.broadcast %c on @line mesh_dims [1] root 0 : tensor<16xf64>
  %3 = dtensor.broadcast %d on @line mesh_dims [1] root 0 : tensor<16xi3>
  %4 = dtensor.broadcast %e on @line mesh_dims [1] root 0 : tensor<16xindex>
  %5 = dtensor.all_reduce sum %f on @line mesh_dims [0] : tensor<8x64xf32>
  return
}

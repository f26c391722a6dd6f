// The MLP with sequence parallelism: activations enter and leave sharded on
// the sequence dim, so the all_reduce becomes an all_gather before fc1 and a
// reduce_scatter after fc2, together sending what the all_reduce sent.
// RUN: dtensor-opt %s --dtensor-comm-report -o /dev/null | FileCheck %s --strict-whitespace --match-full-lines

dtensor.mesh @tp shape [4] names ["tp"]

// all_gather: 3 shards of 2x64 f32 (512 bytes each) = 1536 bytes.
// reduce_scatter: 3 chunks of 8/4 = 2 rows, 512 bytes each = 1536 bytes
// (= (n-1)/n * 2048 bytes of input).
// CHECK:func @mlp_sp_rank
// CHECK-NEXT:  module            collective      reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  layers.0.mlp.fc1  all_gather      -          @tp   [0]        4      1      1536
// CHECK-NEXT:  layers.0.mlp.fc2  reduce_scatter  sum        @tp   [0]        4      1      1536
// CHECK-NEXT:  total                                                                2      3072
// CHECK-EMPTY:
// CHECK-NOT:{{.}}
func.func @mlp_sp_rank(%x: tensor<2x64xf32>, %w1: tensor<64x64xf32>,
                       %w2: tensor<64x64xf32>) -> tensor<2x64xf32> {
  %zero = arith.constant 0.0 : f32
  %g = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0
      : tensor<2x64xf32> -> tensor<8x64xf32> loc("layers.0.mlp.fc1")
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %h = linalg.matmul ins(%g, %w1 : tensor<8x64xf32>, tensor<64x64xf32>)
                     outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32> loc("layers.0.mlp.fc1")
  %a = linalg.max ins(%h, %z : tensor<8x64xf32>, tensor<8x64xf32>)
                  outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32> loc("layers.0.mlp.act")
  %p = linalg.matmul ins(%a, %w2 : tensor<8x64xf32>, tensor<64x64xf32>)
                     outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32> loc("layers.0.mlp.fc2")
  %s = dtensor.reduce_scatter sum %p on @tp mesh_dims [0] scatter_dim 0
      : tensor<8x64xf32> -> tensor<2x64xf32> loc("layers.0.mlp.fc2")
  return %s : tensor<2x64xf32>
}

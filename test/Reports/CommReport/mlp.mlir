// A Megatron MLP at the local level: fc1 column-parallel, fc2 row-parallel.
// The only communication is one all_reduce of fc2's partial sums.
// RUN: dtensor-opt %s --dtensor-comm-report -o /dev/null | FileCheck %s --strict-whitespace --match-full-lines

dtensor.mesh @tp shape [4] names ["tp"]

// 8x64 f32 is 512 elements; a ring all_reduce over 4 ranks sends
// 2*(4-1) = 6 chunks of 512/4 = 128 elements: 6*128*4 = 3072 bytes
// (= 2*(n-1)/n * 2048 bytes).
// CHECK:func @mlp_rank
// CHECK-NEXT:  module            collective  reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  layers.0.mlp.fc2  all_reduce  sum        @tp   [0]        4      1      3072
// CHECK-NEXT:  total                                                            1      3072
// CHECK-EMPTY:
// CHECK-NOT:{{.}}
func.func @mlp_rank(%x: tensor<8x64xf32>, %w1: tensor<64x64xf32>,
                    %w2: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x64xf32>)
                     outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32> loc("layers.0.mlp.fc1")
  %a = linalg.max ins(%h, %z : tensor<8x64xf32>, tensor<8x64xf32>)
                  outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32> loc("layers.0.mlp.act")
  %p = linalg.matmul ins(%a, %w2 : tensor<8x64xf32>, tensor<64x64xf32>)
                     outs(%z : tensor<8x64xf32>) -> tensor<8x64xf32> loc("layers.0.mlp.fc2")
  %y = dtensor.all_reduce sum %p on @tp mesh_dims [0] : tensor<8x64xf32> loc("layers.0.mlp.fc2")
  return %y : tensor<8x64xf32>
}

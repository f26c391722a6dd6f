// The per-rank (local) form of examples/mlp_global.mlir on 2 ranks, written
// by hand: shard shapes instead of global shapes and one explicit collective,
// the all_reduce that turns fc2's partial sums into the replicated output.

dtensor.mesh @tp shape [2] names ["tp"]

func.func @mlp(%x: tensor<8x64xf32>, %w1: tensor<64x128xf32>,
               %w2: tensor<128x64xf32>) -> tensor<8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x128xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x128xf32>)
                     outs(%acc1 : tensor<8x128xf32>) -> tensor<8x128xf32>
  %a = math.tanh %h : tensor<8x128xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %partial = linalg.matmul ins(%a, %w2 : tensor<8x128xf32>, tensor<128x64xf32>)
                           outs(%acc2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = dtensor.all_reduce sum %partial on @tp mesh_dims [0] : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

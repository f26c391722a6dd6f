// Megatron-style MLP in the global view, on a 1-D tensor-parallel mesh of 2:
// fc1 is column-parallel (weight sharded on its output dim), fc2 is
// row-parallel (weight sharded on its input dim). The result of fc2 is a
// partial sum on each rank until it is redistributed to Replicate.

dtensor.mesh @tp shape [2] names ["tp"]

func.func @mlp(
    %x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>, dtensor.name = "x"},
    %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>, dtensor.name = "fc1.weight", dtensor.weight},
    %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>, dtensor.name = "fc2.weight", dtensor.weight})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x256xf32>)
                     outs(%acc1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %hs = dtensor.distribute %h to <@tp, [shard<1>]> : tensor<8x256xf32>
  %a = math.tanh %hs : tensor<8x256xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<8x256xf32>, tensor<256x64xf32>)
                     outs(%acc2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %yp = dtensor.distribute %y to <@tp, [partial<sum>]> : tensor<8x64xf32>
  %r = dtensor.redistribute %yp from <@tp, [partial<sum>]> to <@tp, [replicate]> : tensor<8x64xf32>
  // Already replicated: this redistribute folds away.
  %out = dtensor.redistribute %r from <@tp, [replicate]> to <@tp, [replicate]> : tensor<8x64xf32>
  return %out : tensor<8x64xf32>
}

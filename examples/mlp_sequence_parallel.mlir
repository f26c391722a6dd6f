// Sequence-parallel MLP on a 1-D mesh: activations enter and leave sharded
// on the sequence dim; the elementwise scale runs on the shards, one
// all_gather feeds the column-parallel fc1 and one reduce_scatter leaves the
// row-parallel fc2.

dtensor.mesh @tp shape [2] names ["tp"]

func.func @main(%x: tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>, dtensor.name = "x"},
               %g: tensor<64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>, dtensor.name = "norm.weight", dtensor.weight},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>, dtensor.name = "fc1.weight", dtensor.weight},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>, dtensor.name = "fc2.weight", dtensor.weight})
    -> (tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %zero = arith.constant 0.0 : f32
  %eg = tensor.empty() : tensor<16x64xf32>
  %gb = linalg.broadcast ins(%g : tensor<64xf32>) outs(%eg : tensor<16x64xf32>) dimensions = [0]
  %n = arith.mulf %x, %gb : tensor<16x64xf32>
  %e1 = tensor.empty() : tensor<16x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%n, %w1 : tensor<16x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %a = math.tanh %h : tensor<16x256xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

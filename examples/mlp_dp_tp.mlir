// dp x tp on a 2-D mesh: the batch is split over dp, the MLP is tensor
// parallel over tp; one all_reduce over the tp mesh dim.

dtensor.mesh @m shape [2, 2] names ["dp", "tp"]

func.func @main(%x: tensor<8x16x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>, dtensor.name = "x"},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, shard<1>]>, dtensor.name = "fc1.weight", dtensor.weight},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, shard<0>]>, dtensor.name = "fc2.weight", dtensor.weight})
    -> (tensor<8x16x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<8x16x64xf32> into tensor<128x64xf32>
  %e1 = tensor.empty() : tensor<128x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128x256xf32>) -> tensor<128x256xf32>
  %h = linalg.matmul ins(%x2, %w1 : tensor<128x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<128x256xf32>) -> tensor<128x256xf32>
  %a = math.tanh %h : tensor<128x256xf32>
  %e2 = tensor.empty() : tensor<128x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<128x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [8, 16, 64] : tensor<128x64xf32> into tensor<8x16x64xf32>
  return %y3 : tensor<8x16x64xf32>
}

// A product on a 2 x 2 dp x tp mesh whose contraction dim (4096) arrives
// split over both mesh dims, with a replicated result
// (test/Tools/dtensor-compile/topology.test), and a sum held as partial
// over both mesh dims that is returned replicated.
dtensor.mesh @m shape [2, 2] names ["dp", "tp"]

func.func @main(%a: tensor<64x4096xf32> {dtensor.layout = #dtensor.layout<@m, [shard<1>, shard<1>]>, dtensor.name = "a"},
                %w: tensor<4096x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, shard<0>]>, dtensor.name = "w"},
                %s: tensor<4096xf32> {dtensor.layout = #dtensor.layout<@m, [partial<sum>, partial<sum>]>, dtensor.name = "s"})
    -> (tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, replicate]>},
        tensor<4096xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<64x4096xf32>, tensor<4096x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y, %s : tensor<64x64xf32>, tensor<4096xf32>
}

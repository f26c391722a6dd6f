// The program of local-shards.test: y and r are x redistributed, q is p.
dtensor.mesh @mesh shape [2]
func.func @main(
    %x: tensor<5x3xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>]>, dtensor.name = "x"},
    %p: tensor<5x3xf32> {dtensor.layout = #dtensor.layout<@mesh, [partial<sum>]>, dtensor.name = "p"})
  -> (tensor<5x3xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<1>]>, dtensor.name = "y"},
      tensor<5x3xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate]>, dtensor.name = "r"},
      tensor<5x3xf32> {dtensor.layout = #dtensor.layout<@mesh, [partial<sum>]>, dtensor.name = "q"}) {
  return %x, %x, %p : tensor<5x3xf32>, tensor<5x3xf32>, tensor<5x3xf32>
}

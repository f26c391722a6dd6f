// A weight two entries take must be the same tensor in both.
dtensor.mesh @tp shape [2]
func.func @main(%w: tensor<4x6xf32> {dtensor.name = "w", dtensor.weight, dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) -> tensor<4x6xf32> {
  return %w : tensor<4x6xf32>
}
func.func @other(%w: tensor<4x6xf32> {dtensor.name = "w", dtensor.weight, dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<4x6xf32> {
  return %w : tensor<4x6xf32>
}

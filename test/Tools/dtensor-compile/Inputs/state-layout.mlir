// The update of a state must keep its layout.
dtensor.mesh @tp shape [2]
func.func @main(%s: tensor<4x6xf32> {dtensor.name = "total", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<4x6xf32> {dtensor.updates = 0 : i64, dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  return %s : tensor<4x6xf32>
}

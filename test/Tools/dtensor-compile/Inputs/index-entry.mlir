// Every public function with a body is an entry of the artifact: @other's
// index tensors are not a type the runtime passes.
dtensor.mesh @tp shape [2]

func.func @main(%x: tensor<2x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}

func.func @other(%i: tensor<4xindex>) -> tensor<4xindex> {
  return %i : tensor<4xindex>
}

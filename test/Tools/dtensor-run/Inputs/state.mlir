// Two entries sharing a weight and a state tensor sharded over its columns
// (7 columns: uneven on 2 and 3 ranks): `accumulate` adds its input times
// the weight into the state and returns the sum, `read` returns the state.
dtensor.mesh @tp shape [2]
func.func @accumulate(
    %x: tensor<4x7xf32> {dtensor.name = "x", dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %w: tensor<4x7xf32> {dtensor.name = "w", dtensor.weight, dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %s: tensor<4x7xf32> {dtensor.name = "total", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<4x7xf32> {dtensor.updates = 2 : i64, dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
        tensor<4x7xf32> {dtensor.name = "sum", dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %e = tensor.empty() : tensor<4x7xf32>
  %p = linalg.mul ins(%x, %w : tensor<4x7xf32>, tensor<4x7xf32>) outs(%e : tensor<4x7xf32>) -> tensor<4x7xf32>
  %r = linalg.add ins(%p, %s : tensor<4x7xf32>, tensor<4x7xf32>) outs(%e : tensor<4x7xf32>) -> tensor<4x7xf32>
  return %r, %r : tensor<4x7xf32>, tensor<4x7xf32>
}
func.func @read(
    %w: tensor<4x7xf32> {dtensor.name = "w", dtensor.weight, dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %s: tensor<4x7xf32> {dtensor.name = "total", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<4x7xf32> {dtensor.name = "value", dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  return %s : tensor<4x7xf32>
}

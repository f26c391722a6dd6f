// A KV cache as state: `write` writes one new row per sequence into the
// cache (sharded on its heads, 3 heads: uneven on 2 ranks) at the given
// slots and positions, in place; `read` returns the cache.
dtensor.mesh @tp shape [2]
func.func @write(
    %v: tensor<2x1x3x4xf32> {dtensor.name = "values", dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %s: tensor<2xi64> {dtensor.name = "slots"},
    %p: tensor<2xi64> {dtensor.name = "positions"},
    %c: tensor<4x8x3x4xf32> {dtensor.name = "cache", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>})
    -> (tensor<4x8x3x4xf32> {dtensor.updates = 3 : i64, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>}) {
  %r = dtensor.write_rows %v into %c at slots(%s) positions(%p)
      : tensor<2x1x3x4xf32> into tensor<4x8x3x4xf32>, tensor<2xi64>, tensor<2xi64>
  return %r : tensor<4x8x3x4xf32>
}
func.func @read(
    %c: tensor<4x8x3x4xf32> {dtensor.name = "cache", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>})
    -> (tensor<4x8x3x4xf32> {dtensor.name = "whole", dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  return %c : tensor<4x8x3x4xf32>
}

// Row writes for the manifest's row_writes (row-writes.test): @step writes
// into two state caches and one input; only writes whose cache is a state
// (directly or through earlier writes) and whose slots and positions are
// the entry's replicated inputs are recorded.
dtensor.mesh @tp shape [2]
func.func @step(
    %values: tensor<2x2x3x4xf32> {dtensor.name = "values", dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %s: tensor<2xi32> {dtensor.name = "slots"},
    %p: tensor<2xi64> {dtensor.name = "positions"},
    %q: tensor<2xi64> {dtensor.name = "next_positions"},
    %k: tensor<4x8x3x4xf32> {dtensor.name = "k_cache", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %v: tensor<4x8x3x4xf32> {dtensor.name = "v_cache", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %scratch: tensor<4x8x3x4xf32> {dtensor.name = "scratch"})
    -> (tensor<4x8x3x4xf32> {dtensor.updates = 4 : i64, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
        tensor<4x8x3x4xf32> {dtensor.updates = 5 : i64, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
        tensor<4x8x3x4xf32> {dtensor.name = "scratch_out"}) {
  // Recorded: k_cache at (slots, positions), 2 rows.
  %k1 = dtensor.write_rows %values into %k at slots(%s) positions(%p)
      : tensor<2x2x3x4xf32> into tensor<4x8x3x4xf32>, tensor<2xi32>, tensor<2xi64>
  // Through the first write: the same state, other positions; recorded.
  %k2 = dtensor.write_rows %values into %k1 at slots(%s) positions(%q)
      : tensor<2x2x3x4xf32> into tensor<4x8x3x4xf32>, tensor<2xi32>, tensor<2xi64>
  // The same write again: recorded once.
  %k3 = dtensor.write_rows %values into %k2 at slots(%s) positions(%p)
      : tensor<2x2x3x4xf32> into tensor<4x8x3x4xf32>, tensor<2xi32>, tensor<2xi64>
  // Positions computed in the step: not an input, not recorded.
  %one = arith.constant dense<1> : tensor<2xi64>
  %p1 = arith.addi %p, %one : tensor<2xi64>
  %v1 = dtensor.write_rows %values into %v at slots(%s) positions(%p1)
      : tensor<2x2x3x4xf32> into tensor<4x8x3x4xf32>, tensor<2xi32>, tensor<2xi64>
  // A cache that is an input, not state: not recorded.
  %o = dtensor.write_rows %values into %scratch at slots(%s) positions(%p)
      : tensor<2x2x3x4xf32> into tensor<4x8x3x4xf32>, tensor<2xi32>, tensor<2xi64>
  return %k3, %v1, %o : tensor<4x8x3x4xf32>, tensor<4x8x3x4xf32>, tensor<4x8x3x4xf32>
}
// Slots sharded over the mesh reach the write through a collective: not
// recorded.
func.func @sharded(
    %values: tensor<2x1x3x4xf32> {dtensor.name = "values", dtensor.layout = #dtensor.layout<@tp, [shard<2>]>},
    %s: tensor<2xi64> {dtensor.name = "slots", dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %p: tensor<2xi64> {dtensor.name = "positions"},
    %v: tensor<4x8x3x4xf32> {dtensor.name = "v_cache", dtensor.state, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>})
    -> (tensor<4x8x3x4xf32> {dtensor.updates = 3 : i64, dtensor.layout = #dtensor.layout<@tp, [shard<2>]>}) {
  %r = dtensor.write_rows %values into %v at slots(%s) positions(%p)
      : tensor<2x1x3x4xf32> into tensor<4x8x3x4xf32>, tensor<2xi64>, tensor<2xi64>
  return %r : tensor<4x8x3x4xf32>
}

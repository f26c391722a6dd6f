// A causal dtensor.attention over queries held head-tail (two pieces per
// rank) is refused at partitioning, at the op: its positions would need one
// offset per piece.
// RUN: not dtensor-opt %s --dtensor-propagate --dtensor-partition 2>&1 | FileCheck %s
// CHECK: attention-head-tail.mlir:[[# @LINE + 10]]:8: error: 'dtensor.attention' op is causal over queries held in two pieces (head-tail); only one piece per rank is supported

dtensor.mesh @cp shape [2] names ["cp"]

func.func @main(
    %q: tensor<2x4x7x16xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2, head_tail>]>, dtensor.name = "q"},
    %k: tensor<2x4x7x16xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "k"},
    %v: tensor<2x4x7x8xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "v"})
    -> (tensor<2x4x7x8xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2, head_tail>]>, dtensor.name = "out"}) {
  %init = tensor.empty() : tensor<2x4x7x8xf32>
  %o = dtensor.attention %q, %k, %v into %init {causal, scale = 0.25 : f64,
      query_dims = array<i64: 0, 1, 2, 3>, key_dims = array<i64: 0, 1, 2, 3>,
      value_dims = array<i64: 0, 1, 2, 3>, result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x8xf32> into tensor<2x4x7x8xf32> -> tensor<2x4x7x8xf32>
  return %o : tensor<2x4x7x8xf32>
}


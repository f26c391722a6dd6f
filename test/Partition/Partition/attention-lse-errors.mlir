// A causal dtensor.attention that gives its log-sum-exp is refused at
// partitioning when its queries are sharded: positions are given only to an
// attention without one (the ring's steps are made after partitioning).
// RUN: not dtensor-opt %s --dtensor-propagate --dtensor-partition 2>&1 | FileCheck %s
// CHECK: attention-lse-errors.mlir:[[# @LINE + 11]]:14: error: 'dtensor.attention' op is causal over sharded queries and gives its log-sum-exp; partitioning gives positions only to an attention without one

dtensor.mesh @cp shape [2] names ["cp"]

func.func @main(
    %q: tensor<2x4x8x16xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2>]>, dtensor.name = "q"},
    %k: tensor<2x4x8x16xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "k"},
    %v: tensor<2x4x8x8xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>, dtensor.name = "v"})
    -> (tensor<2x4x8x8xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<2>]>, dtensor.name = "out"}) {
  %init = tensor.empty() : tensor<2x4x8x8xf32>
  %lse0 = tensor.empty() : tensor<2x4x8xf32>
  %o, %lse = dtensor.attention %q, %k, %v into %init log_sum_exp(%lse0 : tensor<2x4x8xf32>) {causal, scale = 0.25 : f64,
      query_dims = array<i64: 0, 1, 2, 3>, key_dims = array<i64: 0, 1, 2, 3>,
      value_dims = array<i64: 0, 1, 2, 3>, result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32> into tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>, tensor<2x4x8xf32>
  return %o : tensor<2x4x8x8xf32>
}

// Partitioning a dtensor.custom_call: the kernel runs on local pieces, so
// the call only gets per-rank types (dynamic where shards are uneven, with
// the init made at the rank's own size); a Partial result is reduced by the
// redistribute that follows.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition | FileCheck %s

// CHECK-LABEL: func.func @columns(
// CHECK-SAME: tensor<8x32xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x32xf32>
// CHECK: dtensor.custom_call "swiglu" symbol "example_swiglu"(%arg0, %arg1) into %[[E]]{{.*}}: (tensor<8x32xf32>, tensor<8x32xf32>) into tensor<8x32xf32>
// CHECK-NOT: dtensor.all_

// CHECK-LABEL: func.func @uneven(
// CHECK-SAME: tensor<?x64xf32>
// CHECK: %[[C:.*]] = dtensor.mesh_coord on @tp3
// CHECK: %[[N:.*]] = arith.subi
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x64xf32>
// CHECK: dtensor.custom_call "swiglu" symbol "example_swiglu"(%arg0, %arg1) into %[[E]]{{.*}}: (tensor<?x64xf32>, tensor<?x64xf32>) into tensor<?x64xf32>

// CHECK-LABEL: func.func @partial(
// CHECK: %[[Y:.*]] = dtensor.custom_call "mm"{{.*}}: (tensor<8x32xf32>, tensor<32x16xf32>) into tensor<8x16xf32>
// CHECK: dtensor.all_reduce sum %[[Y]] on @tp mesh_dims [0] : tensor<8x16xf32>

dtensor.mesh @tp shape [2] names ["tp"]
dtensor.mesh @tp3 shape [3] names ["tp"]

// Column shards in, column shards out: the kernel runs on [8, 32] pieces.
func.func @columns(%g: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                   %u: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>],
                  [#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.shard<1>]]
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// Uneven: 8 rows over 3 ranks (3, 3, 2): the local row count is dynamic and
// the init is made with the rank's own size.
func.func @uneven(%g: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<0>]>},
                  %u: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<0>]>}) {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>]]
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// A Partial result is reduced where a replicated value is wanted.
func.func @partial(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                   %w: tensor<64x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %e = tensor.empty() : tensor<8x16xf32>
  %y = dtensor.custom_call "mm" symbol "my_matmul" (%x, %w) into %e
      strategies [[#dtensor.replicate, #dtensor.replicate, #dtensor.replicate],
                  [#dtensor.partial<sum>, #dtensor.shard<1>, #dtensor.shard<0>]]
      : (tensor<8x64xf32>, tensor<64x16xf32>) into tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// Bucketing end to end: three weights sharded over "dp" are gathered before
// use (FSDP style). Partitioning gives three all_gathers; fusion issues them
// as one call, started before any compute and waited for at the first
// matmul. The comm report counts 3 calls before fusion and 1 after, with
// the same bytes.
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition --dtensor-fuse-collectives | FileCheck %s
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition --dtensor-comm-report -o /dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-partition --dtensor-fuse-collectives --dtensor-comm-report -o /dev/null | FileCheck %s --check-prefix=AFTER

// CHECK-LABEL: func.func @layer
// CHECK-NEXT:  %[[F:.*]]:3 = dtensor.start {
// CHECK-NEXT:    %[[G:.*]]:3 = dtensor.all_gather %arg1, %arg2, %arg3 on @dp mesh_dims [0] gather_dim 0 : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
// CHECK-NEXT:    dtensor.yield %[[G]]#0, %[[G]]#1, %[[G]]#2
// CHECK:       %[[W:.*]]:3 = dtensor.wait %[[F]]#0, %[[F]]#1, %[[F]]#2
// CHECK-NEXT:  linalg.matmul ins(%arg0, %[[W]]#0 : tensor<2x64xf32>, tensor<64x64xf32>)
// CHECK-NOT:   dtensor.all_gather

// Each rank sends its 16x64 f32 shard (4096 bytes) to 3 others per weight.
// BEFORE:      <unnamed> all_gather - @dp [0] 4 3 36864
// BEFORE-NEXT: total 3 36864
// AFTER:       <unnamed> all_gather - @dp [0] 4 1 36864
// AFTER-NEXT:  total 1 36864

dtensor.mesh @dp shape [4] names ["dp"]

func.func @layer(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                 %w1: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                 %w2: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                 %w3: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>}) {
  %zero = arith.constant 0.0 : f32
  %g1 = dtensor.redistribute %w1 from <@dp, [shard<0>]> to <@dp, [replicate]> : tensor<64x64xf32>
  %g2 = dtensor.redistribute %w2 from <@dp, [shard<0>]> to <@dp, [replicate]> : tensor<64x64xf32>
  %g3 = dtensor.redistribute %w3 from <@dp, [shard<0>]> to <@dp, [replicate]> : tensor<64x64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %h1 = linalg.matmul ins(%x, %g1 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  %a1 = math.tanh %h1 : tensor<8x64xf32>
  %h2 = linalg.matmul ins(%a1, %g2 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  %a2 = math.tanh %h2 : tensor<8x64xf32>
  %h3 = linalg.matmul ins(%a2, %g3 : tensor<8x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %h3 : tensor<8x64xf32>
}

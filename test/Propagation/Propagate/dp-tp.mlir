// A 2-D data x tensor parallel mesh: the batch stays sharded on "dp" through
// the flatten, both matmuls and the unflatten; "tp" does Megatron TP with one
// all-reduce over the tp mesh dim only.
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s

dtensor.mesh @m shape [2, 2] names ["dp", "tp"]

func.func @mlp_dp_tp(%x: tensor<8x16x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@m, [replicate, shard<0>]>})
    -> (tensor<8x16x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<8x16x64xf32> into tensor<128x64xf32>
  %e1 = tensor.empty() : tensor<128x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128x256xf32>) -> tensor<128x256xf32>
  %h = linalg.matmul ins(%x2, %w1 : tensor<128x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<128x256xf32>) -> tensor<128x256xf32>
  %a = math.tanh %h : tensor<128x256xf32>
  %e2 = tensor.empty() : tensor<128x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<128x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [8, 16, 64] : tensor<128x64xf32> into tensor<8x16x64xf32>
  return %y3 : tensor<8x16x64xf32>
}

// CHECK-LABEL: func.func @mlp_dp_tp
// CHECK-NOT:   dtensor.redistribute
// CHECK:       tensor.collapse_shape {{.*}} {dtensor.layouts = [#dtensor.layout<@m, [shard<0>, replicate]>]}
// CHECK:       linalg.matmul {dtensor.layouts = [#dtensor.layout<@m, [shard<0>, shard<1>]>]}
// CHECK:       math.tanh {{.*}} {dtensor.layouts = [#dtensor.layout<@m, [shard<0>, shard<1>]>]}
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@m, [shard<0>, partial<sum>]>]}
// CHECK-NEXT:  %[[R:.*]] = dtensor.redistribute %[[Y]] from <@m, [shard<0>, partial<sum>]> to <@m, [shard<0>, replicate]>
// CHECK-NOT:   dtensor.redistribute
// CHECK:       tensor.expand_shape %[[R]] {{.*}} {dtensor.layouts = [#dtensor.layout<@m, [shard<0>, replicate]>]}

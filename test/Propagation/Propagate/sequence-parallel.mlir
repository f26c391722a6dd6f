// Sequence parallelism around a Megatron MLP: the input arrives sharded on the
// sequence dim and the norm-like scaling runs there; it is gathered (S(0)->R)
// right before fc1, and fc2 partial sums are reduce-scattered (P->S(0)).
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

func.func @mlp_sp(%x: tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
               %g: tensor<64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %zero = arith.constant 0.0 : f32
  %eg = tensor.empty() : tensor<16x64xf32>
  %gb = linalg.broadcast ins(%g : tensor<64xf32>) outs(%eg : tensor<16x64xf32>) dimensions = [0]
  %n = arith.mulf %x, %gb : tensor<16x64xf32>
  %e1 = tensor.empty() : tensor<16x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%n, %w1 : tensor<16x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %a = math.tanh %h : tensor<16x256xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// CHECK-LABEL: func.func @mlp_sp
// CHECK-NOT:   dtensor.redistribute
// CHECK:       %[[N:.*]] = arith.mulf %arg0, {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK-NOT:   dtensor.redistribute
// CHECK:       %[[G:.*]] = dtensor.redistribute %[[N]] from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK-NEXT:  linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]} ins(%[[G]], %arg2
// CHECK-NOT:   dtensor.redistribute
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NEXT:  %[[S:.*]] = dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [shard<0>]>
// CHECK-NOT:   dtensor.redistribute
// CHECK:       return %[[S]]

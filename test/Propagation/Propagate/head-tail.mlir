// Head-tail shards (context parallelism's load balancing) propagate through
// per-token ops like plain shards: a [T, D] activation arrives head-tail on
// T, is normalised, projected (a replicated weight) and returned head-tail
// without a redistribute. Functions without head-tail claims never get a
// head-tail layout.
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s

dtensor.mesh @cp shape [2] names ["cp"]

func.func @tokens(%x: tensor<13x64xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<0, head_tail>]>},
                  %g: tensor<64xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>},
                  %w: tensor<64x32xf32> {dtensor.layout = #dtensor.layout<@cp, [replicate]>})
    -> (tensor<13x32xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<0, head_tail>]>}) {
  %zero = arith.constant 0.0 : f32
  %eg = tensor.empty() : tensor<13x64xf32>
  %gb = linalg.broadcast ins(%g : tensor<64xf32>) outs(%eg : tensor<13x64xf32>) dimensions = [0]
  %n = arith.mulf %x, %gb : tensor<13x64xf32>
  %e = tensor.empty() : tensor<13x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<13x32xf32>) -> tensor<13x32xf32>
  %y = linalg.matmul ins(%n, %w : tensor<13x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<13x32xf32>) -> tensor<13x32xf32>
  return %y : tensor<13x32xf32>
}

// CHECK-LABEL: func.func @tokens
// CHECK-NOT:   dtensor.redistribute
// CHECK:       arith.mulf %arg0, {{.*}} {dtensor.layouts = [#dtensor.layout<@cp, [shard<0, head_tail>]>]}
// CHECK-NOT:   dtensor.redistribute
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@cp, [shard<0, head_tail>]>]}
// CHECK-NEXT:  return %[[Y]]

func.func @plain(%x: tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@cp, [shard<0>]>}) -> tensor<16x64xf32> {
  %y = math.tanh %x : tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// CHECK-LABEL: func.func @plain
// CHECK-NOT:   head_tail
// CHECK:       return

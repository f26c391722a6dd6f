// Partial values pass through linear ops and are reduced only where a
// non-linear op needs them, or where reducing later moves fewer bytes.
// RUN: dtensor-opt %s --dtensor-propagate -split-input-file | FileCheck %s

dtensor.mesh @tp shape [2]

// Two row-parallel products, one scaled by a replicated value, added
// together: one all-reduce of the sum, not one per product. With nothing
// to gain, a partial is not carried further (the multiply after the sum).
// CHECK-LABEL: func.func @add_of_partials
// CHECK-NOT:   dtensor.redistribute
// CHECK:       %[[T:.*]] = arith.mulf {{.*}}, %arg4 {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NOT:   dtensor.redistribute
// CHECK:       %[[S:.*]] = arith.addf %[[T]], {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NEXT:  %[[R:.*]] = dtensor.redistribute %[[S]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// CHECK-NEXT:  arith.mulf %[[R]], %arg4 {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
// CHECK-NOT:   dtensor.redistribute
func.func @add_of_partials(
    %a: tensor<8x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %w: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %b: tensor<8x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %v: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %scale: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y1 = linalg.matmul ins(%a, %w : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y2 = linalg.matmul ins(%b, %v : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  %t = arith.mulf %y1, %scale : tensor<8x64xf32>
  %s = arith.addf %t, %y2 : tensor<8x64xf32>
  %u = arith.mulf %s, %scale : tensor<8x64xf32>
  return %u : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A transpose and a sum over 4096 columns are linear: reducing the 64
// sums moves far fewer bytes than reducing the 64x4096 product.
// CHECK-LABEL: func.func @reduce_late
// CHECK:       linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NOT:   dtensor.redistribute
// CHECK:       linalg.transpose {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NOT:   dtensor.redistribute
// CHECK:       %[[R:.*]] = linalg.reduce {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK:       dtensor.redistribute %[[R]] from <@tp, [partial<sum>]> to <@tp, [replicate]> : tensor<64xf32>
func.func @reduce_late(
    %a: tensor<4096x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %w: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x64xf32>) -> tensor<4096x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<4096x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<4096x64xf32>) -> tensor<4096x64xf32>
  %et = tensor.empty() : tensor<64x4096xf32>
  %yt = linalg.transpose ins(%y : tensor<4096x64xf32>) outs(%et : tensor<64x4096xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.reduce ins(%yt : tensor<64x4096xf32>) outs(%z : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc_: f32) {
      %s = arith.addf %in, %acc_ : f32
      linalg.yield %s : f32
    }
  return %r : tensor<64xf32>
}

// -----

dtensor.mesh @tp shape [2]

// Non-linear consumers need the reduced value: exp, a max, and a division
// by the partial value.
// CHECK-LABEL: func.func @nonlinear
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK:       %[[R:.*]] = dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// CHECK-NOT:   dtensor.redistribute
// CHECK:       math.exp %[[R]] {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
// CHECK:       arith.divf %arg2, %[[R]] {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
// CHECK:       linalg.reduce ins(%[[R]] {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
func.func @nonlinear(
    %a: tensor<8x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %w: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
    %c: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
        tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
        tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  %x = math.exp %y : tensor<8x64xf32>
  %d = arith.divf %c, %y : tensor<8x64xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.reduce ins(%y : tensor<8x64xf32>) outs(%m0 : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc_: f32) {
      %s = arith.maximumf %in, %acc_ : f32
      linalg.yield %s : f32
    }
  return %x, %d, %m : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8xf32>
}

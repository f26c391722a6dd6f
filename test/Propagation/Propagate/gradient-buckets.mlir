// The reductions of weights' gradients share one collective's fixed cost:
// collective fusion buckets them (they are independent of each other, as
// DDP's are), so propagation prices each of N gradients' collectives with
// 1/N of the call and latency rounds. The ops that give a weight its
// gradient are those --dtensor-differentiate marks (Autodiff/BackwardMark.h;
// here by hand). Two gradients dW = x^T dy of a batch sharded over dp:
// marked, each is reduced (P(sum) -> R); the same ops unmarked cost as much
// as separate collectives, and gathering x, dy1 and dy2 to compute them
// replicated is priced lower.
// RUN: dtensor-opt %s --dtensor-propagate="compute-gflops=1000" | FileCheck %s
// After partitioning and fusion the two reductions are one call.
// RUN: dtensor-opt %s --dtensor-distribute | FileCheck %s --check-prefix=FUSED

// CHECK-LABEL: func.func @marked
// CHECK-NOT:   from <@dp, [shard<0>]>
// CHECK:       dtensor.redistribute %{{.*}} from <@dp, [partial<sum>]> to <@dp, [replicate]> : tensor<32x32xf32>
// CHECK-NEXT:  dtensor.redistribute %{{.*}} from <@dp, [partial<sum>]> to <@dp, [replicate]> : tensor<32x32xf32>
// CHECK-LABEL: func.func @unmarked
// CHECK:       dtensor.redistribute %arg0 from <@dp, [shard<0>]> to <@dp, [replicate]>
// CHECK:       dtensor.redistribute %arg1 from <@dp, [shard<0>]> to <@dp, [replicate]>
// CHECK:       dtensor.redistribute %arg2 from <@dp, [shard<0>]> to <@dp, [replicate]>
// CHECK-NOT:   partial<sum>
// FUSED-LABEL: func.func @marked
// FUSED:       dtensor.all_reduce sum %{{.*}}, %{{.*}} on @dp mesh_dims [0] : tensor<32x32xf32>, tensor<32x32xf32>
// FUSED-LABEL: func.func @unmarked

#xt = affine_map<(i, o, b) -> (b, i)>
#dy = affine_map<(i, o, b) -> (b, o)>
#dw = affine_map<(i, o, b) -> (i, o)>
#all = affine_map<(i, o) -> (i, o)>
dtensor.mesh @dp shape [2] names ["dp"]

// Gradients of w1 and w2, as differentiation marks them.
func.func @marked(%x: tensor<8x32xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                  %dy1: tensor<8x32xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                  %dy2: tensor<8x32xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>})
    -> (tensor<32x32xf32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>},
        tensor<32x32xf32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %dw1 = linalg.generic {indexing_maps = [#xt, #dy, #dw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy1 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%acc : tensor<32x32xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<32x32xf32> loc(fused<{dtensor.backward = "w1"}>["step.mlir":1:1])
  %dw2 = linalg.generic {indexing_maps = [#xt, #dy, #dw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy2 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%acc : tensor<32x32xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<32x32xf32> loc(fused<{dtensor.backward = "w2"}>["step.mlir":2:1])
  return %dw1, %dw2 : tensor<32x32xf32>, tensor<32x32xf32>
}
// The same ops without the marks.
func.func @unmarked(%x: tensor<8x32xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                  %dy1: tensor<8x32xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>},
                  %dy2: tensor<8x32xf32> {dtensor.layout = #dtensor.layout<@dp, [shard<0>]>})
    -> (tensor<32x32xf32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>},
        tensor<32x32xf32> {dtensor.layout = #dtensor.layout<@dp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %dw1 = linalg.generic {indexing_maps = [#xt, #dy, #dw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy1 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%acc : tensor<32x32xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<32x32xf32>
  %dw2 = linalg.generic {indexing_maps = [#xt, #dy, #dw], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy2 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%acc : tensor<32x32xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
  } -> tensor<32x32xf32>
  return %dw1, %dw2 : tensor<32x32xf32>, tensor<32x32xf32>
}

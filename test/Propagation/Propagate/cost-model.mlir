// The cost model's parameters decide between plans. A row-parallel product
// of two small operands with a large output: at the default compute speed,
// gathering the operands and multiplying replicated is cheaper than an
// all-reduce of the output; when compute is slow, splitting the work pays
// for the all-reduce (P->R).
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s --check-prefix=DEFAULT
// RUN: dtensor-opt %s --dtensor-propagate="compute-gflops=0.01" | FileCheck %s --check-prefix=SLOW

dtensor.mesh @tp shape [2]

// DEFAULT-LABEL: func.func @outer
// DEFAULT:       dtensor.redistribute %arg0 from <@tp, [shard<1>]> to <@tp, [replicate]>
// DEFAULT:       dtensor.redistribute %arg1 from <@tp, [shard<0>]> to <@tp, [replicate]>
// DEFAULT:       linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
// DEFAULT-NOT:   dtensor.redistribute

// SLOW-LABEL: func.func @outer
// SLOW:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// SLOW-NEXT:  dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// SLOW-NOT:   dtensor.redistribute
func.func @outer(%a: tensor<64x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                 %w: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%a, %w : tensor<64x8xf32>, tensor<8x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// Megatron MLP: fc1 column-parallel, fc2 row-parallel. The only collective is
// one P->R at the end; everything in between stays sharded.
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s
// Propagating an already propagated function changes nothing.
// RUN: dtensor-opt %s --dtensor-propagate > %t.mlir
// RUN: dtensor-opt %t.mlir --dtensor-propagate | diff %t.mlir -
// RUN: dtensor-opt %s --dtensor-propagate --dtensor-print-layouts -o /dev/null | FileCheck %s --check-prefix=TABLE

dtensor.mesh @tp shape [2] names ["tp"]
dtensor.mesh @tp3 shape [3]

func.func @mlp(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %a = math.tanh %h : tensor<8x256xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// CHECK-LABEL: func.func @mlp
// CHECK-NOT:   dtensor.redistribute
// CHECK:       linalg.fill {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK:       %[[H:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]} ins(%arg0, %arg1
// CHECK:       %[[A:.*]] = math.tanh %[[H]] {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK:       %[[ACC:.*]] = linalg.fill {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK:       %[[Y:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]} ins(%[[A]], %arg2 {{.*}} outs(%[[ACC]]
// CHECK-NEXT:  %[[R:.*]] = dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// CHECK-NOT:   dtensor.redistribute
// CHECK:       return %[[R]]

// TABLE:      func @mlp on @tp shape [2] names ["tp"]
// TABLE:      %arg1  tensor<64x256xf32>  [S(1)]    64x128 (ranks 0-1)
// TABLE:      tensor<8x256xf32>   [S(1)]    8x128 (ranks 0-1)
// TABLE:      tensor<8x64xf32>    [P(sum)]  8x64 (ranks 0-1)
// TABLE:      tensor<8x64xf32>    [R]       8x64 (ranks 0-1)

// Three ranks split the hidden dim 256 unevenly (86, 86, 84): the same plan.
func.func @mlp_uneven(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [replicate]>},
               %w1: tensor<64x256xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<1>]>},
               %w2: tensor<256x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp3, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x256xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x64xf32>, tensor<64x256xf32>) outs(%acc1 : tensor<8x256xf32>) -> tensor<8x256xf32>
  %a = math.tanh %h : tensor<8x256xf32>
  %e2 = tensor.empty() : tensor<8x64xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<8x256xf32>, tensor<256x64xf32>) outs(%acc2 : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// CHECK-LABEL: func.func @mlp_uneven
// CHECK-NOT:   dtensor.redistribute
// CHECK:       linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp3, [shard<1>]>]}
// CHECK:       math.tanh {{.*}} {dtensor.layouts = [#dtensor.layout<@tp3, [shard<1>]>]}
// CHECK:       linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp3, [partial<sum>]>]}
// CHECK-NEXT:  dtensor.redistribute {{.*}} from <@tp3, [partial<sum>]> to <@tp3, [replicate]>
// CHECK-NOT:   dtensor.redistribute

// TABLE:      func @mlp_uneven on @tp3 shape [3]
// TABLE:      %arg1  tensor<64x256xf32>  [S(1)]    64x86 (ranks 0-1), 64x84 (rank 2)
// TABLE:      tensor<8x256xf32>   [S(1)]    8x86 (ranks 0-1), 8x84 (rank 2)

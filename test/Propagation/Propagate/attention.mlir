// Attention with q/k/v column-parallel over heads and the output projection
// row-parallel: heads stay sharded through the reshape, transposes, both
// batched matmuls and the softmax; the only collective is one P->R at the end.
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s

dtensor.mesh @tp shape [2] names ["tp"]

func.func @attention(
    %x: tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
    %wq: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %wk: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %wv: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
    %wo: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<16x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<16x64xf32>) -> tensor<16x64xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %v3 = tensor.expand_shape %v [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
  %eh = tensor.empty() : tensor<4x16x16xf32>
  %qh = linalg.transpose ins(%q3 : tensor<16x4x16xf32>) outs(%eh : tensor<4x16x16xf32>) permutation = [1, 0, 2]
  %kh = linalg.transpose ins(%k3 : tensor<16x4x16xf32>) outs(%eh : tensor<4x16x16xf32>) permutation = [1, 2, 0]
  %vh = linalg.transpose ins(%v3 : tensor<16x4x16xf32>) outs(%eh : tensor<4x16x16xf32>) permutation = [1, 0, 2]
  %sacc = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scores = linalg.batch_matmul ins(%qh, %kh : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%sacc : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scale = arith.constant dense<0.25> : tensor<4x16x16xf32>
  %scaled = arith.mulf %scores, %scale : tensor<4x16x16xf32>
  %probs = linalg.softmax dimension(2) ins(%scaled : tensor<4x16x16xf32>) outs(%eh : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %o = linalg.batch_matmul ins(%probs, %vh : tensor<4x16x16xf32>, tensor<4x16x16xf32>) outs(%sacc : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %es = tensor.empty() : tensor<16x4x16xf32>
  %os = linalg.transpose ins(%o : tensor<4x16x16xf32>) outs(%es : tensor<16x4x16xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %os [[0], [1, 2]] : tensor<16x4x16xf32> into tensor<16x64xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %out = linalg.matmul ins(%o2, %wo : tensor<16x64xf32>, tensor<64x64xf32>) outs(%oacc : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}

// CHECK-LABEL: func.func @attention
// CHECK-NOT:   dtensor.redistribute
// CHECK-COUNT-3: linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK-COUNT-3: tensor.expand_shape {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK-COUNT-3: linalg.transpose {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK:       linalg.batch_matmul {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK:       arith.mulf {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK:       linalg.softmax {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]} dimension(2)
// CHECK:       linalg.batch_matmul {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK:       linalg.transpose {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK:       tensor.collapse_shape {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK:       %[[OUT:.*]] = linalg.matmul {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NEXT:  %[[R:.*]] = dtensor.redistribute %[[OUT]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
// CHECK-NOT:   dtensor.redistribute
// CHECK:       return %[[R]]

// Multi-head attention with the heads sharded over a 1-D mesh: q, k and v
// projections column-parallel, both batch_matmuls and the softmax on the
// local heads, the output projection row-parallel with one all_reduce.

dtensor.mesh @tp shape [2] names ["tp"]

func.func @main(
    %x: tensor<16x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>, dtensor.name = "x"},
    %wq: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>, dtensor.name = "attn.wq", dtensor.weight},
    %wk: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>, dtensor.name = "attn.wk", dtensor.weight},
    %wv: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>, dtensor.name = "attn.wv", dtensor.weight},
    %wo: tensor<64x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>, dtensor.name = "attn.wo", dtensor.weight})
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

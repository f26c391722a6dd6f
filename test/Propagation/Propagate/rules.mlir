// RUN: dtensor-opt %s --dtensor-propagate -split-input-file | FileCheck %s

dtensor.mesh @tp shape [2]

// A flatten keeps a shard of the major dim when the shard count divides it.
// CHECK-LABEL: func.func @collapse_major
// CHECK-SAME:  -> (tensor<32xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
// CHECK-NOT:   dtensor.redistribute
// CHECK:       tensor.collapse_shape {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK-SAME:  into tensor<32xf32>
func.func @collapse_major(%x: tensor<4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<32xf32> {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

dtensor.mesh @tp shape [2]

// 3 rows over 2 ranks hold 2+1 rows, but 24 elements split 12+12: the merged
// dim cannot stay sharded, so the rows are gathered first.
// CHECK-LABEL: func.func @collapse_uneven_major
// CHECK:       %[[R:.*]] = dtensor.redistribute %arg0 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK:       tensor.collapse_shape %[[R]] {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
func.func @collapse_uneven_major(%x: tensor<3x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<24xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<3x8xf32> into tensor<24xf32>
  return %0 : tensor<24xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A shard of a minor dim does not survive a flatten.
// CHECK-LABEL: func.func @collapse_minor
// CHECK:       dtensor.redistribute %arg0 from <@tp, [shard<1>]> to <@tp, [replicate]>
// CHECK:       tensor.collapse_shape {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
func.func @collapse_minor(%x: tensor<4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) -> (tensor<32xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A split keeps the shard on its major part when divisible; 3 heads over 2
// ranks is not, so the split runs replicated and is re-sharded after.
// CHECK-LABEL: func.func @expand
// CHECK-NOT:   dtensor.redistribute
// CHECK:       tensor.expand_shape %arg0 {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK:       %[[G:.*]] = dtensor.redistribute %arg1 from <@tp, [shard<1>]> to <@tp, [replicate]>
// CHECK:       tensor.expand_shape %[[G]] {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
func.func @expand(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                  %y: tensor<8x48xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x4x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
        tensor<8x3x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.expand_shape %x [[0], [1, 2]] output_shape [8, 4, 16] : tensor<8x64xf32> into tensor<8x4x16xf32>
  %1 = tensor.expand_shape %y [[0], [1, 2]] output_shape [8, 3, 16] : tensor<8x48xf32> into tensor<8x3x16xf32>
  return %0, %1 : tensor<8x4x16xf32>, tensor<8x3x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A permutation moves the shard with its dim.
// CHECK-LABEL: func.func @transpose
// CHECK-SAME:  -> (tensor<16x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
// CHECK-NOT:   dtensor.redistribute
// CHECK:       linalg.transpose {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
func.func @transpose(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<16x8xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %0 = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  return %0 : tensor<16x8xf32>
}

// -----

dtensor.mesh @tp shape [2]

// Concatenation keeps a shard of another dim; the concatenated dim itself
// must be whole.
// CHECK-LABEL: func.func @concat
// CHECK-NOT:   dtensor.redistribute
// CHECK:       tensor.concat dim(0) {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK:       %[[A:.*]] = dtensor.redistribute %arg2 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK:       %[[B:.*]] = dtensor.redistribute %arg3 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK:       tensor.concat dim(0) %[[A]], %[[B]] {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
func.func @concat(%a: tensor<4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                  %b: tensor<4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                  %c: tensor<4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                  %d: tensor<4x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
        tensor<8x8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.concat dim(0) %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %1 = tensor.concat dim(0) %c, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

dtensor.mesh @tp shape [2]

// Slicing a dim taken whole keeps its shard; a sliced dim must be whole.
// CHECK-LABEL: func.func @slices
// CHECK-NOT:   dtensor.redistribute
// CHECK:       tensor.extract_slice %arg0[0, 0] [8, 4] [1, 1] {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK:       %[[G:.*]] = dtensor.redistribute %arg0 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK:       tensor.extract_slice %[[G]][2, 0] [4, 16] [1, 1] {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}
// CHECK:       tensor.insert_slice {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
func.func @slices(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
        tensor<4x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
        tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %0 = tensor.extract_slice %x[0, 0] [8, 4] [1, 1] : tensor<8x16xf32> to tensor<8x4xf32>
  %1 = tensor.extract_slice %x[2, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
  %2 = tensor.insert_slice %0 into %x[0, 4] [8, 4] [1, 1] : tensor<8x4xf32> into tensor<8x16xf32>
  return %0, %1, %2 : tensor<8x4xf32>, tensor<4x16xf32>, tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// An embedding lookup in a vocab-sharded table: each rank gathers the rows
// it holds (others masked to zero), a partial sum.
// CHECK-LABEL: func.func @embedding
// CHECK:       %[[E:.*]] = tensor.gather %arg0[%arg1] gather_dims([0]) unique {dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK-NEXT:  dtensor.redistribute %[[E]] from <@tp, [partial<sum>]> to <@tp, [replicate]>
func.func @embedding(%table: tensor<4096x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                     %ids: tensor<8x1xindex> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = tensor.gather %table[%ids] gather_dims([0]) unique : (tensor<4096x64xf32>, tensor<8x1xindex>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A max over a sharded dim leaves partial maxima.
// CHECK-LABEL: func.func @row_max
// CHECK:       %[[M:.*]] = linalg.reduce {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [partial<max>]>]}
// CHECK:       dtensor.redistribute %[[M]] from <@tp, [partial<max>]> to <@tp, [replicate]>
func.func @row_max(%x: tensor<8x4096xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                   %init: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %0 = linalg.reduce ins(%x : tensor<8x4096xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %0 : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

// Softmax normalises along its dim: rows sharded elsewhere stay sharded; a
// shard of the softmax dim is gathered first.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT:   dtensor.redistribute
// CHECK:       linalg.softmax {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]} dimension(1)
// CHECK:       %[[G:.*]] = dtensor.redistribute %arg1 from <@tp, [shard<1>]> to <@tp, [replicate]>
// CHECK:       linalg.softmax {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]} dimension(1) ins(%[[G]]
func.func @softmax(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                   %y: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
        tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %e = tensor.empty() : tensor<8x16xf32>
  %0 = linalg.softmax dimension(1) ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %1 = linalg.softmax dimension(1) ins(%y : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A matmul with a transposed weight (nn.Linear's layout) and a bias add in a
// linalg.generic: the output-feature shard flows through both.
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>
// CHECK-LABEL: func.func @linear
// CHECK-NOT:   dtensor.redistribute
// CHECK:       linalg.matmul indexing_maps = {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK:       linalg.generic {{.*}}dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]
// CHECK-NOT:   dtensor.redistribute
func.func @linear(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>},
                  %w: tensor<128x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                  %b: tensor<128xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x128xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x128xf32>) -> tensor<8x128xf32>
  %y = linalg.matmul indexing_maps = [#lhs, #rhs_t, #out] ins(%x, %w : tensor<8x64xf32>, tensor<128x64xf32>) outs(%acc : tensor<8x128xf32>) -> tensor<8x128xf32>
  %z = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b : tensor<8x128xf32>, tensor<128xf32>) outs(%e : tensor<8x128xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
  } -> tensor<8x128xf32>
  return %z : tensor<8x128xf32>
}

// -----

dtensor.mesh @tp shape [2]

// A call follows the callee's signature, which is propagated first.
// CHECK-LABEL: func.func private @scale
// CHECK-SAME:  {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}
// CHECK:       arith.mulf {{.*}} {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK-LABEL: func.func @caller
// CHECK:       %[[C:.*]] = dtensor.redistribute %arg0 from <@tp, [replicate]> to <@tp, [shard<0>]>
// CHECK:       call @scale(%[[C]]) {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
func.func private @scale(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %0 = arith.mulf %x, %x : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
func.func @caller(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %0 = func.call @scale(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// --dtensor-decompose-attention writes dtensor.attention as linalg ops:
// operands read through a permutation are transposed to [B, H, L, E], key
// and value heads read by several query heads are repeated, the scores are
// a contraction, the logits add the mask (size-1 dims broadcast) or apply
// the causal rule shifted by the positions, the softmax gives a query that
// sees no key weights 0, and the result is transposed back to its dims.
// RUN: dtensor-opt %s --dtensor-decompose-attention --split-input-file | FileCheck %s
// With kernel=true the f32 ops (the CPU kernel's) stay whole, the others
// are decomposed.
// RUN: dtensor-opt %s --dtensor-decompose-attention=kernel=true --split-input-file | FileCheck %s --check-prefix=KERNEL

// CHECK-DAG:   #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG:   #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG:   #[[S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[MASK:.*]] = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// CHECK-LABEL: func.func @grouped_masked
// CHECK-SAME:  %[[QA:[^:]*]]: tensor<2x3x4x8xf32>, %[[KA:[^:]*]]: tensor<2x5x2x8xf32>, %[[VA:[^:]*]]: tensor<2x5x2x6xf32>, %[[MA:[^:]*]]: tensor<1x1x3x5xf32>
// CHECK:       %[[QT:.*]] = linalg.transpose ins(%[[QA]] : tensor<2x3x4x8xf32>) outs(%{{.*}} : tensor<2x4x3x8xf32>) permutation = [0, 2, 1, 3]
// CHECK:       %[[KT:.*]] = linalg.transpose ins(%[[KA]] : tensor<2x5x2x8xf32>) outs(%{{.*}} : tensor<2x2x5x8xf32>) permutation = [0, 2, 1, 3]
// CHECK:       %[[VT:.*]] = linalg.transpose ins(%[[VA]] : tensor<2x5x2x6xf32>) outs(%{{.*}} : tensor<2x2x5x6xf32>) permutation = [0, 2, 1, 3]
// CHECK:       %[[KR:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x2x5x8xf32> into tensor<2x4x5x8xf32>
// CHECK:       %[[VR:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x2x5x6xf32> into tensor<2x4x5x6xf32>
// CHECK:       %[[SC:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], {{.*}} ins(%[[QT]], %[[KR]] : tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>) outs(%{{.*}} : tensor<2x4x3x5xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[MASK]], #[[ID]]], {{.*}} ins(%[[SC]], %[[MA]] : tensor<2x4x3x5xf32>, tensor<1x1x3x5xf32>)
// CHECK:         arith.constant 5.000000e-01 : f32
// CHECK:         arith.mulf
// CHECK:         arith.addf
// CHECK-NOT:     linalg.index
// CHECK:       math.exp
// CHECK:       %[[O:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[VR]] : tensor<2x4x3x5xf32>, tensor<2x4x5x6xf32>) outs(%{{.*}} : tensor<2x4x3x6xf32>)
// CHECK:       %[[OT:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x3x6xf32>) outs(%{{.*}} : tensor<2x3x4x6xf32>) permutation = [0, 2, 1, 3]
// CHECK-NOT:   dtensor.attention
// CHECK:       return %[[OT]]
// KERNEL-LABEL: func.func @grouped_masked
// KERNEL:       dtensor.attention
// KERNEL-NOT:   linalg.generic
func.func @grouped_masked(%q: tensor<2x3x4x8xf32>, %k: tensor<2x5x2x8xf32>,
                          %v: tensor<2x5x2x6xf32>, %m: tensor<1x1x3x5xf32>)
    -> tensor<2x3x4x6xf32> {
  %init = tensor.empty() : tensor<2x3x4x6xf32>
  %o = dtensor.attention %q, %k, %v mask(%m : tensor<1x1x3x5xf32>) into %init
      {scale = 0.5 : f64, query_dims = array<i64: 0, 2, 1, 3>,
       key_dims = array<i64: 0, 2, 1, 3>, value_dims = array<i64: 0, 2, 1, 3>,
       result_dims = array<i64: 0, 2, 1, 3>}
      : tensor<2x3x4x8xf32>, tensor<2x5x2x8xf32>, tensor<2x5x2x6xf32>
        into tensor<2x3x4x6xf32> -> tensor<2x3x4x6xf32>
  return %o : tensor<2x3x4x6xf32>
}

// -----

// Causal with per-row positions, bf16: key j is masked for query i of row b
// iff j > positions[b] + i (signed, i64); computed in f32, rounded to bf16.
// CHECK-DAG:   #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @causal_positions
// CHECK-SAME:  %[[P:[^:]*]]: tensor<2xi64>
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<2x2x3x7xf32>, tensor<2xi64>)
// CHECK-NEXT:  ^bb0(%{{.*}}: f32, %[[START:[^:]*]]: i64, %{{.*}}: f32):
// CHECK:         %[[I:.*]] = linalg.index 2 : index
// CHECK:         %[[J:.*]] = linalg.index 3 : index
// CHECK:         %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:         %[[POS:.*]] = arith.addi %[[START]], %[[I64]] : i64
// CHECK:         %[[J64:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK:         arith.cmpi sgt, %[[J64]], %[[POS]] : i64
// CHECK:       arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT:   dtensor.attention
// KERNEL-LABEL: func.func @causal_positions
// KERNEL-NOT:   dtensor.attention
// KERNEL:       math.exp
func.func @causal_positions(%q: tensor<2x2x3x4xbf16>, %k: tensor<2x2x7x4xbf16>,
                            %v: tensor<2x2x7x4xbf16>, %p: tensor<2xi64>)
    -> tensor<2x2x3x4xbf16> {
  %init = tensor.empty() : tensor<2x2x3x4xbf16>
  %o = dtensor.attention %q, %k, %v positions(%p : tensor<2xi64>) into %init
      {causal, scale = 0.5 : f64, query_dims = array<i64: 0, 1, 2, 3>,
       key_dims = array<i64: 0, 1, 2, 3>, value_dims = array<i64: 0, 1, 2, 3>,
       result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x2x3x4xbf16>, tensor<2x2x7x4xbf16>, tensor<2x2x7x4xbf16>
        into tensor<2x2x3x4xbf16> -> tensor<2x2x3x4xbf16>
  return %o : tensor<2x2x3x4xbf16>
}

// RUN: dtensor-opt %s --dtensor-matmul-to-runtime | FileCheck %s

// A zero fill right before: dropped, beta = 0 (f32 = 0).
// CHECK-LABEL: func.func @zero_init
// CHECK-SAME: (%[[A:.*]]: memref<3x4xf32>, %[[B:.*]]: memref<4x5xf32>, %[[C:.*]]: memref<3x5xf32>)
// CHECK-NOT: linalg.fill
// CHECK: memref.cast %[[A]] : memref<3x4xf32> to memref<*xf32>
// CHECK: memref.cast %[[B]]
// CHECK: memref.cast %[[C]]
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[BETA:.*]] = arith.constant 0 : i32
// CHECK: call @dtensor_rt_matmul(%[[ZERO]], %[[BETA]]) : (i32, i32) -> ()
// CHECK-NOT: linalg.matmul
func.func @zero_init(%a: memref<3x4xf32>, %b: memref<4x5xf32>, %c: memref<3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x5xf32>)
  linalg.matmul ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  return
}

// The fill is read in between: kept, beta = 1.
// CHECK-LABEL: func.func @fill_read
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: call @dtensor_rt_matmul(%{{.*}}, %[[ONE]])
func.func @fill_read(%a: memref<3x4xf32>, %b: memref<4x5xf32>, %c: memref<3x5xf32>, %d: memref<3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x5xf32>)
  memref.copy %c, %d : memref<3x5xf32> to memref<3x5xf32>
  linalg.matmul ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  return
}

// A non-zero fill: kept, beta = 1.
// CHECK-LABEL: func.func @one_init
// CHECK: linalg.fill
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: call @dtensor_rt_matmul(%{{.*}}, %[[ONE]])
func.func @one_init(%a: memref<3x4xf32>, %b: memref<4x5xf32>, %c: memref<3x5xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<3x5xf32>)
  linalg.matmul ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  return
}

// A transposed operand is passed as a transposed view.
// CHECK-LABEL: func.func @transpose_b
// CHECK-SAME: (%[[A:.*]]: memref<3x4xf64>, %[[BT:.*]]: memref<5x4xf64>, %[[C:.*]]: memref<3x5xf64>)
// CHECK: %[[VIEW:.*]] = memref.transpose %[[BT]] (d0, d1) -> (d1, d0) : memref<5x4xf64> to memref<4x5xf64, strided<[1, 4]>>
// CHECK: memref.cast %[[VIEW]]
// CHECK: call @dtensor_rt_push_buffer__f64
// CHECK: %[[F64:.*]] = arith.constant 1 : i32
// CHECK: call @dtensor_rt_matmul(%[[F64]], %{{.*}})
func.func @transpose_b(%a: memref<3x4xf64>, %bt: memref<5x4xf64>, %c: memref<3x5xf64>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %bt : memref<3x4xf64>, memref<5x4xf64>) outs(%c : memref<3x5xf64>)
  return
}

// A matmul written as a generic, with A transposed, batched.
// CHECK-LABEL: func.func @generic_batch
// CHECK-SAME: (%[[AT:.*]]: memref<2x4x3xf32>
// CHECK: memref.transpose %[[AT]] (d0, d1, d2) -> (d0, d2, d1) : memref<2x4x3xf32> to memref<2x3x4xf32, strided<[12, 1, 3]>>
// CHECK: call @dtensor_rt_matmul
// CHECK-NOT: linalg.generic
func.func @generic_batch(%at: memref<2x4x3xf32>, %b: memref<2x4x5xf32>, %c: memref<2x3x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%at, %b : memref<2x4x3xf32>, memref<2x4x5xf32>) outs(%c : memref<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Integers and mixed types stay loops.
// CHECK-LABEL: func.func @integer
// CHECK: linalg.matmul
// CHECK-NOT: dtensor_rt_matmul
func.func @integer(%a: memref<3x4xi32>, %b: memref<4x5xi32>, %c: memref<3x5xi32>) {
  linalg.matmul ins(%a, %b : memref<3x4xi32>, memref<4x5xi32>) outs(%c : memref<3x5xi32>)
  return
}

// On tensors nothing happens (this pass runs after bufferization).
// CHECK-LABEL: func.func @tensors
// CHECK: linalg.matmul
func.func @tensors(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%c : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}

// A linear on [B, S, in] as one generic: M = B x S, a collapsed view of x
// and of the result; the weight [out, in] is passed transposed.
// CHECK-LABEL: func.func @linear_3d
// CHECK-SAME: (%[[X:.*]]: memref<2x3x8xf32>, %[[W:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<2x3x4xf32>)
// CHECK: %[[XV:.*]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
// CHECK: memref.cast %[[XV]]
// CHECK: %[[WT:.*]] = memref.transpose %[[W]] (d0, d1) -> (d1, d0) : memref<4x8xf32> to memref<8x4xf32, strided<[1, 8]>>
// CHECK: memref.cast %[[WT]]
// CHECK: %[[YV:.*]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
// CHECK: memref.cast %[[YV]]
// CHECK: call @dtensor_rt_matmul
// CHECK-NOT: linalg.generic
func.func @linear_3d(%x: memref<2x3x8xf32>, %w: memref<4x8xf32>, %y: memref<2x3x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, o, i) -> (b, s, i)>, affine_map<(b, s, o, i) -> (o, i)>, affine_map<(b, s, o, i) -> (b, s, o)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xf32>, memref<4x8xf32>) outs(%y : memref<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Attention scores over [B, H, L, E] x [B, H, S, E]: batch = B x H, and
// the keys are passed transposed.
// CHECK-LABEL: func.func @attention_scores
// CHECK-SAME: (%[[Q:.*]]: memref<2x4x5x8xf32>, %[[K:.*]]: memref<2x4x6x8xf32>, %[[S:.*]]: memref<2x4x5x6xf32>)
// CHECK: memref.collapse_shape %[[Q]] {{\[}}[0, 1], [2], [3]] : memref<2x4x5x8xf32> into memref<8x5x8xf32>
// CHECK: %[[KV:.*]] = memref.collapse_shape %[[K]] {{\[}}[0, 1], [2], [3]] : memref<2x4x6x8xf32> into memref<8x6x8xf32>
// CHECK: memref.transpose %[[KV]] (d0, d1, d2) -> (d0, d2, d1)
// CHECK: memref.collapse_shape %[[S]] {{\[}}[0, 1], [2], [3]] : memref<2x4x5x6xf32> into memref<8x5x6xf32>
// CHECK: call @dtensor_rt_matmul
// CHECK-NOT: linalg.generic
func.func @attention_scores(%q: memref<2x4x5x8xf32>, %k: memref<2x4x6x8xf32>, %s: memref<2x4x5x6xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, l, s, e) -> (b, h, l, e)>, affine_map<(b, h, l, s, e) -> (b, h, s, e)>, affine_map<(b, h, l, s, e) -> (b, h, l, s)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x4x5x8xf32>, memref<2x4x6x8xf32>) outs(%s : memref<2x4x5x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}

// Merged dims in another order in one operand (x is [S, B, in], y is
// [B, S, out]): no single view lines them up; loops.
// CHECK-LABEL: func.func @merged_dims_disagree
// CHECK-NOT: call @dtensor_rt_matmul
// CHECK: linalg.generic
func.func @merged_dims_disagree(%x: memref<3x2x8xf32>, %w: memref<4x8xf32>, %y: memref<2x3x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, o, i) -> (s, b, i)>, affine_map<(b, s, o, i) -> (o, i)>, affine_map<(b, s, o, i) -> (b, s, o)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x2x8xf32>, memref<4x8xf32>) outs(%y : memref<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Merged dims that are not contiguous in memory (a strided view of x):
// collapsing would need a copy; loops.
// CHECK-LABEL: func.func @not_collapsible
// CHECK-NOT: call @dtensor_rt_matmul
// CHECK: linalg.generic
func.func @not_collapsible(%x: memref<2x3x8xf32, strided<[48, 8, 1]>>, %w: memref<4x8xf32>, %y: memref<2x3x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, o, i) -> (b, s, i)>, affine_map<(b, s, o, i) -> (o, i)>, affine_map<(b, s, o, i) -> (b, s, o)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xf32, strided<[48, 8, 1]>>, memref<4x8xf32>) outs(%y : memref<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// An operand with a dim of size 0 (a shard of no heads, batch dims 0 x ?):
// the product stays a loop nest of no iterations. Collapsing its batch dims
// would give a static 0 from a dynamic size, which memref.collapse_shape
// refuses.
// CHECK-LABEL: func.func @zero_size
// CHECK-NOT: memref.collapse_shape
// CHECK-NOT: dtensor_rt_matmul
// CHECK: linalg.generic
// CHECK: return
#zs_a = affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>
#zs_b = affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>
#zs_c = affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>
func.func @zero_size(%a: memref<0x?x5x4xf32>, %b: memref<0x?x4x5xf32>, %c: memref<0x?x5x5xf32>) {
  linalg.generic {indexing_maps = [#zs_a, #zs_b, #zs_c],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<0x?x5x4xf32>, memref<0x?x4x5xf32>) outs(%c : memref<0x?x5x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

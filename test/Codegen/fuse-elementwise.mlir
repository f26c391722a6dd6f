// RUN: dtensor-opt %s --convert-elementwise-to-linalg --dtensor-cpu-fuse-elementwise | FileCheck %s

// An elementwise chain fuses into one generic; the matmul and the fill
// stay named.
// CHECK-LABEL: func.func @chain
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<4x16xf32>)
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[M]], %{{.*}} : tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK: arith.addf
// CHECK-NEXT: math.tanh
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %s = linalg.add ins(%m, %bias : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %t = math.tanh %s : tensor<4x16xf32>
  %r = arith.mulf %t, %t : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// Softmax is decomposed into generics (max, exp of the difference, sum,
// division).
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %e = tensor.empty() : tensor<2x5xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}

// RUN: dtensor-opt %s --convert-elementwise-to-linalg --dtensor-fuse-elementwise | FileCheck %s

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

// An elementwise producer is not fused into a contraction written as a
// generic (a linear over [B, S, in]): the product stays a product for
// matmul-to-runtime, and tanh is not recomputed for every output column.
// The bias add after it fuses as usual.
// CHECK-LABEL: func.func @no_fusion_into_contraction
// CHECK:       %[[T:.*]] = linalg.generic
// CHECK:         math.tanh
// CHECK:       %[[P:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME:    ins(%[[T]], %{{.*}} : tensor<2x3x8xf32>, tensor<4x8xf32>)
// CHECK-NOT:     math.tanh
// CHECK:         arith.mulf
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    linalg.yield
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%[[P]], %{{.*}} : tensor<2x3x4xf32>, tensor<4xf32>)
#x = affine_map<(b, s, o, i) -> (b, s, i)>
#w = affine_map<(b, s, o, i) -> (o, i)>
#y = affine_map<(b, s, o, i) -> (b, s, o)>
#id = affine_map<(b, s, o) -> (b, s, o)>
#bias = affine_map<(b, s, o) -> (o)>
func.func @no_fusion_into_contraction(%x: tensor<2x3x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %t = math.tanh %x : tensor<2x3x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %p = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%t, %w : tensor<2x3x8xf32>, tensor<4x8xf32>) outs(%f : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %b : tensor<2x3x4xf32>, tensor<4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// A producer whose body reads its init (an accumulation into a zero-filled
// tensor: the scalar and its broadcast here) is not fused: in a consumer
// with reduction loops its init would become an accumulator over the
// reduced rows and add its value once per row (a mean's gradient came out
// with the row count added in before).
#rows = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
#cols = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<() -> ()>
// CHECK-LABEL: func.func @reads_init
// CHECK:       %[[SUM:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction", "reduction"]}
// CHECK:       %[[SCALED:.*]] = linalg.generic {{{.*}}iterator_types = []} ins(%[[SUM]] : tensor<f32>)
// CHECK:       %[[B:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[SCALED]] : tensor<f32>)
// CHECK:       %[[R:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[B]] : tensor<6x5xf32>)
// CHECK:       return %[[R]]
func.func @reads_init(%x: tensor<6x5xf32>) -> tensor<5xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 30.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#rows, #all], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<6x5xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %add = arith.addf %in, %out : f32
    linalg.yield %add : f32
  } -> tensor<f32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %scaled = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%sum : tensor<f32>) outs(%f1 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %n : f32
    %add = arith.addf %out, %d : f32
    linalg.yield %add : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<6x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %b = linalg.generic {indexing_maps = [#all, #rows], iterator_types = ["parallel", "parallel"]} ins(%scaled : tensor<f32>) outs(%f : tensor<6x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %add = arith.addf %out, %in : f32
    linalg.yield %add : f32
  } -> tensor<6x5xf32>
  %e2 = tensor.empty() : tensor<5xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<5xf32>) -> tensor<5xf32>
  %r = linalg.generic {indexing_maps = [#rows, #cols], iterator_types = ["reduction", "parallel"]} ins(%b : tensor<6x5xf32>) outs(%f2 : tensor<5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %add = arith.addf %out, %in : f32
    linalg.yield %add : f32
  } -> tensor<5xf32>
  return %r : tensor<5xf32>
}

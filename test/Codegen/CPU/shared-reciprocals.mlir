// RUN: dtensor-opt %s --dtensor-cpu-shared-reciprocals | FileCheck %s

// SiLU's gradient (as the Autodiff pass writes it, after fusion): three
// divisions by 1 + exp(-x) become one reciprocal, computed before the first
// of them, and three multiplications, which keep their fast-math flags.
// CHECK-LABEL: func.func @silu_grad
// CHECK: ^bb0(%[[X:.*]]: f32, %[[G:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[R:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK: %[[Q1:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK: %[[Q2:.*]] = arith.mulf %[[G]], %[[R]] fastmath<contract> : f32
// CHECK: %[[P:.*]] = arith.mulf %[[G]], %[[Q1]] : f32
// CHECK: %[[Q3:.*]] = arith.mulf %[[P]], %[[R]] : f32
// CHECK-NOT: arith.divf
// CHECK: linalg.yield
#id = affine_map<(d0) -> (d0)>
func.func @silu_grad(%x: tensor<64xf32>, %g: tensor<64xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %g : tensor<64xf32>, tensor<64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %grad: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %q1 = arith.divf %in, %d : f32
    %q2 = arith.divf %grad, %d fastmath<contract> : f32
    %p = arith.mulf %grad, %q1 : f32
    %q3 = arith.divf %p, %d : f32
    %s = arith.subf %q2, %q3 : f32
    %t = arith.mulf %s, %e : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// One division by a value, divisions by constants, and other element types
// stay divisions; a divisor shared within one block only.
// CHECK-LABEL: func.func @kept
// CHECK: arith.divf %{{.*}}, %[[D:.*]] : f32
// CHECK: arith.divf %{{.*}}, %[[C:.*]] : f32
// CHECK: arith.divf %{{.*}}, %[[C]] : f32
// CHECK: arith.divf %{{.*}}, %[[H:.*]] : f16
// CHECK: arith.divf %{{.*}}, %[[H]] : f16
// CHECK: scf.if
// CHECK: arith.divf %{{.*}}, %[[D]] : f32
// CHECK: } else {
// CHECK: arith.divf %{{.*}}, %[[D]] : f32
// CHECK-NOT: arith.mulf
func.func @kept(%a: f32, %b: f32, %d: f32, %h: f16, %k: f16, %c: i1) -> (f32, f32, f32, f16, f16, f32) {
  %three = arith.constant 3.0 : f32
  %0 = arith.divf %a, %d : f32
  %1 = arith.divf %a, %three : f32
  %2 = arith.divf %b, %three : f32
  %3 = arith.divf %h, %k : f16
  %4 = arith.divf %k, %k : f16
  %5 = scf.if %c -> f32 {
    %q = arith.divf %b, %d : f32
    scf.yield %q : f32
  } else {
    %q = arith.divf %a, %d : f32
    scf.yield %q : f32
  }
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f16, f16, f32
}

// Vectors of f64 share theirs too.
// CHECK-LABEL: func.func @vectors
// CHECK-SAME: (%[[A:.*]]: vector<4xf64>, %[[B:.*]]: vector<4xf64>, %[[D:.*]]: vector<4xf64>)
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf64>
// CHECK: %[[R:.*]] = arith.divf %[[ONE]], %[[D]] : vector<4xf64>
// CHECK: arith.mulf %[[A]], %[[R]] : vector<4xf64>
// CHECK: arith.mulf %[[B]], %[[R]] : vector<4xf64>
func.func @vectors(%a: vector<4xf64>, %b: vector<4xf64>, %d: vector<4xf64>) -> (vector<4xf64>, vector<4xf64>) {
  %0 = arith.divf %a, %d : vector<4xf64>
  %1 = arith.divf %b, %d : vector<4xf64>
  return %0, %1 : vector<4xf64>, vector<4xf64>
}

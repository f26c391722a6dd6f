// RUN: dtensor-opt %s --dtensor-cpu-approximate-tanh | FileCheck %s

// Scalar f32 tanh becomes arithmetic: the argument clamped, an odd
// polynomial over an even one, the (clamped) argument itself when tiny.
// CHECK-LABEL: func.func @f32
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: math.tanh
// CHECK: math.fma
// CHECK: %[[Q:.*]] = arith.divf
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Q]] : f32
// CHECK: return %[[R]]
func.func @f32(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}

// Other types (vectors included) keep tanh, other math functions are left
// alone, and nothing else is folded.
// CHECK-LABEL: func.func @others
// CHECK: math.tanh %{{.*}} : f64
// CHECK: math.tanh %{{.*}} : f16
// CHECK: math.tanh %{{.*}} : vector<8xf32>
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.addf
// CHECK-NOT: arith.divf
// CHECK: return
func.func @others(%d: f64, %h: f16, %v: vector<8xf32>, %a: f32) -> (f64, f16, vector<8xf32>, f32, f32) {
  %t64 = math.tanh %d : f64
  %t16 = math.tanh %h : f16
  %tv = math.tanh %v : vector<8xf32>
  %e = math.exp %a : f32
  %one = arith.constant 1.0 : f32
  %two = arith.addf %one, %one : f32
  return %t64, %t16, %tv, %e, %two : f64, f16, vector<8xf32>, f32, f32
}

// RUN: dtensor-opt %s --dtensor-cpu-clamp-exp | FileCheck %s

// f32: below -87 the result is 0 and above 89 +inf; exp gets the argument
// clamped into [-87, 89] (with maximumf and minimumf, which LLVM does not
// fold away as it folds a select), so it stays on its fast path.
// CHECK-LABEL: func.func @f32
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[LO:.*]] = arith.constant -8.700000e+01 : f32
// CHECK: %[[HI:.*]] = arith.constant 8.900000e+01 : f32
// CHECK: %[[BELOW:.*]] = arith.cmpf olt, %[[X]], %[[LO]] : f32
// CHECK: %[[ABOVE:.*]] = arith.cmpf ogt, %[[X]], %[[HI]] : f32
// CHECK: %[[MAX:.*]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK: %[[ARG:.*]] = arith.minimumf %[[MAX]], %[[HI]] : f32
// CHECK: %[[EXP:.*]] = math.exp %[[ARG]] fastmath<afn> : f32
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[R1:.*]] = arith.select %[[ABOVE]], %[[INF]], %[[EXP]] : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R2:.*]] = arith.select %[[BELOW]], %[[ZERO]], %[[R1]] : f32
// CHECK: return %[[R2]]
func.func @f32(%x: f32) -> f32 {
  %e = math.exp %x fastmath<afn> : f32
  return %e : f32
}

// f64 has its own range; other types and vectors are left alone.
// CHECK-LABEL: func.func @others
// CHECK-DAG: arith.constant -7.080000e+02 : f64
// CHECK-DAG: arith.constant 7.100000e+02 : f64
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.exp %{{.*}} : f16
// CHECK-NOT: arith.cmpf
// CHECK: math.exp %{{.*}} : vector<4xf32>
// CHECK-NOT: arith.select
// CHECK: return
func.func @others(%d: f64, %h: f16, %v: vector<4xf32>) -> (f64, f16, vector<4xf32>) {
  %a = math.exp %d : f64
  %b = math.exp %h : f16
  %c = math.exp %v : vector<4xf32>
  return %a, %b, %c : f64, f16, vector<4xf32>
}

// --dtensor-lower-step-seed: each dtensor.step_seed becomes a call of the
// runtime's dtensor_rt_step_seed, declared once.
// RUN: dtensor-opt %s --dtensor-lower-step-seed | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NOT: dtensor.step_seed
// CHECK: %[[S:.*]] = call @dtensor_rt_step_seed() : () -> i64
// CHECK: %[[T:.*]] = call @dtensor_rt_step_seed() : () -> i64
// CHECK: arith.xori %[[S]], %[[T]] : i64
// CHECK: func.func private @dtensor_rt_step_seed() -> i64
// CHECK-NOT: func.func private @dtensor_rt_step_seed
func.func @main() -> i64 {
  %a = dtensor.step_seed : i64
  %b = dtensor.step_seed : i64
  %c = arith.xori %a, %b : i64
  return %c : i64
}

// RUN: dtensor-opt %s --dtensor-cpu-native-min-max | FileCheck %s

// f32 and f64 min/max, scalars and vectors, become LLVM's intrinsics on the
// same operands; fast-math flags are dropped.
// CHECK-LABEL: func.func @native
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f64, %[[D:.*]]: f64, %[[V:.*]]: vector<8xf32>, %[[W:.*]]: vector<8xf32>)
// CHECK: %[[MAX:.*]] = llvm.intr.maximum(%[[A]], %[[B]]) : (f32, f32) -> f32
// CHECK: %[[MIN:.*]] = llvm.intr.minimum(%[[C]], %[[D]]) : (f64, f64) -> f64
// CHECK: %[[MAXNUM:.*]] = llvm.intr.maxnum(%[[A]], %[[MAX]]) : (f32, f32) -> f32
// CHECK: %[[MINNUM:.*]] = llvm.intr.minnum(%[[C]], %[[MIN]]) : (f64, f64) -> f64
// CHECK: %[[VMAX:.*]] = llvm.intr.maximum(%[[V]], %[[W]]) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: return %[[MAXNUM]], %[[MINNUM]], %[[VMAX]]
// CHECK-NOT: arith.
func.func @native(%a: f32, %b: f32, %c: f64, %d: f64, %v: vector<8xf32>, %w: vector<8xf32>)
    -> (f32, f64, vector<8xf32>) {
  %max = arith.maximumf %a, %b fastmath<nnan> : f32
  %min = arith.minimumf %c, %d : f64
  %maxnum = arith.maxnumf %a, %max : f32
  %minnum = arith.minnumf %c, %min : f64
  %vmax = arith.maximumf %v, %w : vector<8xf32>
  return %maxnum, %minnum, %vmax : f32, f64, vector<8xf32>
}

// Half types stay arith ops (for arith-expand), as do integer max/min.
// CHECK-LABEL: func.func @others
// CHECK: arith.maximumf %{{.*}} : f16
// CHECK: arith.minimumf %{{.*}} : bf16
// CHECK: arith.maxsi %{{.*}} : i32
// CHECK-NOT: llvm.intr
func.func @others(%h: f16, %b: bf16, %i: i32) -> (f16, bf16, i32) {
  %0 = arith.maximumf %h, %h : f16
  %1 = arith.minimumf %b, %b : bf16
  %2 = arith.maxsi %i, %i : i32
  return %0, %1, %2 : f16, bf16, i32
}

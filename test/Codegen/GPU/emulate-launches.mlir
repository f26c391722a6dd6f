// RUN: dtensor-opt %s --pass-pipeline='builtin.module(func.func(dtensor-gpu-emulate-launches))' --split-input-file --verify-diagnostics | FileCheck %s

// Blocks then threads, z outermost; the ids are the loops' variables and the
// sizes the launch's operands.
// CHECK-LABEL: func.func @launch(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[G:.*]]: index, %[[B:.*]]: index)
// CHECK-NOT: gpu.
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C1:.*]] step
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C1]] step
// CHECK: scf.for %[[BX:.*]] = %{{.*}} to %[[G]] step
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C1]] step
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C1]] step
// CHECK: scf.for %[[TX:.*]] = %{{.*}} to %[[B]] step
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[B]]
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: memref.store %{{.*}}, %[[A]][%[[ID]]]
func.func @launch(%a: memref<?xf32>, %g: index, %b: index) {
  %c1 = arith.constant 1 : index
  %f = arith.constant 2.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %b, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %id = arith.addi %base, %tx : index
    memref.store %f, %a[%id] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @barrier(%a: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @below {{synchronises its threads, which sequential emulation cannot}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.barrier
    gpu.terminator
  }
  return
}

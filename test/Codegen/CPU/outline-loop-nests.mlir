// RUN: dtensor-opt %s --dtensor-cpu-outline-loop-nests --split-input-file | FileCheck %s

// Each top-level loop nest becomes a call of its own private function,
// marked noinline for LLVM. Buffers and other values from above become
// arguments; constants (bounds, steps, the 1.0) are cloned instead. A loop
// with results returns them.
// CHECK-LABEL: func.func @two(
// CHECK-SAME: %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[N:.*]]: index)
// CHECK-NOT: scf.for
// CHECK: call @two_loop0(%[[A]], %[[B]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK-NEXT: %[[S:.*]] = call @two_loop1(%[[N]], %[[B]]) : (index, memref<4x8xf32>) -> f32
// CHECK-NEXT: memref.store %[[S]], %[[A]]
// CHECK: return

// CHECK-LABEL: func.func private @two_loop0(
// CHECK-SAME: %[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C4]]
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[C8]]
// CHECK: memref.load %[[X]][%[[I]], %[[J]]]
// CHECK: arith.addf %{{.*}}, %[[ONE]]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[I]], %[[J]]]
// CHECK: return
// CHECK-NEXT: }

// CHECK-LABEL: func.func private @two_loop1(
// CHECK-SAME: %[[UB:.*]]: index, %[[Z:.*]]: memref<4x8xf32>) -> f32 attributes {passthrough = ["noinline"]}
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32)
// CHECK: return %[[R]] : f32
func.func @two(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %y = arith.addf %x, %one : f32
      memref.store %y, %b[%i, %j] : memref<4x8xf32>
    }
  }
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f32) {
    %x = memref.load %b[%i, %c0] : memref<4x8xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  memref.store %s, %a[%c0, %c0] : memref<4x8xf32>
  return
}

// -----

// A loop inside another op's region is not top level: it stays where it is.
// Functions without a body are left alone.
// CHECK-LABEL: func.func @nested(
// CHECK: scf.if
// CHECK-NEXT: scf.for
// CHECK-NOT: call @nested_loop
func.func @nested(%a: memref<4xf32>, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.if %p {
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %zero, %a[%i] : memref<4xf32>
    }
  }
  return
}
// CHECK: func.func private @external(memref<4xf32>)
func.func private @external(memref<4xf32>)

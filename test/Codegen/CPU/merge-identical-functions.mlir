// RUN: dtensor-opt %s --dtensor-cpu-merge-identical-functions | FileCheck %s

// @copy_b equals @copy_a but for its name and locations: its call goes to
// @copy_a and it is erased. @other differs in one constant, @wider in its
// type, @public is not private: all three stay.
// CHECK-LABEL: func.func @main(
// CHECK: call @copy_a(%{{.*}}, %{{.*}})
// CHECK-NEXT: call @copy_a(%{{.*}}, %{{.*}})
// CHECK-NEXT: call @other(
// CHECK-NEXT: call @wider(
// CHECK-NEXT: call @public(
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<8xf32>) {
  call @copy_a(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  call @copy_b(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  call @other(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  call @wider(%c, %c) : (memref<8xf32>, memref<8xf32>) -> ()
  call @public(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
// CHECK: func.func private @copy_a(
// CHECK-NOT: @copy_b
// CHECK: func.func private @other(
// CHECK: arith.constant 2.000000e+00
// CHECK: func.func private @wider(
// CHECK: func.func @public(
func.func private @copy_a(%x: memref<4xf32>, %y: memref<4xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %y[%i] : memref<4xf32>
  }
  return
}
func.func private @copy_b(%x: memref<4xf32>, %y: memref<4xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index loc("elsewhere":1:1)
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32 loc("elsewhere":2:2)
    memref.store %w, %y[%i] : memref<4xf32>
  }
  return
}
func.func private @other(%x: memref<4xf32>, %y: memref<4xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %y[%i] : memref<4xf32>
  }
  return
}
func.func private @wider(%x: memref<8xf32>, %y: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  return
}
func.func @public(%x: memref<4xf32>, %y: memref<4xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %y[%i] : memref<4xf32>
  }
  return
}

// RUN: dtensor-opt %s --pass-pipeline='builtin.module(func.func(dtensor-gpu-map-parallel-loops),canonicalize)' --split-input-file --verify-diagnostics | FileCheck %s
// RUN: dtensor-opt %s --pass-pipeline='builtin.module(func.func(dtensor-gpu-map-parallel-loops{block-size=128}),canonicalize)' --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=B128
// RUN: not dtensor-opt %s --pass-pipeline='builtin.module(func.func(dtensor-gpu-map-parallel-loops{block-size=2048}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: block-size 2048 is outside [1, 1024]

// A 2-d space of 4 x 300 iterations: 1200 threads in blocks of 256, so 5
// blocks. Each thread with an id below 1200 takes (id / 300, id % 300).
// CHECK-LABEL: func.func @flatten(
// CHECK-SAME: %[[A:.*]]: memref<4x300xf32>)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG: %[[C300:.*]] = arith.constant 300 : index
// CHECK-DAG: %[[C1200:.*]] = arith.constant 1200 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C5]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%[[SX:.*]] = %[[C256]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]])
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[SX]]
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[C1200]]
// CHECK: scf.if %[[IN]] {
// CHECK: %[[J:.*]] = arith.remui %[[ID]], %[[C300]]
// CHECK: %[[I:.*]] = arith.divui %[[ID]], %[[C300]]
// CHECK: memref.load %[[A]][%[[I]], %[[J]]]
// CHECK: memref.store %{{.*}}, %[[A]][%[[I]], %[[J]]]
// CHECK: }
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
// B128-LABEL: func.func @flatten(
// B128-DAG: %[[C10:.*]] = arith.constant 10 : index
// B128-DAG: %[[C128:.*]] = arith.constant 128 : index
// B128: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C10]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C128]],
func.func @flatten(%a: memref<4x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c300 = arith.constant 300 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c300) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x300xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %a[%i, %j] : memref<4x300xf32>
    scf.reduce
  }
  return
}

// -----

// A small static space gets one block of just enough threads; a bound known
// only at run time is computed on the host, and the block count is at least
// one.
// CHECK-LABEL: func.func @small_and_dynamic(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C1]], {{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C6]],
// CHECK: arith.cmpi ult, %[[T]], %[[C6]]
// CHECK: %[[COUNT:.*]] = arith.maxsi %[[N]], %[[C0]] : index
// CHECK: %[[BLOCKS:.*]] = arith.ceildivsi %[[COUNT]], %[[C256]]
// CHECK: %[[GRID:.*]] = arith.maxsi %[[BLOCKS]], %[[C1]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[C256]],
// CHECK: arith.cmpi ult, %{{.*}}, %[[COUNT]]
func.func @small_and_dynamic(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    memref.store %f, %a[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Parallel loops nested in a kernel run sequentially in each thread; the
// globals a kernel reads are taken inside it.
// CHECK-LABEL: func.func @nested_and_global(
// CHECK-NOT: memref.get_global
// CHECK: gpu.launch
// CHECK-NEXT: %[[G:.*]] = memref.get_global @table : memref<8xf32>
// CHECK: scf.if
// CHECK: scf.for %[[K:.*]] =
// CHECK: memref.load %[[G]][%[[K]]]
// CHECK-NOT: scf.parallel
memref.global "private" constant @table : memref<8xf32> = dense<1.0>
func.func @nested_and_global(%a: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %g = memref.get_global @table : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %g[%k] : memref<8xf32>
      memref.store %x, %a[%i, %k] : memref<4x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

func.func @host_access(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{'memref.load' op would access device memory from the host: the CUDA target runs only parallel loops and runtime calls there}}
  %x = memref.load %a[%c0] : memref<4xf32>
  return %x : f32
}

// -----

func.func @reduction(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @below {{'scf.parallel' op with reductions cannot become a kernel}}
  %s = scf.parallel (%i) = (%c0) to (%c4) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<4xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %y = arith.addf %l, %r : f32
      scf.reduce.return %y : f32
    }
  }
  return %s : f32
}

// dtensor.scatter_add bufferizes into its init's buffer: a parallel loop
// over the trailing dims, the rows in order inside it (rows that share an
// index add into one element), a range check per row, a load, an add and a
// store per element. Here the init is a fresh zero fill, added into in
// place.
// RUN: dtensor-opt %s --split-input-file --dtensor-prepare-collectives --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s
// The CUDA target maps the parallel loop to a kernel: one thread per
// trailing element, each walking the rows.
// RUN: dtensor-opt %s --split-input-file --pass-pipeline='builtin.module(dtensor-prepare-collectives,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(dtensor-gpu-linalg-to-parallel-loops,dtensor-gpu-map-parallel-loops))' | FileCheck %s --check-prefix=GPU
// The whole CPU pipeline lowers it.
// RUN: dtensor-opt %s --split-input-file --dtensor-cpu-lowering | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @zeros(
// CHECK-SAME: %[[U:[^:]*]]: memref<6x8xf32>, %[[I:[^:]*]]: memref<6xi32>) -> memref<16x8xf32>
// CHECK: %[[T:.*]] = memref.alloc() {{.*}} : memref<16x8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[T]] : memref<16x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 16 : index
// CHECK: scf.parallel (%[[D:.*]]) = ({{.*}}) to ({{.*}}) step
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[ID:.*]] = memref.load %[[I]][%[[N]]] : memref<6xi32>
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[ROW]], %[[ZERO]] : index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[ROW]], %[[ROWS]] : index
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: scf.if %[[IN]] {
// CHECK: %[[X:.*]] = memref.load %[[U]][%[[N]], %[[D]]] : memref<6x8xf32>
// CHECK: %[[OLD:.*]] = memref.load %[[T]][%[[ROW]], %[[D]]] : memref<16x8xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[X]] : f32
// CHECK: memref.store %[[SUM]], %[[T]][%[[ROW]], %[[D]]] : memref<16x8xf32>
// CHECK: return %[[T]]
// GPU-LABEL: func.func @zeros(
// GPU: gpu.launch
// GPU: gpu.launch
// GPU: scf.for
// GPU: memref.load
// GPU: arith.addf
// GPU: memref.store
// CPU: llvm.func internal @zeros_loop1(
// CPU: llvm.fadd
// CPU: llvm.func @dtensor_entry_zeros
func.func @zeros(%u: tensor<6x8xf32>, %i: tensor<6xi32>) -> tensor<16x8xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %z0 = arith.constant 0.0 : f32
  %z = linalg.fill ins(%z0 : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %r = dtensor.scatter_add %u into %z at %i : tensor<6x8xf32> into tensor<16x8xf32>, tensor<6xi32>
  return %r : tensor<16x8xf32>
}

// -----

// A 1-D table: one iteration of the parallel loop.
// CHECK-LABEL: func.func @vector(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<9xf32>
// CHECK: arith.addf
// CPU: llvm.func @dtensor_entry_vector
func.func @vector(%u: tensor<5xf32>, %t: tensor<9xf32>, %i: tensor<5xi64>) -> tensor<9xf32> {
  %r = dtensor.scatter_add %u into %t at %i : tensor<5xf32> into tensor<9xf32>, tensor<5xi64>
  return %r : tensor<9xf32>
}

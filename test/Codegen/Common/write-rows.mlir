// dtensor.write_rows bufferizes into its cache's buffer: a parallel loop over
// the trailing dims, the rows in order inside it, a range check per row and
// a store per element. One-shot analysis writes in place when it may and
// copies the cache first when the old contents are read afterwards or the
// cache cannot be written (an entry's input).
// RUN: dtensor-opt %s --split-input-file --dtensor-prepare-collectives --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s
// The CUDA target maps the parallel loop to a kernel: one thread per
// trailing element, each walking the rows.
// RUN: dtensor-opt %s --split-input-file --pass-pipeline='builtin.module(dtensor-prepare-collectives,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(dtensor-gpu-linalg-to-parallel-loops,dtensor-gpu-map-parallel-loops))' | FileCheck %s --check-prefix=GPU
// The whole CPU pipeline lowers it (no call of MLIR's copy library).
// RUN: dtensor-opt %s --split-input-file --dtensor-cpu-lowering | FileCheck %s --check-prefix=CPU

// In place: the loops store into the cache argument itself; nothing is
// allocated or copied.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[V:[^:]*]]: memref<2x3x4x8xf32>, %[[C:[^:]*]]: memref<5x16x4x8xf32>, %[[S:[^:]*]]: memref<2xi64>, %[[P:[^:]*]]: memref<2xi32>) -> memref<5x16x4x8xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[NSLOTS:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[LAST:.*]] = arith.constant 13 : i64
// CHECK: scf.parallel (%[[H:.*]], %[[D:.*]]) = ({{.*}}) to ({{.*}}) step
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[SLOT:.*]] = memref.load %[[S]][%[[B]]] : memref<2xi64>
// CHECK: %[[POS32:.*]] = memref.load %[[P]][%[[B]]] : memref<2xi32>
// CHECK: %[[POS:.*]] = arith.extsi %[[POS32]] : i32 to i64
// CHECK: arith.cmpi sge, %[[SLOT]], %[[ZERO]]
// CHECK: arith.cmpi slt, %[[SLOT]], %[[NSLOTS]]
// CHECK: arith.cmpi sge, %[[POS]], %[[ZERO]]
// CHECK: arith.cmpi sle, %[[POS]], %[[LAST]]
// CHECK: scf.if
// CHECK: %[[SI:.*]] = arith.index_cast %[[SLOT]] : i64 to index
// CHECK: %[[PI:.*]] = arith.index_cast %[[POS]] : i64 to index
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[AT:.*]] = arith.addi %[[PI]], %[[T]] : index
// CHECK: %[[E:.*]] = memref.load %[[V]][%[[B]], %[[T]], %[[H]], %[[D]]]
// CHECK: memref.store %[[E]], %[[C]][%[[SI]], %[[AT]], %[[H]], %[[D]]]
// CHECK-NOT: memref.copy
// CHECK: return %[[C]]

// GPU-LABEL: func.func @in_place(
// GPU: gpu.launch
// GPU: scf.for
// GPU: memref.load
// GPU: scf.if
// GPU: scf.for
// GPU: memref.store
// GPU: gpu.terminator
// GPU-NOT: scf.parallel

// CPU: llvm.func @dtensor_entry_in_place
// CPU-NOT: memrefCopy
func.func @in_place(%v: tensor<2x3x4x8xf32>, %c: tensor<5x16x4x8xf32>,
                    %s: tensor<2xi64>, %p: tensor<2xi32>) -> tensor<5x16x4x8xf32> {
  %r = dtensor.write_rows %v into %c at slots(%s) positions(%p)
      : tensor<2x3x4x8xf32> into tensor<5x16x4x8xf32>, tensor<2xi64>, tensor<2xi32>
  return %r : tensor<5x16x4x8xf32>
}

// -----

// The old cache is returned too: the rows go into a copy of it.
// CHECK-LABEL: func.func @old_cache_read_after(
// CHECK-SAME: %[[V:[^:]*]]: memref<1x2x3xf32>, %[[C:[^:]*]]: memref<4x6x3xf32>,
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4x6x3xf32>
// CHECK: memref.copy %[[C]], %[[COPY]]
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[COPY]][
// CHECK: return %[[C]], %[[COPY]]
func.func @old_cache_read_after(%v: tensor<1x2x3xf32>, %c: tensor<4x6x3xf32>, %i: tensor<1xi64>)
    -> (tensor<4x6x3xf32>, tensor<4x6x3xf32>) {
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i)
      : tensor<1x2x3xf32> into tensor<4x6x3xf32>, tensor<1xi64>, tensor<1xi64>
  return %c, %r : tensor<4x6x3xf32>, tensor<4x6x3xf32>
}

// -----

// A cache the function may not write (an entry's input) is copied first.
// CHECK-LABEL: func.func @read_only_cache(
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4x6x3xf32>
// CHECK: memref.copy %{{.*}}, %[[COPY]]
// CHECK: memref.store %{{.*}}, %[[COPY]][
// CHECK: return %[[COPY]]
func.func @read_only_cache(%v: tensor<1x2x3xf32>, %c: tensor<4x6x3xf32> {bufferization.writable = false}, %i: tensor<1xi64>)
    -> tensor<4x6x3xf32> {
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i)
      : tensor<1x2x3xf32> into tensor<4x6x3xf32>, tensor<1xi64>, tensor<1xi64>
  return %r : tensor<4x6x3xf32>
}

// -----

// Two writes in a row (keys, then values of the same step into one buffer)
// chain in place; dynamic trailing dims (an unevenly sharded head dim) give
// the parallel loop a dynamic bound; without trailing dims the parallel
// loop has one iteration.
// CHECK-LABEL: func.func @chained(
// CHECK-SAME: %[[C:[^:]*]]: memref<4x6x?xf32>
// CHECK-NOT: memref.alloc
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c2
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]])
// CHECK: memref.store %{{.*}}, %[[C]][
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[C]][
// CHECK-NOT: memref.copy
// CHECK: return %[[C]]
func.func @chained(%c: tensor<4x6x?xf32>, %v: tensor<1x2x?xf32>, %w: tensor<1x1x?xf32>, %i: tensor<1xi64>)
    -> tensor<4x6x?xf32> {
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i)
      : tensor<1x2x?xf32> into tensor<4x6x?xf32>, tensor<1xi64>, tensor<1xi64>
  %s = dtensor.write_rows %w into %r at slots(%i) positions(%i)
      : tensor<1x1x?xf32> into tensor<4x6x?xf32>, tensor<1xi64>, tensor<1xi64>
  return %s : tensor<4x6x?xf32>
}

// CHECK-LABEL: func.func @no_trailing_dims(
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[ONE]])
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<3x5xi32>
func.func @no_trailing_dims(%v: tensor<2x2xi32>, %c: tensor<3x5xi32>, %i: tensor<2xi32>) -> tensor<3x5xi32> {
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i)
      : tensor<2x2xi32> into tensor<3x5xi32>, tensor<2xi32>, tensor<2xi32>
  return %r : tensor<3x5xi32>
}

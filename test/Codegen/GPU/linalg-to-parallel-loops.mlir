// RUN: dtensor-opt %s --pass-pipeline='builtin.module(func.func(dtensor-gpu-linalg-to-parallel-loops))' --split-input-file --verify-diagnostics | FileCheck %s

// A row reduction: a parallel loop over the rows with the reduction as a
// sequential loop inside.
// CHECK-LABEL: func.func @row_sum(
// CHECK-NOT: linalg.
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: scf.for %[[J:.*]] =
// CHECK: %[[II:.*]] = affine.apply #{{.*}}(%[[I]])
// CHECK: %[[JJ:.*]] = affine.apply #{{.*}}(%[[J]])
// CHECK: memref.load %{{.*}}[%[[II]], %[[JJ]]]
// CHECK: arith.addf
// CHECK: memref.store
func.func @row_sum(%a: memref<4x8xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Ops without a parallel dim (a full reduction, a 0-d op) get a parallel
// loop of one iteration around their code.
// CHECK-LABEL: func.func @no_parallel_dims(
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]])
// CHECK: scf.for
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK-NOT: scf.for
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK: math.exp
// CHECK: memref.store
func.func @no_parallel_dims(%a: memref<8xf32>, %s: memref<f32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(j) -> (j)>,
                                   affine_map<(j) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%a : memref<8xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>,
                                   affine_map<() -> ()>],
                  iterator_types = []}
      ins(%s : memref<f32>) outs(%t : memref<f32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Copies, contiguous ones included, become loops: the host cannot memcpy
// device buffers.
// CHECK-LABEL: func.func @copy(
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: memref.load
// CHECK: memref.store
func.func @copy(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

func.func @tensors(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{is not on buffers: the CUDA target lowers linalg ops after bufferization}}
  %c = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

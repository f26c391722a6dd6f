// Gradient buckets of --dtensor-fuse-collectives fill in backward order: a
// training step lists its gradient reductions after the whole backward, in
// parameter order, while the backward computes the gradients in reverse.
// Each reduction moves up to where its gradient exists, buckets fill in
// that order, and each bucket sits right after its last gradient, so that
// it communicates while the rest of the backward runs.
// A bucket of at most 64 bytes per rank holds two tensor<8xf32>.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false bucket-bytes=64' | FileCheck %s
// With overlap, each bucket starts there and is waited for at its first use.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='bucket-bytes=64' | FileCheck %s --check-prefix=OVERLAP
// Bucketing off: the reductions stay where they are.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false bucket-bytes=0' | FileCheck %s --check-prefix=OFF

dtensor.mesh @dp shape [2]

// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[D4:.*]] = math.exp %[[X]]
// CHECK-NEXT: %[[G4:.*]] = math.tanh %[[D4]]
// CHECK-NEXT: %[[D3:.*]] = math.exp %[[D4]]
// CHECK-NEXT: %[[G3:.*]] = math.tanh %[[D3]]
// CHECK-NEXT: %[[B1:.*]]:2 = dtensor.all_reduce sum %[[G4]], %[[G3]] on @dp mesh_dims [0]
// CHECK-NEXT: %[[D2:.*]] = math.exp %[[D3]]
// CHECK-NEXT: %[[G2:.*]] = math.tanh %[[D2]]
// CHECK-NEXT: %[[D1:.*]] = math.exp %[[D2]]
// CHECK-NEXT: %[[G1:.*]] = math.tanh %[[D1]]
// CHECK-NEXT: %[[B2:.*]]:2 = dtensor.all_reduce sum %[[G2]], %[[G1]] on @dp mesh_dims [0]
// CHECK-NEXT: %[[N:.*]] = arith.addf %[[B2]]#1, %[[B2]]#0
// CHECK-NEXT: return %[[N]], %[[B2]]#1, %[[B2]]#0, %[[B1]]#1, %[[B1]]#0

// OVERLAP-LABEL: func.func @backward
// OVERLAP:      math.tanh
// OVERLAP-NEXT: %[[D3:.*]] = math.exp
// OVERLAP-NEXT: %[[G3:.*]] = math.tanh %[[D3]]
// OVERLAP-NEXT: %[[F1:.*]]:2 = dtensor.start {
// OVERLAP-NEXT:   dtensor.all_reduce sum
// OVERLAP:      %[[D2:.*]] = math.exp %[[D3]]
// OVERLAP-NEXT: %[[G2:.*]] = math.tanh %[[D2]]
// OVERLAP-NEXT: %[[D1:.*]] = math.exp %[[D2]]
// OVERLAP-NEXT: %[[G1:.*]] = math.tanh %[[D1]]
// OVERLAP-NEXT: %[[F2:.*]]:2 = dtensor.start {
// OVERLAP-NEXT:   dtensor.all_reduce sum %[[G2]], %[[G1]]
// OVERLAP:      dtensor.wait %[[F2]]#0, %[[F2]]#1
// OVERLAP-NEXT: arith.addf
// OVERLAP-NEXT: dtensor.wait %[[F1]]#0, %[[F1]]#1
// OVERLAP-NEXT: return

// OFF-LABEL: func.func @backward
// OFF-NEXT: math.exp
// OFF-NEXT: math.tanh
// OFF-NEXT: math.exp
// OFF-NEXT: math.tanh
// OFF-NEXT: math.exp
// OFF-NEXT: math.tanh
// OFF-NEXT: math.exp
// OFF-NEXT: math.tanh
// OFF-NEXT: %[[R1:.*]] = dtensor.all_reduce sum
// OFF-NEXT: %[[R2:.*]] = dtensor.all_reduce sum
// OFF-NEXT: %[[R3:.*]] = dtensor.all_reduce sum
// OFF-NEXT: %[[R4:.*]] = dtensor.all_reduce sum
// OFF-NEXT: arith.addf %[[R1]], %[[R2]]
func.func @backward(%x: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %d4 = math.exp %x : tensor<8xf32>
  %g4 = math.tanh %d4 : tensor<8xf32>
  %d3 = math.exp %d4 : tensor<8xf32>
  %g3 = math.tanh %d3 : tensor<8xf32>
  %d2 = math.exp %d3 : tensor<8xf32>
  %g2 = math.tanh %d2 : tensor<8xf32>
  %d1 = math.exp %d2 : tensor<8xf32>
  %g1 = math.tanh %d1 : tensor<8xf32>
  %r1 = dtensor.all_reduce sum %g1 on @dp mesh_dims [0] : tensor<8xf32>
  %r2 = dtensor.all_reduce sum %g2 on @dp mesh_dims [0] : tensor<8xf32>
  %r3 = dtensor.all_reduce sum %g3 on @dp mesh_dims [0] : tensor<8xf32>
  %r4 = dtensor.all_reduce sum %g4 on @dp mesh_dims [0] : tensor<8xf32>
  %n = arith.addf %r1, %r2 : tensor<8xf32>
  return %n, %r1, %r2, %r3, %r4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

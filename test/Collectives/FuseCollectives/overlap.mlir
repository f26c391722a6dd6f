// The async phase of --dtensor-fuse-collectives: every collective becomes a
// dtensor.start, hoisted as early as its operands allow, and a dtensor.wait
// right before the first user of its results. Bucketing is off so that each
// collective stays on its own.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='bucket-bytes=0' | FileCheck %s
// overlap=false leaves the collectives synchronous and in place.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='bucket-bytes=0 overlap=false' | FileCheck %s --check-prefix=SYNC

dtensor.mesh @tp shape [4]
dtensor.mesh @m shape [2, 2]

// The all_reduce starts right after its operand exists; the independent
// matmul-like work runs before the wait.
// CHECK-LABEL: func.func @overlap_compute
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[P:.*]] = math.exp %[[X]]
// CHECK-NEXT: %[[F:.*]] = dtensor.start {
// CHECK-NEXT:   %[[R:.*]] = dtensor.all_reduce sum %[[P]] on @tp mesh_dims [0] : tensor<8xf32>
// CHECK-NEXT:   dtensor.yield %[[R]] : tensor<8xf32>
// CHECK-NEXT: } : !dtensor.future<tensor<8xf32>>
// CHECK-NEXT: %[[A:.*]] = math.tanh %[[Y]]
// CHECK-NEXT: %[[B:.*]] = math.sqrt %[[A]]
// CHECK-NEXT: %[[W:.*]] = dtensor.wait %[[F]] : !dtensor.future<tensor<8xf32>>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[W]], %[[B]]
// CHECK-NEXT: return %[[S]]
// SYNC-LABEL: func.func @overlap_compute
// SYNC-NOT: dtensor.start
// SYNC-NOT: dtensor.wait
// SYNC:      math.exp
// SYNC-NEXT: math.tanh
// SYNC-NEXT: math.sqrt
// SYNC-NEXT: dtensor.all_reduce
// SYNC-NEXT: arith.addf
func.func @overlap_compute(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %p = math.exp %x : tensor<8xf32>
  %a = math.tanh %y : tensor<8xf32>
  %b = math.sqrt %a : tensor<8xf32>
  %r = dtensor.all_reduce sum %p on @tp mesh_dims [0] : tensor<8xf32>
  %s = arith.addf %r, %b : tensor<8xf32>
  return %s : tensor<8xf32>
}

// Every collective kind; collectives start in program order even when a
// later one's operands exist earlier; a result only returned waits before
// the return.
// CHECK-LABEL: func.func @kinds
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>, %[[Y:.*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[E:.*]] = math.exp %[[X]]
// CHECK-NEXT: %[[F0:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.broadcast %[[E]] on @m mesh_dims [0] root 1 : tensor<8x4xf32>
// CHECK:      %[[F1:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_gather %[[Y]] on @tp mesh_dims [0] gather_dim 0
// CHECK:      %[[F2:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.reduce_scatter sum %[[X]] on @tp mesh_dims [0] scatter_dim 1
// CHECK:      %[[F3:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_to_all %[[Y]] on @m mesh_dims [0, 1] split_dim 1 concat_dim 0
// CHECK:      } : !dtensor.future<tensor<8x1xf32>>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[X]]
// CHECK-NEXT: %[[W0:.*]] = dtensor.wait %[[F0]]
// CHECK-NEXT: %[[U:.*]] = arith.addf %[[T]], %[[W0]]
// CHECK-NEXT: %[[W1:.*]] = dtensor.wait %[[F1]]
// CHECK-NEXT: %[[W2:.*]] = dtensor.wait %[[F2]]
// CHECK-NEXT: %[[W3:.*]] = dtensor.wait %[[F3]]
// CHECK-NEXT: return %[[U]], %[[W1]], %[[W2]], %[[W3]]
func.func @kinds(%x: tensor<8x4xf32>, %y: tensor<2x4xf32>)
    -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x1xf32>, tensor<8x1xf32>) {
  %e = math.exp %x : tensor<8x4xf32>
  %b = dtensor.broadcast %e on @m mesh_dims [0] root 1 : tensor<8x4xf32>
  %t = math.tanh %x : tensor<8x4xf32>
  %g = dtensor.all_gather %y on @tp mesh_dims [0] gather_dim 0 : tensor<2x4xf32> -> tensor<8x4xf32>
  %u = arith.addf %t, %b : tensor<8x4xf32>
  %s = dtensor.reduce_scatter sum %x on @tp mesh_dims [0] scatter_dim 1 : tensor<8x4xf32> -> tensor<8x1xf32>
  %a = dtensor.all_to_all %y on @m mesh_dims [0, 1] split_dim 1 concat_dim 0 : tensor<2x4xf32> -> tensor<8x1xf32>
  return %u, %g, %s, %a : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x1xf32>, tensor<8x1xf32>
}

// A chain: each collective needs the one before, so each start waits for
// the previous wait. Uneven (dynamic) shapes change nothing.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[F0:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.reduce_scatter sum %{{.*}} on @tp mesh_dims [0] scatter_dim 0 : tensor<10x4xf32> -> tensor<?x4xf32>
// CHECK:      %[[W0:.*]] = dtensor.wait %[[F0]] : !dtensor.future<tensor<?x4xf32>>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[W0]]
// CHECK-NEXT: %[[F1:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_gather %[[E]] on @tp mesh_dims [0] gather_dim 0 : tensor<?x4xf32> -> tensor<10x4xf32>
// CHECK:      %[[W1:.*]] = dtensor.wait %[[F1]]
// CHECK-NEXT: return %[[W1]]
func.func @chain(%p: tensor<10x4xf32>) -> tensor<10x4xf32> {
  %s = dtensor.reduce_scatter sum %p on @tp mesh_dims [0] scatter_dim 0 : tensor<10x4xf32> -> tensor<?x4xf32>
  %e = math.exp %s : tensor<?x4xf32>
  %g = dtensor.all_gather %e on @tp mesh_dims [0] gather_dim 0 : tensor<?x4xf32> -> tensor<10x4xf32>
  return %g : tensor<10x4xf32>
}

func.func private @opaque(tensor<8xf32>) -> tensor<8xf32>

// A start does not move above a call (it may communicate); the wait may
// sink below one.
// CHECK-LABEL: func.func @barrier
// CHECK-NEXT: %[[C:.*]] = call @opaque
// CHECK-NEXT: %[[F:.*]] = dtensor.start {
// CHECK:      %[[K:.*]] = call @opaque
// CHECK-NEXT: %[[W:.*]] = dtensor.wait %[[F]]
// CHECK-NEXT: return %[[W]], %[[K]]
func.func @barrier(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = func.call @opaque(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  %k = func.call @opaque(%c) : (tensor<8xf32>) -> tensor<8xf32>
  return %r, %k : tensor<8xf32>, tensor<8xf32>
}

// Inside a loop body, the start and wait stay in the body; a collective
// already issued asynchronously is left as it is. A result used inside a
// nested region waits before the op holding that region.
// CHECK-LABEL: func.func @regions
// CHECK:      scf.for
// CHECK-NEXT:   %[[F:.*]] = dtensor.start {
// CHECK-NEXT:     dtensor.all_reduce sum
// CHECK-NEXT:     dtensor.yield
// CHECK-NEXT:   } : !dtensor.future<tensor<8xf32>>
// CHECK-NEXT:   %[[T:.*]] = math.tanh
// CHECK-NEXT:   %[[W:.*]] = dtensor.wait %[[F]]
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[W]], %[[T]]
// CHECK-NEXT:   scf.yield %[[S]]
// CHECK:      %[[G:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_gather
// CHECK-NEXT:   dtensor.yield
// CHECK-NEXT: } : !dtensor.future<tensor<8xf32>>
// CHECK-NEXT: %[[H:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_reduce max
// CHECK-NEXT:   dtensor.yield
// CHECK-NEXT: } : !dtensor.future<tensor<8xf32>>
// CHECK-NEXT: %[[V:.*]] = dtensor.wait %[[G]]
// CHECK-NEXT: %[[M:.*]] = dtensor.wait %[[H]]
// CHECK-NEXT: scf.if
// CHECK-NEXT:   scf.yield %[[M]]
func.func @regions(%x: tensor<8xf32>, %y: tensor<2xf32>, %n: index, %c: i1) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<8xf32> {
    %t = math.tanh %acc : tensor<8xf32>
    %r = dtensor.all_reduce sum %acc on @tp mesh_dims [0] : tensor<8xf32>
    %s = arith.addf %r, %t : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  %f = dtensor.start {
    %g = dtensor.all_gather %y on @tp mesh_dims [0] gather_dim 0 : tensor<2xf32> -> tensor<8xf32>
    dtensor.yield %g : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  %m = dtensor.all_reduce max %x on @tp mesh_dims [0] : tensor<8xf32>
  %v = dtensor.wait %f : !dtensor.future<tensor<8xf32>>
  %z = scf.if %c -> tensor<8xf32> {
    scf.yield %m : tensor<8xf32>
  } else {
    scf.yield %x : tensor<8xf32>
  }
  return %l, %v, %z : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Folding of dtensor.redistribute and normalisation of negative shard dims.
// RUN: dtensor-opt %s --canonicalize --split-input-file | FileCheck %s

dtensor.mesh @m shape [2, 2]

// A redistribute to the layout the value already has disappears.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dtensor.redistribute %x from <@m, [shard<0>, partial<max>]> to <@m, [shard<0>, partial<max>]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Layouts that differ only in the spelling of a shard dim are equal.
// CHECK-LABEL: func.func @identity_negative_dim
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_negative_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dtensor.redistribute %x from <@m, [shard<-1>, replicate]> to <@m, [shard<1>, replicate]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A real change of layout stays; its shard dims are normalised.
// CHECK-LABEL: func.func @kept
// CHECK: dtensor.redistribute %{{.*}} from <@m, [shard<1>, replicate]> to <@m, [replicate, shard<0>]> : tensor<4x8xf32>
func.func @kept(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dtensor.redistribute %x from <@m, [shard<-1>, replicate]> to <@m, [replicate, shard<-2>]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Partial kinds are part of the layout: sum and avg differ.
// CHECK-LABEL: func.func @partial_kinds_differ
// CHECK: dtensor.redistribute %{{.*}} from <@m, [partial<sum>, replicate]> to <@m, [partial<avg>, replicate]>
func.func @partial_kinds_differ(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dtensor.redistribute %x from <@m, [partial<sum>, replicate]> to <@m, [partial<avg>, replicate]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A user annotation is never folded away, even when it looks redundant;
// its shard dims are normalised.
// CHECK-LABEL: func.func @distribute_kept
// CHECK: %[[A:.*]] = dtensor.distribute %{{.*}} to <@m, [shard<2>, replicate]> : tensor<2x4x8xf32>
// CHECK: dtensor.distribute %[[A]] to <@m, [shard<2>, replicate]> : tensor<2x4x8xf32>
func.func @distribute_kept(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = dtensor.distribute %x to <@m, [shard<-1>, replicate]> : tensor<2x4x8xf32>
  %1 = dtensor.distribute %0 to <@m, [shard<2>, replicate]> : tensor<2x4x8xf32>
  return %1 : tensor<2x4x8xf32>
}

// -----

dtensor.mesh @m shape [2]

// Chains fold link by link.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[R:.*]] = dtensor.redistribute %{{.*}} from <@m, [shard<0>]> to <@m, [replicate]>
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dtensor.redistribute %x from <@m, [shard<0>]> to <@m, [shard<-1>]> : tensor<4xf32>
  %1 = dtensor.redistribute %0 from <@m, [shard<0>]> to <@m, [replicate]> : tensor<4xf32>
  %2 = dtensor.redistribute %1 from <@m, [replicate]> to <@m, [replicate]> : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Collectives whose results are unused have no effect and are erased (on
// every rank alike, as all ranks run the same program).
// CHECK-LABEL: func.func @dead_collective
// CHECK-NOT: dtensor.all_reduce
func.func @dead_collective(%x: tensor<4xf32>) {
  %0 = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<4xf32>
  return
}

// An asynchronous collective whose results are unused is erased like a
// synchronous one: the wait first, then the start.
// CHECK-LABEL: func.func @dead_async_collective
// CHECK-NEXT: return
func.func @dead_async_collective(%x: tensor<4xf32>) {
  %f = dtensor.start {
    %0 = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<4xf32>
    dtensor.yield %0 : tensor<4xf32>
  } : !dtensor.future<tensor<4xf32>>
  %1 = dtensor.wait %f : !dtensor.future<tensor<4xf32>>
  return
}

// A used one stays as written.
// CHECK-LABEL: func.func @live_async_collective
// CHECK-NEXT: %[[F:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_reduce
// CHECK-NEXT:   dtensor.yield
// CHECK-NEXT: } : !dtensor.future<tensor<4xf32>>
// CHECK-NEXT: %[[W:.*]] = dtensor.wait %[[F]]
// CHECK-NEXT: return %[[W]]
func.func @live_async_collective(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = dtensor.start {
    %0 = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<4xf32>
    dtensor.yield %0 : tensor<4xf32>
  } : !dtensor.future<tensor<4xf32>>
  %1 = dtensor.wait %f : !dtensor.future<tensor<4xf32>>
  return %1 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]

// dtensor.to_layout never folds away; its shard dims are normalised.
// CHECK-LABEL: func.func @to_layout_kept
// CHECK: dtensor.to_layout %{{.*}} to <@m, [shard<1>, replicate]> : tensor<4x8xf32>
func.func @to_layout_kept(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = dtensor.to_layout %x to <@m, [shard<-1>, replicate]> : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

dtensor.mesh @m shape [2]

// Normalising a head-tail shard's dim keeps it head-tail; a head-tail shard
// and a plain one of the same dim are different layouts, so the
// redistribute between them stays.
// CHECK-LABEL: func.func @head_tail_kept
// CHECK: %[[A:.*]] = dtensor.distribute %{{.*}} to <@m, [shard<1, head_tail>]> : tensor<2x8xf32>
// CHECK: dtensor.redistribute %[[A]] from <@m, [shard<1, head_tail>]> to <@m, [shard<1>]> : tensor<2x8xf32>
func.func @head_tail_kept(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = dtensor.distribute %x to <@m, [shard<-1, head_tail>]> : tensor<2x8xf32>
  %1 = dtensor.redistribute %0 from <@m, [shard<-1, head_tail>]> to <@m, [shard<1>]> : tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

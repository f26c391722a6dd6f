// --dtensor-fuse-collectives with its default options on per-rank programs:
// rewrites, then bucketing, then start/wait, each phase on the output of
// the one before.
// RUN: dtensor-opt %s --dtensor-fuse-collectives | FileCheck %s
// The output is a fixed point: collectives issued by a start are left alone.
// RUN: dtensor-opt %s --dtensor-fuse-collectives > %t.mlir
// RUN: dtensor-opt %t.mlir --dtensor-fuse-collectives | diff %t.mlir -

dtensor.mesh @mesh shape [2, 4] names ["dp", "tp"]

// Sequence-parallel MLP on "tp" with data-parallel gradients on "dp". The
// activation comes back from a reduce_scatter and is gathered again: the two
// become one all_reduce, whose chunk the residual keeps. The two weight
// gradients are reduced over "dp" in one call that starts as soon as the
// second exists and is waited for only at the return.
// CHECK-LABEL: func.func @sp_mlp_step
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x16xf32>, %[[W1:[^:]*]]: tensor<16x8xf32>, %[[W2:[^:]*]]: tensor<8x16xf32>, %[[P:[^:]*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[FX:.*]] = dtensor.start {
// CHECK-NEXT:   %[[GX:.*]] = dtensor.all_gather %[[X]] on @mesh mesh_dims [1] gather_dim 0 : tensor<2x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:   dtensor.yield %[[GX]]
// CHECK-NEXT: } : !dtensor.future<tensor<8x16xf32>>
// CHECK-NEXT: %[[FR:.*]] = dtensor.start {
// CHECK-NEXT:   %[[R:.*]] = dtensor.all_reduce sum %[[P]] on @mesh mesh_dims [1] : tensor<8x16xf32>
// CHECK-NEXT:   dtensor.yield %[[R]]
// CHECK-NEXT: } : !dtensor.future<tensor<8x16xf32>>
// CHECK-NEXT: arith.constant
// CHECK-NEXT: tensor.empty() : tensor<8x8xf32>
// CHECK-NEXT: %[[Z1:.*]] = linalg.fill
// CHECK-NEXT: %[[AX:.*]] = dtensor.wait %[[FX]]
// CHECK-NEXT: %[[H:.*]] = linalg.matmul ins(%[[AX]], %[[W1]]
// CHECK-NEXT: %[[A:.*]] = math.tanh %[[H]]
// CHECK-NEXT: tensor.empty() : tensor<8x16xf32>
// CHECK-NEXT: %[[Z2:.*]] = linalg.fill
// CHECK-NEXT: %[[Y:.*]] = linalg.matmul ins(%[[A]], %[[W2]]
// CHECK-NEXT: %[[AR:.*]] = dtensor.wait %[[FR]]
// CHECK-NEXT: %[[RES:.*]] = dtensor.chunk %[[AR]] on @mesh mesh_dims [1] dim 0 : tensor<8x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[OUT:.*]] = arith.addf %[[RES]], %[[X]]
// CHECK-NEXT: tensor.empty() : tensor<16x8xf32>
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: %[[G1:.*]] = linalg.matmul ins(%[[W1]], %[[A]]
// CHECK-NEXT: %[[G2:.*]] = linalg.matmul ins(%[[A]], %[[Y]]
// CHECK-NEXT: %[[FG:.*]]:2 = dtensor.start {
// CHECK-NEXT:   %[[RG:.*]]:2 = dtensor.all_reduce avg %[[G1]], %[[G2]] on @mesh mesh_dims [0] : tensor<16x8xf32>, tensor<8x16xf32>
// CHECK-NEXT:   dtensor.yield %[[RG]]#0, %[[RG]]#1
// CHECK-NEXT: } : !dtensor.future<tensor<16x8xf32>>, !dtensor.future<tensor<8x16xf32>>
// CHECK-NEXT: %[[GR:.*]]:2 = dtensor.wait %[[FG]]#0, %[[FG]]#1
// CHECK-NEXT: return %[[OUT]], %[[AR]], %[[GR]]#0, %[[GR]]#1
func.func @sp_mlp_step(%x: tensor<2x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x16xf32>, %p: tensor<8x16xf32>)
    -> (tensor<2x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  // Shard(0) -> Replicate over "tp".
  %xg = dtensor.all_gather %x on @mesh mesh_dims [1] gather_dim 0 : tensor<2x16xf32> -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<8x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %h = linalg.matmul ins(%xg, %w1 : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = math.tanh %h : tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<8x8xf32>, tensor<8x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  // Partial -> Shard(0), then Shard(0) -> Replicate for another consumer.
  %ys = dtensor.reduce_scatter sum %p on @mesh mesh_dims [1] scatter_dim 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  %out = arith.addf %ys, %x : tensor<2x16xf32>
  %yr = dtensor.all_gather %ys on @mesh mesh_dims [1] gather_dim 0 : tensor<2x16xf32> -> tensor<8x16xf32>
  // Weight gradients, averaged over "dp".
  %e3 = tensor.empty() : tensor<16x8xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %g1 = linalg.matmul ins(%w1, %a : tensor<16x8xf32>, tensor<8x8xf32>) outs(%z3 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %g1r = dtensor.all_reduce avg %g1 on @mesh mesh_dims [0] : tensor<16x8xf32>
  %g2 = linalg.matmul ins(%a, %y : tensor<8x8xf32>, tensor<8x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %g2r = dtensor.all_reduce avg %g2 on @mesh mesh_dims [0] : tensor<8x16xf32>
  return %out, %yr, %g1r, %g2r : tensor<2x16xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8x16xf32>
}

dtensor.mesh @tp3 shape [3]

// Partial sums reduced and then sharded (10 rows over 3 ranks: 4, 4, 2):
// each pair becomes a reduce_scatter, and both travel in one call.
// CHECK-LABEL: func.func @reduce_then_shard
// CHECK-SAME: (%[[P:.*]]: tensor<10x4xf32>, %[[Q:.*]]: tensor<10x4xf32>)
// CHECK-NEXT: %[[F:.*]]:2 = dtensor.start {
// CHECK-NEXT:   %[[S:.*]]:2 = dtensor.reduce_scatter sum %[[P]], %[[Q]] on @tp3 mesh_dims [0] scatter_dim 0 : tensor<10x4xf32>, tensor<10x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>
// CHECK-NEXT:   dtensor.yield %[[S]]#0, %[[S]]#1
// CHECK-NEXT: } : !dtensor.future<tensor<?x4xf32>>, !dtensor.future<tensor<?x4xf32>>
// CHECK-NEXT: %[[W:.*]]:2 = dtensor.wait %[[F]]#0, %[[F]]#1
// CHECK-NEXT: return %[[W]]#0, %[[W]]#1
func.func @reduce_then_shard(%p: tensor<10x4xf32>, %q: tensor<10x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %r = dtensor.all_reduce sum %p on @tp3 mesh_dims [0] : tensor<10x4xf32>
  %a = dtensor.chunk %r on @tp3 mesh_dims [0] dim 0 : tensor<10x4xf32> -> tensor<?x4xf32>
  %s = dtensor.all_reduce sum %q on @tp3 mesh_dims [0] : tensor<10x4xf32>
  %b = dtensor.chunk %s on @tp3 mesh_dims [0] dim 0 : tensor<10x4xf32> -> tensor<?x4xf32>
  return %a, %b : tensor<?x4xf32>, tensor<?x4xf32>
}

// Megatron MLP blocks one after another: each all_reduce feeds the next
// block, so none can share a call, and each wait sits right before the next
// block's first matmul.
// CHECK-LABEL: func.func @tp_blocks
// CHECK:      linalg.matmul
// CHECK-NEXT: %[[F1:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_reduce sum %{{.*}} on @tp3 mesh_dims [0] : tensor<4x6xf32>
// CHECK:      %[[W1:.*]] = dtensor.wait %[[F1]]
// CHECK-NEXT: linalg.matmul ins(%[[W1]]
// CHECK-NEXT: %[[F2:.*]] = dtensor.start {
// CHECK-NEXT:   dtensor.all_reduce sum %{{.*}} on @tp3 mesh_dims [0] : tensor<4x6xf32>
// CHECK:      %[[W2:.*]] = dtensor.wait %[[F2]]
// CHECK-NEXT: return %[[W2]]
func.func @tp_blocks(%x: tensor<4x6xf32>, %w: tensor<6x6xf32>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p1 = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x6xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r1 = dtensor.all_reduce sum %p1 on @tp3 mesh_dims [0] : tensor<4x6xf32>
  %p2 = linalg.matmul ins(%r1, %w : tensor<4x6xf32>, tensor<6x6xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r2 = dtensor.all_reduce sum %p2 on @tp3 mesh_dims [0] : tensor<4x6xf32>
  return %r2 : tensor<4x6xf32>
}

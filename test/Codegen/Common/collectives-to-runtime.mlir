// The collectives bufferize into runtime calls: the buffers are queued
// (inputs, then outputs) and one call names the group, the reduction, the
// dim, the dtype and the count. mesh_coord becomes dtensor_rt_mesh_coord.
// RUN: dtensor-opt %s --dtensor-prepare-collectives --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --dtensor-lower-mesh-coords --canonicalize | FileCheck %s

dtensor.mesh @tp shape [4]
dtensor.mesh @m shape [2, 3]

// all_reduce reduces in place: its buffer is queued as input and output.
// Group 0 = (@tp, [0]); sum = 0, f32 = 0, count 1, synchronous.
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: memref<8xf32>) -> memref<8xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[G0:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[CAST:.*]] = memref.cast %[[X]] : memref<8xf32> to memref<*xf32>
// CHECK-NEXT: call @dtensor_rt_push_buffer__f32(%[[CAST]])
// CHECK: call @dtensor_rt_push_buffer__f32
// CHECK-NEXT: call @dtensor_rt_all_reduce(%[[G0]], %[[C0]], %[[C0]], %[[ONE]], %[[C0]]) : (i64, i32, i32, i64, i32) -> i64
// CHECK-NEXT: return %[[X]]
func.func @all_reduce(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  return %r : tensor<8xf32>
}

// The input is read afterwards: bufferization copies it first.
// CHECK-LABEL: func.func @all_reduce_copies
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: memref.copy %{{.*}}, %[[COPY]]
// CHECK: memref.cast %[[COPY]]
// CHECK: call @dtensor_rt_all_reduce
func.func @all_reduce_copies(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r = dtensor.all_reduce max %x on @tp mesh_dims [0] : tensor<8xf32>
  return %r, %x : tensor<8xf32>, tensor<8xf32>
}

// Two tensors in one call: all inputs, then all outputs; count 2.
// Group 1 = (@m, [1]); max = 2; f64 = 1.
// CHECK-LABEL: func.func @variadic
// CHECK-SAME: (%[[A:.*]]: memref<4xf64>, %[[B:.*]]: memref<2x2xf64>)
// CHECK-DAG: %[[G1:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[TWO64:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[MAX:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[F64:.*]] = arith.constant 1 : i32
// CHECK: memref.cast %[[A]]
// CHECK: memref.cast %[[B]]
// CHECK: memref.cast %[[A]]
// CHECK: memref.cast %[[B]]
// CHECK: call @dtensor_rt_all_reduce(%[[G1]], %[[MAX]], %[[F64]], %[[TWO64]], %{{.*}})
func.func @variadic(%a: tensor<4xf64>, %b: tensor<2x2xf64>) -> (tensor<4xf64>, tensor<2x2xf64>) {
  %r:2 = dtensor.all_reduce max %a, %b on @m mesh_dims [1] : tensor<4xf64>, tensor<2x2xf64>
  return %r#0, %r#1 : tensor<4xf64>, tensor<2x2xf64>
}

// A gathered dim of uneven pieces: its size is the group sum of the local
// sizes. Group 2 = (@m, [0, 1]); gather dim 0; i32 = 4.
// CHECK-LABEL: func.func @all_gather_uneven
// CHECK-SAME: (%[[X:.*]]: memref<?x3xi32>) -> memref<10x3xi32>
// CHECK-DAG: %[[G2:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[I32:.*]] = arith.constant 4 : i32
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<10x3xi32>
// CHECK: call @dtensor_rt_push_buffer__i32
// CHECK: call @dtensor_rt_push_buffer__i32
// CHECK: call @dtensor_rt_all_gather(%[[G2]], %{{.*}}, %[[I32]], %{{.*}}, %{{.*}})
// CHECK: return %[[OUT]]
func.func @all_gather_uneven(%x: tensor<?x3xi32>) -> tensor<10x3xi32> {
  %g = dtensor.all_gather %x on @m mesh_dims [0, 1] gather_dim 0 : tensor<?x3xi32> -> tensor<10x3xi32>
  return %g : tensor<10x3xi32>
}

// CHECK-LABEL: func.func @all_gather_dynamic
// CHECK-SAME: (%[[X:.*]]: memref<?x3xf32>) -> memref<?x3xf32>
// CHECK: %[[D:.*]] = memref.dim %[[X]], %{{.*}}
// CHECK: %[[D64:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK: %[[SUM:.*]] = call @dtensor_rt_group_sum(%{{.*}}, %[[D64]]) : (i64, i64) -> i64
// CHECK: %[[SIZE:.*]] = arith.index_cast %[[SUM]] : i64 to index
// CHECK: memref.alloc(%[[SIZE]]) {{.*}} : memref<?x3xf32>
// CHECK: call @dtensor_rt_all_gather
func.func @all_gather_dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %g = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0 : tensor<?x3xf32> -> tensor<?x3xf32>
  return %g : tensor<?x3xf32>
}

// An uneven scattered dim: this rank's chunk of 10 rows over 4 ranks,
// from its mesh coordinate (mesh 0 = @tp, dim 0). sum = 0, scatter dim 0.
// CHECK-LABEL: func.func @reduce_scatter_uneven
// CHECK: %[[COORD:.*]] = call @dtensor_rt_mesh_coord(%{{.*}}, %{{.*}}) : (i64, i64) -> i64
// CHECK: arith.index_cast %[[COORD]] : i64 to index
// CHECK: arith.minui
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x2xf32>
// CHECK: call @dtensor_rt_reduce_scatter(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i32, i64, i32, i64, i32) -> i64
// CHECK: return %[[OUT]]
func.func @reduce_scatter_uneven(%x: tensor<10x2xf32>) -> tensor<?x2xf32> {
  %s = dtensor.reduce_scatter sum %x on @tp mesh_dims [0] scatter_dim 0 : tensor<10x2xf32> -> tensor<?x2xf32>
  return %s : tensor<?x2xf32>
}

// Split dim 1 (uneven: chunk arithmetic), concat dim 0 (static here).
// CHECK-LABEL: func.func @all_to_all
// CHECK: call @dtensor_rt_mesh_coord
// CHECK: memref.alloc(%{{.*}}) {{.*}} : memref<8x?xf32>
// CHECK: call @dtensor_rt_all_to_all(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i32, i32) -> i64
func.func @all_to_all(%x: tensor<2x7xf32>) -> tensor<8x?xf32> {
  %t = dtensor.all_to_all %x on @tp mesh_dims [0] split_dim 1 concat_dim 0 : tensor<2x7xf32> -> tensor<8x?xf32>
  return %t : tensor<8x?xf32>
}

// CHECK-LABEL: func.func @broadcast
// CHECK-DAG: %[[ROOT:.*]] = arith.constant 3 : i64
// CHECK: call @dtensor_rt_broadcast(%{{.*}}, %[[ROOT]], %{{.*}}, %{{.*}}) : (i64, i64, i32, i32) -> i64
func.func @broadcast(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = dtensor.broadcast %x on @tp mesh_dims [0] root 3 : tensor<4xf32>
  return %b : tensor<4xf32>
}

// A slice is strided: it is copied into a contiguous buffer first.
// CHECK-LABEL: func.func @strided_input
// CHECK: %[[SUB:.*]] = memref.subview
// CHECK: %[[BUF:.*]] = memref.alloc() {{.*}} : memref<4x2xf32>
// CHECK: memref.copy %[[SUB]], %[[BUF]]
// CHECK: memref.cast %[[BUF]] : memref<4x2xf32> to memref<*xf32>
// CHECK: call @dtensor_rt_all_gather
func.func @strided_input(%x: tensor<4x4xf32>) -> tensor<4x8xf32> {
  %s = tensor.extract_slice %x[0, 1] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
  %g = dtensor.all_gather %s on @tp mesh_dims [0] gather_dim 1 : tensor<4x2xf32> -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @coords
// Mesh 1 (@m), mesh dim 1.
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[C:.*]] = call @dtensor_rt_mesh_coord(%[[ONE]], %[[ONE]])
// CHECK: %[[I:.*]] = arith.index_cast %[[C]] : i64 to index
// CHECK: return %[[I]]
func.func @coords() -> index {
  %c = dtensor.mesh_coord on @m mesh_dims [1] : index
  return %c : index
}

// A numbered collective announces its site just before its call.
// CHECK-LABEL: func.func @numbered
// CHECK-DAG: %[[SITE:.*]] = arith.constant 7 : i64
// CHECK: call @dtensor_rt_push_buffer__f32
// CHECK: call @dtensor_rt_push_buffer__f32
// CHECK-NEXT: call @dtensor_rt_collective_site(%[[SITE]]) : (i64) -> ()
// CHECK-NEXT: call @dtensor_rt_all_reduce(
// CHECK: call @dtensor_rt_push_buffer__f32
// CHECK: call @dtensor_rt_push_buffer__f32
// CHECK-NEXT: call @dtensor_rt_collective_site(%{{.*}}) : (i64) -> ()
// CHECK-NEXT: call @dtensor_rt_all_gather(
func.func @numbered(%x: tensor<8xf32>) -> tensor<32xf32> {
  %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] {dtensor.site = 7 : i64} : tensor<8xf32>
  %g = dtensor.all_gather %r on @tp mesh_dims [0] gather_dim 0 {dtensor.site = 8 : i64} : tensor<8xf32> -> tensor<32xf32>
  return %g : tensor<32xf32>
}

// The declarations, sorted by name.
// CHECK: func.func private @dtensor_rt_all_gather(i64, i64, i32, i64, i32) -> i64
// CHECK-NEXT: func.func private @dtensor_rt_all_reduce(i64, i32, i32, i64, i32) -> i64
// CHECK-NEXT: func.func private @dtensor_rt_all_to_all(i64, i64, i64, i32, i32) -> i64
// CHECK-NEXT: func.func private @dtensor_rt_broadcast(i64, i64, i32, i32) -> i64
// CHECK-NEXT: func.func private @dtensor_rt_collective_site(i64)
// CHECK-NEXT: func.func private @dtensor_rt_group_sum(i64, i64) -> i64
// CHECK-NEXT: func.func private @dtensor_rt_mesh_coord(i64, i64) -> i64
// CHECK-NEXT: func.func private @dtensor_rt_push_buffer__f32(memref<*xf32>)
// CHECK-NEXT: func.func private @dtensor_rt_push_buffer__f64(memref<*xf64>)
// CHECK-NEXT: func.func private @dtensor_rt_push_buffer__i32(memref<*xi32>)
// CHECK-NEXT: func.func private @dtensor_rt_reduce_scatter(i64, i32, i64, i32, i64, i32) -> i64

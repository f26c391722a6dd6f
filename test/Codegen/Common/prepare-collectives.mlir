// --dtensor-prepare-collectives: module ids, chunk as a slice at the
// rank's offset, start/wait made synchronous.
// RUN: dtensor-opt %s --dtensor-prepare-collectives | FileCheck %s

// Mesh ids follow the module order of the meshes; group ids the first
// appearance of each (mesh, mesh_dims) pair among the collectives.
// CHECK: module attributes {
// CHECK-SAME: dtensor.comm_groups = [{mesh = @m, mesh_dims = array<i64: 1>}, {mesh = @tp, mesh_dims = array<i64: 0>}, {mesh = @m, mesh_dims = array<i64: 0, 1>}]
// CHECK-SAME: dtensor.comm_meshes = [@tp, @m]

dtensor.mesh @tp shape [4]
dtensor.mesh @m shape [2, 2]

// CHECK-LABEL: func.func @groups
func.func @groups(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a = dtensor.all_reduce sum %x on @m mesh_dims [1] : tensor<8xf32>
  %b = dtensor.all_reduce max %y on @tp mesh_dims [0] : tensor<8xf32>
  %c = dtensor.all_reduce sum %a on @m mesh_dims [1] : tensor<8xf32>
  %d = dtensor.all_reduce sum %b on @m mesh_dims [0, 1] : tensor<8xf32>
  return %b, %c, %d : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// An even chunk: a static slice at coord * size.
// CHECK-LABEL: func.func @even_chunk
// CHECK-SAME: (%[[X:.*]]: tensor<8x6xf32>)
// CHECK: %[[C:.*]] = dtensor.mesh_coord on @tp mesh_dims [0] : index
// CHECK: %[[OFF:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][%[[OFF]], 0] [2, 6] [1, 1] : tensor<8x6xf32> to tensor<2x6xf32>
// CHECK: return %[[S]]
func.func @even_chunk(%x: tensor<8x6xf32>) -> tensor<2x6xf32> {
  %c = dtensor.chunk %x on @tp mesh_dims [0] dim 0 : tensor<8x6xf32> -> tensor<2x6xf32>
  return %c : tensor<2x6xf32>
}

// A tensor with a dim of size 0: nothing to slice, an empty tensor (the
// slice's verifier refuses offset 0 in a dim of size 0).
// CHECK-LABEL: func.func @zero_size_chunk
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0x2xf32>
// CHECK: return %[[E]]
func.func @zero_size_chunk(%x: tensor<0x8xf32>) -> tensor<0x2xf32> {
  %c = dtensor.chunk %x on @tp mesh_dims [0] dim 1 : tensor<0x8xf32> -> tensor<0x2xf32>
  return %c : tensor<0x2xf32>
}

// 10 rows over a 2x2 mesh, nested: the size is computed at run time.
// CHECK-LABEL: func.func @nested_uneven_chunk
// CHECK: dtensor.mesh_coord on @m mesh_dims [0, 1] : index, index
// CHECK: arith.minsi
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0] [%{{.*}}, 6] [1, 1] : tensor<10x6xf32> to tensor<?x6xf32>
// CHECK: return %[[S]]
func.func @nested_uneven_chunk(%x: tensor<10x6xf32>) -> tensor<?x6xf32> {
  %c = dtensor.chunk %x on @m mesh_dims [0, 1] dim 0 : tensor<10x6xf32> -> tensor<?x6xf32>
  return %c : tensor<?x6xf32>
}

// The collective runs where it was started; the wait is gone.
// CHECK-LABEL: func.func @start_wait
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[G:.*]] = dtensor.all_gather %[[X]] on @tp mesh_dims [0] gather_dim 0
// CHECK-NEXT: math.exp %[[X]]
// CHECK: %[[A:.*]] = arith.addf %[[G]],
// CHECK-NEXT: return %[[A]]
// CHECK-NOT: dtensor.wait
func.func @start_wait(%x: tensor<8xf32>) -> tensor<32xf32> {
  %f = dtensor.start {
    %g = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0 : tensor<8xf32> -> tensor<32xf32>
    dtensor.yield %g : tensor<32xf32>
  } : !dtensor.future<tensor<32xf32>>
  %e = math.exp %x : tensor<8xf32>
  %r = dtensor.wait %f : !dtensor.future<tensor<32xf32>>
  %big = tensor.concat dim(0) %e, %e, %e, %e : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32xf32>
  %a = arith.addf %r, %big : tensor<32xf32>
  return %a : tensor<32xf32>
}


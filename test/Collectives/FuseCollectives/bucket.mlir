// Bucketing of --dtensor-fuse-collectives: independent collectives that
// agree on everything but their tensors become one variadic collective.
// Overlap is off so that only bucketing shows (no rewrite of the first phase
// applies to these inputs).
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false' | FileCheck %s
// The statistics remark: 18 of the 37 collectives go into 8 buckets (27 in
// the output).
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false statistics=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: remark: dtensor-fuse-collectives: 37 collectives in, 0 removed by cancelling and strength reduction, 8 buckets of 18 collectives, 0 split for overlap
// A bucket of at most 64 bytes per rank holds two tensor<8xf32>.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false bucket-bytes=64' | FileCheck %s --check-prefix=SMALL
// bucket-bytes=0 turns bucketing off.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false bucket-bytes=0' | FileCheck %s --check-prefix=OFF

dtensor.mesh @tp shape [4]
dtensor.mesh @dp shape [4]
dtensor.mesh @m shape [2, 4] names ["dp", "tp"]

// Gradients computed one after another, reduced together once the last one
// exists, in program order.
// CHECK-LABEL: func.func @gradients
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<8xf32>, %[[Z:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[A:.*]] = math.exp %[[X]]
// CHECK-NEXT: %[[B:.*]] = math.exp %[[Y]]
// CHECK-NEXT: %[[C:.*]] = math.exp %[[Z]]
// CHECK-NEXT: %[[R:.*]]:3 = dtensor.all_reduce sum %[[A]], %[[B]], %[[C]] on @dp mesh_dims [0] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1, %[[R]]#2
// The first two fill a 64-byte bucket; the third starts the next one.
// SMALL-LABEL: func.func @gradients
// SMALL-NEXT: math.exp
// SMALL-NEXT: math.exp
// SMALL-NEXT: %[[R:.*]]:2 = dtensor.all_reduce sum %{{.*}}, %{{.*}} on @dp mesh_dims [0] : tensor<8xf32>, tensor<8xf32>
// SMALL-NEXT: math.exp
// SMALL-NEXT: %[[S:.*]] = dtensor.all_reduce sum %{{.*}} on @dp mesh_dims [0] : tensor<8xf32>
// SMALL-NEXT: return %[[R]]#0, %[[R]]#1, %[[S]]
// OFF-LABEL: func.func @gradients
// OFF-COUNT-3: dtensor.all_reduce sum %{{[^,]*}} on
// OFF-NOT: dtensor.all_reduce
func.func @gradients(%x: tensor<8xf32>, %y: tensor<8xf32>, %z: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a = math.exp %x : tensor<8xf32>
  %ra = dtensor.all_reduce sum %a on @dp mesh_dims [0] : tensor<8xf32>
  %b = math.exp %y : tensor<8xf32>
  %rb = dtensor.all_reduce sum %b on @dp mesh_dims [0] : tensor<8xf32>
  %c = math.exp %z : tensor<8xf32>
  %rc = dtensor.all_reduce sum %c on @dp mesh_dims [0] : tensor<8xf32>
  return %ra, %rb, %rc : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// A user of the first result sits above the definition the second needs: it
// has no memory effects, so it moves below the combined collective.
// CHECK-LABEL: func.func @sink_users
// OFF-LABEL: func.func @sink_users
// OFF-COUNT-2: dtensor.all_reduce max %{{[^,]*}} on
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[B:.*]] = math.exp %[[Y]]
// CHECK-NEXT: %[[R:.*]]:2 = dtensor.all_reduce max %[[X]], %[[B]] on @tp mesh_dims [0] : tensor<8xf32>, tensor<4xf32>
// CHECK-NEXT: %[[U:.*]] = math.tanh %[[R]]#0
// CHECK-NEXT: %[[V:.*]] = math.sqrt %[[U]]
// CHECK-NEXT: return %[[V]], %[[R]]#1
func.func @sink_users(%x: tensor<8xf32>, %y: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %ra = dtensor.all_reduce max %x on @tp mesh_dims [0] : tensor<8xf32>
  %u = math.tanh %ra : tensor<8xf32>
  %b = math.exp %y : tensor<4xf32>
  %v = math.sqrt %u : tensor<8xf32>
  %rb = dtensor.all_reduce max %b on @tp mesh_dims [0] : tensor<4xf32>
  return %v, %rb : tensor<8xf32>, tensor<4xf32>
}

// A user with memory effects cannot move: the second collective stays out.
// CHECK-LABEL: func.func @user_with_effects
// CHECK-COUNT-2: dtensor.all_reduce sum %{{[^,]*}} on
func.func @user_with_effects(%x: tensor<8xf32>, %y: tensor<4xf32>, %out: memref<8xf32>) -> tensor<4xf32> {
  %ra = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  bufferization.materialize_in_destination %ra in writable %out : (tensor<8xf32>, memref<8xf32>) -> ()
  %b = math.exp %y : tensor<4xf32>
  %rb = dtensor.all_reduce sum %b on @tp mesh_dims [0] : tensor<4xf32>
  return %rb : tensor<4xf32>
}

// The second needs the first (through other ops): never in one call.
// CHECK-LABEL: func.func @dependent
// CHECK:      %[[R:.*]] = dtensor.all_reduce sum %{{.*}} on @tp mesh_dims [0] : tensor<8xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[R]]
// CHECK-NEXT: dtensor.all_reduce sum %[[E]] on @tp mesh_dims [0] : tensor<8xf32>
func.func @dependent(%x: tensor<8xf32>) -> tensor<8xf32> {
  %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  %e = math.exp %r : tensor<8xf32>
  %s = dtensor.all_reduce sum %e on @tp mesh_dims [0] : tensor<8xf32>
  return %s : tensor<8xf32>
}

// Only collectives that agree on reduction, element type, mesh and mesh dims
// share a call: here only the two sums over "tp" of the 2-D mesh.
// CHECK-LABEL: func.func @keys
// CHECK-NEXT: dtensor.all_reduce sum %arg0, %arg5 on @m mesh_dims [1] : tensor<8xf32>, tensor<2xf32>
// CHECK-NEXT: dtensor.all_reduce avg %arg1 on @m mesh_dims [1] : tensor<8xf32>
// CHECK-NEXT: dtensor.all_reduce sum %arg2 on @m mesh_dims [1] : tensor<8xf16>
// CHECK-NEXT: dtensor.all_reduce sum %arg3 on @m mesh_dims [0] : tensor<8xf32>
// CHECK-NEXT: dtensor.all_reduce sum %arg4 on @m mesh_dims [0, 1] : tensor<8xf32>
// CHECK-NEXT: dtensor.all_reduce sum %arg6 on @tp mesh_dims [0] : tensor<8xf32>
// CHECK-NEXT: return
func.func @keys(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf16>, %d: tensor<8xf32>,
                %e: tensor<8xf32>, %f: tensor<2xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>, tensor<8xf32>) {
  %ra = dtensor.all_reduce sum %a on @m mesh_dims [1] : tensor<8xf32>
  %rb = dtensor.all_reduce avg %b on @m mesh_dims [1] : tensor<8xf32>
  %rc = dtensor.all_reduce sum %c on @m mesh_dims [1] : tensor<8xf16>
  %rd = dtensor.all_reduce sum %d on @m mesh_dims [0] : tensor<8xf32>
  %re = dtensor.all_reduce sum %e on @m mesh_dims [0, 1] : tensor<8xf32>
  %rf = dtensor.all_reduce sum %f on @m mesh_dims [1] : tensor<2xf32>
  %rg = dtensor.all_reduce sum %g on @tp mesh_dims [0] : tensor<8xf32>
  return %ra, %rb, %rc, %rd, %re, %rf, %rg
      : tensor<8xf32>, tensor<8xf32>, tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>, tensor<8xf32>
}

// all_gather: same gather dim only. Uneven shards count by their gathered
// (static) size; a gather whose result is dynamic has no known size and is
// not bucketed.
// CHECK-LABEL: func.func @gathers
// CHECK-NEXT: %[[G:.*]]:2 = dtensor.all_gather %arg0, %arg1 on @tp mesh_dims [0] gather_dim 0 : tensor<2x8xf32>, tensor<?x8xf32> -> tensor<8x8xf32>, tensor<10x8xf32>
// CHECK-NEXT: dtensor.all_gather %arg0 on @tp mesh_dims [0] gather_dim 1 : tensor<2x8xf32> -> tensor<2x32xf32>
// CHECK-NEXT: dtensor.all_gather %arg1 on @tp mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: return
// 8x8 and 10x8 f32 are 256 and 320 bytes: each alone over 64.
// SMALL-LABEL: func.func @gathers
// SMALL-COUNT-4: dtensor.all_gather %{{[^,]*}} on
func.func @gathers(%x: tensor<2x8xf32>, %u: tensor<?x8xf32>)
    -> (tensor<8x8xf32>, tensor<10x8xf32>, tensor<2x32xf32>, tensor<?x8xf32>) {
  %a = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %b = dtensor.all_gather %u on @tp mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  %c = dtensor.all_gather %x on @tp mesh_dims [0] gather_dim 1 : tensor<2x8xf32> -> tensor<2x32xf32>
  %d = dtensor.all_gather %u on @tp mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
  return %a, %b, %c, %d : tensor<8x8xf32>, tensor<10x8xf32>, tensor<2x32xf32>, tensor<?x8xf32>
}

// reduce_scatter, uneven result: counted by its static input; an all_reduce
// of a dynamic tensor is not bucketed.
// CHECK-LABEL: func.func @scatters
// CHECK-NEXT: %[[S:.*]]:2 = dtensor.reduce_scatter sum %arg0, %arg1 on @m mesh_dims [1] scatter_dim 0 : tensor<10x2xf32>, tensor<8xf32> -> tensor<?x2xf32>, tensor<2xf32>
// CHECK-NEXT: dtensor.all_reduce sum %arg2 on @m mesh_dims [1] : tensor<?xf32>
// CHECK-NEXT: dtensor.all_reduce sum %arg3 on @m mesh_dims [1] : tensor<?xf32>
// CHECK-NEXT: return
func.func @scatters(%p: tensor<10x2xf32>, %q: tensor<8xf32>, %d: tensor<?xf32>, %e: tensor<?xf32>)
    -> (tensor<?x2xf32>, tensor<2xf32>, tensor<?xf32>, tensor<?xf32>) {
  %a = dtensor.reduce_scatter sum %p on @m mesh_dims [1] scatter_dim 0 : tensor<10x2xf32> -> tensor<?x2xf32>
  %rd = dtensor.all_reduce sum %d on @m mesh_dims [1] : tensor<?xf32>
  %b = dtensor.reduce_scatter sum %q on @m mesh_dims [1] scatter_dim 0 : tensor<8xf32> -> tensor<2xf32>
  %re = dtensor.all_reduce sum %e on @m mesh_dims [1] : tensor<?xf32>
  return %a, %b, %rd, %re : tensor<?x2xf32>, tensor<2xf32>, tensor<?xf32>, tensor<?xf32>
}

func.func private @opaque(tensor<8xf32>) -> tensor<8xf32>

// Collectives are not moved across a call (it may communicate) or across an
// op whose region holds a collective.
// CHECK-LABEL: func.func @barriers
// CHECK-NEXT: dtensor.all_reduce
// CHECK-NEXT: call @opaque
// CHECK-NEXT: dtensor.all_reduce
// CHECK-NEXT: scf.if
// CHECK-NEXT:   dtensor.all_reduce
// CHECK-NEXT:   scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: dtensor.all_reduce
func.func @barriers(%x: tensor<8xf32>, %y: tensor<8xf32>, %z: tensor<8xf32>, %c: i1)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  %k = func.call @opaque(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %b = dtensor.all_reduce sum %y on @tp mesh_dims [0] : tensor<8xf32>
  %i = scf.if %c -> tensor<8xf32> {
    %n = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  } else {
    scf.yield %x : tensor<8xf32>
  }
  %d = dtensor.all_reduce sum %z on @tp mesh_dims [0] : tensor<8xf32>
  return %a, %b, %d, %k, %i : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Blocks of nested regions are bucketed on their own; an already variadic
// collective takes more members.
// CHECK-LABEL: func.func @nested
// CHECK:      scf.for
// CHECK-NEXT:   %[[R:.*]]:3 = dtensor.all_reduce sum %{{.*}}, %{{.*}}, %{{.*}} on @tp mesh_dims [0] : tensor<8xf32>, tensor<4xf32>, tensor<2xf32>
// CHECK-NEXT:   scf.yield %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @nested(%x: tensor<8xf32>, %y: tensor<4xf32>, %z: tensor<2xf32>, %n: index)
    -> (tensor<8xf32>, tensor<4xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %x, %q = %y, %s = %z)
      -> (tensor<8xf32>, tensor<4xf32>, tensor<2xf32>) {
    %a:2 = dtensor.all_reduce sum %p, %q on @tp mesh_dims [0] : tensor<8xf32>, tensor<4xf32>
    %b = dtensor.all_reduce sum %s on @tp mesh_dims [0] : tensor<2xf32>
    scf.yield %a#0, %a#1, %b : tensor<8xf32>, tensor<4xf32>, tensor<2xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8xf32>, tensor<4xf32>, tensor<2xf32>
}

// A complex element counts both parts (8 bytes for complex<f32>): two
// tensor<4xcomplex<f32>> fill a 64-byte bucket. index has no fixed width, so
// its tensors are not bucketed.
// CHECK-LABEL: func.func @element_sizes
// CHECK-NEXT: dtensor.all_reduce sum %arg0, %arg1, %arg2 on @tp mesh_dims [0] : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<1xcomplex<f32>>
// CHECK-NEXT: dtensor.all_reduce sum %arg3 on @tp mesh_dims [0] : tensor<4xindex>
// CHECK-NEXT: dtensor.all_reduce sum %arg4 on @tp mesh_dims [0] : tensor<4xindex>
// SMALL-LABEL: func.func @element_sizes
// SMALL-NEXT: dtensor.all_reduce sum %arg0, %arg1 on @tp mesh_dims [0] : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>
// SMALL-NEXT: dtensor.all_reduce sum %arg2 on @tp mesh_dims [0] : tensor<1xcomplex<f32>>
func.func @element_sizes(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>, %c: tensor<1xcomplex<f32>>,
                         %i: tensor<4xindex>, %j: tensor<4xindex>)
    -> (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<1xcomplex<f32>>, tensor<4xindex>, tensor<4xindex>) {
  %ra = dtensor.all_reduce sum %a on @tp mesh_dims [0] : tensor<4xcomplex<f32>>
  %rb = dtensor.all_reduce sum %b on @tp mesh_dims [0] : tensor<4xcomplex<f32>>
  %rc = dtensor.all_reduce sum %c on @tp mesh_dims [0] : tensor<1xcomplex<f32>>
  %ri = dtensor.all_reduce sum %i on @tp mesh_dims [0] : tensor<4xindex>
  %rj = dtensor.all_reduce sum %j on @tp mesh_dims [0] : tensor<4xindex>
  return %ra, %rb, %rc, %ri, %rj
      : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>, tensor<1xcomplex<f32>>, tensor<4xindex>, tensor<4xindex>
}

// An i1 element takes a byte, as the comm report counts it: two 64-element
// masks are 128 bytes, over the 64-byte threshold.
// CHECK-LABEL: func.func @masks
// CHECK-NEXT:  dtensor.all_reduce max %arg0, %arg1 on @tp mesh_dims [0] : tensor<64xi1>, tensor<64xi1>
// SMALL-LABEL: func.func @masks
// SMALL-NEXT:  dtensor.all_reduce max %arg0 on @tp mesh_dims [0] : tensor<64xi1>
// SMALL-NEXT:  dtensor.all_reduce max %arg1 on @tp mesh_dims [0] : tensor<64xi1>
func.func @masks(%x: tensor<64xi1>, %y: tensor<64xi1>) -> (tensor<64xi1>, tensor<64xi1>) {
  %a = dtensor.all_reduce max %x on @tp mesh_dims [0] : tensor<64xi1>
  %b = dtensor.all_reduce max %y on @tp mesh_dims [0] : tensor<64xi1>
  return %a, %b : tensor<64xi1>, tensor<64xi1>
}

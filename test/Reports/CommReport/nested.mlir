// Collectives nested in regions are reported with the function that holds
// them. Calls are ops: one in a loop body counts once, however many times
// the loop runs. Functions without collectives say so; declarations print
// nothing.
// RUN: dtensor-opt %s --dtensor-comm-report -o /dev/null | FileCheck %s --strict-whitespace --match-full-lines

dtensor.mesh @tp shape [4]

// Program order: the loop's all_reduce, then both branches of the scf.if,
// then the execute_region's reduce_scatter.
// all_reduce 16 f32: 2*3 chunks of 4 f32 = 96. all_gather 4 f32 shards:
// 3 * 16 = 48 per call. reduce_scatter 16 -> 4 f32: 3 * 16 = 48.
// CHECK:func @regions
// CHECK-NEXT:  module     collective      reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  <unnamed>  all_reduce      sum        @tp   [0]        4      1      96
// CHECK-NEXT:  <unnamed>  all_gather      -          @tp   [0]        4      2      96
// CHECK-NEXT:  <unnamed>  reduce_scatter  sum        @tp   [0]        4      1      48
// CHECK-NEXT:  total                                                         4      240
// CHECK-EMPTY:
func.func @regions(%x: tensor<16xf32>, %s: tensor<4xf32>, %n: index,
                   %c: i1) -> (tensor<16xf32>, tensor<16xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %loop = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<16xf32>) {
    %r = dtensor.all_reduce sum %acc on @tp mesh_dims [0] : tensor<16xf32>
    scf.yield %r : tensor<16xf32>
  }
  %g = scf.if %c -> tensor<16xf32> {
    %a = dtensor.all_gather %s on @tp mesh_dims [0] gather_dim 0
        : tensor<4xf32> -> tensor<16xf32>
    scf.yield %a : tensor<16xf32>
  } else {
    %b = dtensor.all_gather %s on @tp mesh_dims [0] gather_dim 0
        : tensor<4xf32> -> tensor<16xf32>
    scf.yield %b : tensor<16xf32>
  }
  %q = scf.execute_region -> tensor<4xf32> {
    %t = dtensor.reduce_scatter sum %x on @tp mesh_dims [0] scatter_dim 0
        : tensor<16xf32> -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  }
  return %loop, %g, %q : tensor<16xf32>, tensor<16xf32>, tensor<4xf32>
}

// chunk and mesh_coord are local: no collectives here.
// CHECK-NEXT:func @local_only
// CHECK-NEXT:  no collectives
// CHECK-EMPTY:
func.func @local_only(%x: tensor<16xf32>) -> tensor<4xf32> {
  %c = dtensor.chunk %x on @tp mesh_dims [0] dim 0
      : tensor<16xf32> -> tensor<4xf32>
  %i = dtensor.mesh_coord on @tp mesh_dims [0] : index
  return %c : tensor<4xf32>
}

func.func private @declared(tensor<16xf32>) -> tensor<16xf32>

// Functions of a nested module use that module's meshes.
// CHECK-NEXT:func @inner
// CHECK-NEXT:  module     collective  reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
// CHECK-NEXT:  <unnamed>  broadcast   -          @tp   [0]        2      1      64
// CHECK-NEXT:  total                                                     1      64
// CHECK-EMPTY:
// CHECK-NOT:{{.}}
module @nested {
  dtensor.mesh @tp shape [2]
  func.func @inner(%x: tensor<16xf32>) -> tensor<16xf32> {
    %b = dtensor.broadcast %x on @tp mesh_dims [0] root 1 : tensor<16xf32>
    return %b : tensor<16xf32>
  }
}

// Round trip of every dtensor op and attribute: custom form, and custom form
// re-parsed from the generic form.
// RUN: dtensor-opt %s | dtensor-opt | FileCheck %s
// RUN: dtensor-opt %s --mlir-print-op-generic | dtensor-opt | FileCheck %s

// CHECK: dtensor.mesh @mesh shape [2, 2] names ["dp", "tp"]
dtensor.mesh @mesh shape [2, 2] names ["dp", "tp"]
// CHECK: dtensor.mesh @tp shape [4]{{$}}
dtensor.mesh @tp shape [4]
// CHECK: dtensor.mesh @swapped shape [2] devices [1, 0]
dtensor.mesh @swapped shape [2] devices [1, 0]
// CHECK: dtensor.mesh @cube shape [2, 1, 3] names ["a", "b", "c"] devices [5, 4, 3, 2, 1, 0]
dtensor.mesh @cube shape [2, 1, 3] names ["a", "b", "c"] devices [5, 4, 3, 2, 1, 0]

// CHECK-LABEL: func.func @placements
// CHECK-SAME: dtensor.layout = #dtensor.layout<@mesh, [shard<0>, replicate]>
// CHECK-SAME: dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>
// CHECK-SAME: dtensor.layout = #dtensor.layout<@tp, [partial<avg>]>
// CHECK-SAME: dtensor.layout = #dtensor.layout<@tp, [partial<max>]>
// CHECK-SAME: dtensor.layout = #dtensor.layout<@tp, [partial<min>]>
// CHECK-SAME: dtensor.layout = #dtensor.layout<@mesh, [shard<1>, shard<1>]>
// CHECK-SAME: dtensor.layout = #dtensor.layout<@mesh, [shard<1, head_tail>, shard<0>]>
// CHECK-SAME: -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate, shard<-1>]>})
func.func @placements(
    %a: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>, replicate]>},
    %b: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<sum>]>},
    %c: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<avg>]>},
    %d: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<max>]>},
    %e: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [partial<min>]>},
    %f: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<1>, shard<1>]>},
    %g: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<1, head_tail>, shard<0>]>})
    -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate, shard<-1>]>}) {
  return %a : tensor<8x16xf32>
}

// Layouts on a declaration are checked against its function type.
// CHECK-LABEL: func.func private @declaration
// CHECK-SAME: (tensor<4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
func.func private @declaration(tensor<4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})

// Placement attributes stand alone too.
// CHECK-LABEL: func.func @standalone_placements
// CHECK-SAME: attrs = [#dtensor.shard<2>, #dtensor.replicate, #dtensor.partial<max>]
func.func @standalone_placements() attributes {attrs = [#dtensor.shard<2>, #dtensor.replicate, #dtensor.partial<max>]} {
  return
}

// CHECK-LABEL: func.func @global
func.func @global(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[D:.*]] = dtensor.distribute %{{.*}} to <@mesh, [shard<0>, replicate]> : tensor<8x16xf32>
  %0 = dtensor.distribute %x to <@mesh, [shard<0>, replicate]> : tensor<8x16xf32>
  // CHECK: dtensor.redistribute %[[D]] from <@mesh, [shard<0>, replicate]> to <@mesh, [replicate, partial<sum>]> : tensor<8x16xf32>
  %1 = dtensor.redistribute %0 from <@mesh, [shard<0>, replicate]> to <@mesh, [replicate, partial<sum>]> : tensor<8x16xf32>
  // CHECK: dtensor.distribute %{{.*}} to <@tp, [shard<1>]> : tensor<8x16xf32>
  %2 = dtensor.distribute %1 to <@tp, [shard<1>]> : tensor<8x16xf32>
  // CHECK: dtensor.to_layout %{{.*}} to <@tp, [replicate]> : tensor<8x16xf32>
  %3 = dtensor.to_layout %2 to <@tp, [replicate]> : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// Claims and requests that leave mesh dims open round-trip.
// CHECK-LABEL: func.func @open_mesh_dims
func.func @open_mesh_dims(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: dtensor.distribute %{{.*}} to <@mesh, [shard<0>, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<8x16xf32>
  %0 = dtensor.distribute %x to <@mesh, [shard<0>, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<8x16xf32>
  // CHECK: dtensor.to_layout %{{.*}} to <@mesh, [replicate, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<8x16xf32>
  %1 = dtensor.to_layout %0 to <@mesh, [replicate, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// Result layouts of ops, one entry per result; a unit entry stands for a
// result that is not a ranked tensor.
// CHECK-LABEL: func.func @result_layouts
func.func @result_layouts(%x: tensor<8x16xf32>, %i: index) -> (tensor<8x16xf32>, index) {
  // CHECK: arith.addf %{{.*}}, %{{.*}} {dtensor.layouts = [#dtensor.layout<@mesh, [shard<0>, partial<sum>]>]} : tensor<8x16xf32>
  %0 = arith.addf %x, %x {dtensor.layouts = [#dtensor.layout<@mesh, [shard<0>, partial<sum>]>]} : tensor<8x16xf32>
  // CHECK: scf.execute_region -> (tensor<8x16xf32>, index)
  // CHECK: } {dtensor.layouts = [#dtensor.layout<@tp, [shard<-1>]>, unit]}
  %1:2 = scf.execute_region -> (tensor<8x16xf32>, index) {
    scf.yield %0, %i : tensor<8x16xf32>, index
  } {dtensor.layouts = [#dtensor.layout<@tp, [shard<-1>]>, unit]}
  return %1#0, %1#1 : tensor<8x16xf32>, index
}

// CHECK-LABEL: func.func @local
func.func @local(%x: tensor<4x8xf32>, %y: tensor<10x8xf32>, %z: tensor<?x8xi32>)
    -> (tensor<4x8xf32>, tensor<4x32xf32>, tensor<4x8xf32>, tensor<1x32xf32>,
        tensor<4x8xf32>, tensor<?x8xf32>, tensor<2x8xf32>, index, index, tensor<?x8xi32>) {
  // CHECK: dtensor.all_reduce sum %{{.*}} on @tp mesh_dims [0] : tensor<4x8xf32>
  %0 = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<4x8xf32>
  // CHECK: dtensor.all_gather %{{.*}} on @tp mesh_dims [0] gather_dim 1 : tensor<4x8xf32> -> tensor<4x32xf32>
  %1 = dtensor.all_gather %0 on @tp mesh_dims [0] gather_dim 1 : tensor<4x8xf32> -> tensor<4x32xf32>
  // CHECK: dtensor.reduce_scatter max %{{.*}} on @tp mesh_dims [0] scatter_dim 1 : tensor<4x32xf32> -> tensor<4x8xf32>
  %2 = dtensor.reduce_scatter max %1 on @tp mesh_dims [0] scatter_dim 1 : tensor<4x32xf32> -> tensor<4x8xf32>
  // CHECK: dtensor.all_to_all %{{.*}} on @tp mesh_dims [0] split_dim 0 concat_dim 1 : tensor<4x8xf32> -> tensor<1x32xf32>
  %3 = dtensor.all_to_all %2 on @tp mesh_dims [0] split_dim 0 concat_dim 1 : tensor<4x8xf32> -> tensor<1x32xf32>
  // CHECK: dtensor.broadcast %{{.*}} on @mesh mesh_dims [1, 0] root 3 : tensor<4x8xf32>
  %4 = dtensor.broadcast %x on @mesh mesh_dims [1, 0] root 3 : tensor<4x8xf32>
  // An uneven split (10 rows over 4 ranks) has a dynamic result dim.
  // CHECK: dtensor.chunk %{{.*}} on @mesh mesh_dims [0, 1] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  %5 = dtensor.chunk %y on @mesh mesh_dims [0, 1] dim 0 : tensor<10x8xf32> -> tensor<?x8xf32>
  // CHECK: dtensor.chunk %{{.*}} on @mesh mesh_dims [1] dim 0 : tensor<4x8xf32> -> tensor<2x8xf32>
  %6 = dtensor.chunk %x on @mesh mesh_dims [1] dim 0 : tensor<4x8xf32> -> tensor<2x8xf32>
  // CHECK: %{{.*}}:2 = dtensor.mesh_coord on @mesh mesh_dims [0, 1] : index, index
  %i, %j = dtensor.mesh_coord on @mesh mesh_dims [0, 1] : index, index
  // Uneven shards gathered: dynamic input, static or dynamic result.
  // CHECK: dtensor.all_gather %{{.*}} on @swapped mesh_dims [0] gather_dim 0 : tensor<?x8xi32> -> tensor<?x8xi32>
  %7 = dtensor.all_gather %z on @swapped mesh_dims [0] gather_dim 0 : tensor<?x8xi32> -> tensor<?x8xi32>
  return %0, %1, %2, %3, %4, %5, %6, %i, %j, %7
      : tensor<4x8xf32>, tensor<4x32xf32>, tensor<4x8xf32>, tensor<1x32xf32>,
        tensor<4x8xf32>, tensor<?x8xf32>, tensor<2x8xf32>, index, index, tensor<?x8xi32>
}

// All reduction kinds on all_reduce and reduce_scatter.
// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>) {
  // CHECK: dtensor.all_reduce avg
  %0 = dtensor.all_reduce avg %x on @tp mesh_dims [0] : tensor<8xf32>
  // CHECK: dtensor.all_reduce max
  %1 = dtensor.all_reduce max %0 on @tp mesh_dims [0] : tensor<8xf32>
  // CHECK: dtensor.all_reduce min
  %2 = dtensor.all_reduce min %1 on @tp mesh_dims [0] : tensor<8xf32>
  // CHECK: dtensor.reduce_scatter sum
  %3 = dtensor.reduce_scatter sum %2 on @tp mesh_dims [0] scatter_dim 0 : tensor<8xf32> -> tensor<2xf32>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2xf32>
}

// A mesh may be used before its definition; zero-size and rank-0 tensors work.
// CHECK-LABEL: func.func @edge_shapes
func.func @edge_shapes(%e: tensor<0x8xf32>, %s: tensor<f32>, %d: tensor<?x8xf32>) -> (tensor<0x8xf32>, tensor<f32>, tensor<8x8xf32>) {
  // CHECK: dtensor.all_gather %{{.*}} on @later mesh_dims [0] gather_dim 0 : tensor<0x8xf32> -> tensor<0x8xf32>
  %0 = dtensor.all_gather %e on @later mesh_dims [0] gather_dim 0 : tensor<0x8xf32> -> tensor<0x8xf32>
  // CHECK: dtensor.all_reduce sum %{{.*}} on @later mesh_dims [0] : tensor<f32>
  %1 = dtensor.all_reduce sum %s on @later mesh_dims [0] : tensor<f32>
  // Uneven shards (dynamic) gather into a static global dim.
  // CHECK: dtensor.all_gather %{{.*}} on @later mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<8x8xf32>
  %2 = dtensor.all_gather %d on @later mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<8x8xf32>
  return %0, %1, %2 : tensor<0x8xf32>, tensor<f32>, tensor<8x8xf32>
}
// CHECK: dtensor.mesh @later shape [3]
dtensor.mesh @later shape [3]

// Variadic collectives: one call for several tensors of one element type.
// CHECK-LABEL: func.func @variadic
func.func @variadic(%a: tensor<4xf32>, %b: tensor<8x2xf32>, %c: tensor<?x8xf32>)
    -> (tensor<4xf32>, tensor<8x2xf32>, tensor<16xf32>, tensor<10x8xf32>, tensor<1xf32>, tensor<2x2xf32>) {
  // CHECK: %[[R:.*]]:2 = dtensor.all_reduce sum %{{.*}}, %{{.*}} on @tp mesh_dims [0] : tensor<4xf32>, tensor<8x2xf32>{{$}}
  %r:2 = dtensor.all_reduce sum %a, %b on @tp mesh_dims [0] : tensor<4xf32>, tensor<8x2xf32>
  // Uneven shards may be gathered with even ones.
  // CHECK: dtensor.all_gather %[[R]]#0, %{{.*}} on @tp mesh_dims [0] gather_dim 0 : tensor<4xf32>, tensor<?x8xf32> -> tensor<16xf32>, tensor<10x8xf32>
  %g:2 = dtensor.all_gather %r#0, %c on @tp mesh_dims [0] gather_dim 0 : tensor<4xf32>, tensor<?x8xf32> -> tensor<16xf32>, tensor<10x8xf32>
  // CHECK: dtensor.reduce_scatter avg %{{.*}}, %{{.*}} on @tp mesh_dims [0] scatter_dim 0 : tensor<4xf32>, tensor<8x2xf32> -> tensor<1xf32>, tensor<2x2xf32>
  %s:2 = dtensor.reduce_scatter avg %a, %b on @tp mesh_dims [0] scatter_dim 0 : tensor<4xf32>, tensor<8x2xf32> -> tensor<1xf32>, tensor<2x2xf32>
  return %r#0, %r#1, %g#0, %g#1, %s#0, %s#1
      : tensor<4xf32>, tensor<8x2xf32>, tensor<16xf32>, tensor<10x8xf32>, tensor<1xf32>, tensor<2x2xf32>
}

// Asynchronous collectives: start issues, wait completes; every collective
// kind may be issued.
// CHECK-LABEL: func.func @async
func.func @async(%a: tensor<4xf32>, %b: tensor<8x2xf32>, %c: tensor<?x8xf32>)
    -> (tensor<4xf32>, tensor<8x2xf32>, tensor<10x8xf32>, tensor<2x2xf32>, tensor<?x2xf32>, tensor<8x2xf32>) {
  // CHECK:      %[[F:.*]]:2 = dtensor.start {
  // CHECK-NEXT:   %[[R:.*]]:2 = dtensor.all_reduce sum %{{.*}}, %{{.*}} on @tp mesh_dims [0] : tensor<4xf32>, tensor<8x2xf32>{{$}}
  // CHECK-NEXT:   dtensor.yield %[[R]]#0, %[[R]]#1 : tensor<4xf32>, tensor<8x2xf32>
  // CHECK-NEXT: } : !dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<8x2xf32>>
  %f:2 = dtensor.start {
    %r:2 = dtensor.all_reduce sum %a, %b on @tp mesh_dims [0] : tensor<4xf32>, tensor<8x2xf32>
    dtensor.yield %r#0, %r#1 : tensor<4xf32>, tensor<8x2xf32>
  } : !dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<8x2xf32>>
  // CHECK:      %[[G:.*]] = dtensor.start {
  // CHECK-NEXT:   dtensor.all_gather %{{.*}} on @tp mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
  // CHECK-NEXT:   dtensor.yield
  // CHECK-NEXT: } : !dtensor.future<tensor<10x8xf32>>
  %fg = dtensor.start {
    %g = dtensor.all_gather %c on @tp mesh_dims [0] gather_dim 0 : tensor<?x8xf32> -> tensor<10x8xf32>
    dtensor.yield %g : tensor<10x8xf32>
  } : !dtensor.future<tensor<10x8xf32>>
  // CHECK: dtensor.reduce_scatter max %{{.*}} on @tp mesh_dims [0] scatter_dim 0 : tensor<8x2xf32> -> tensor<2x2xf32>
  %fs = dtensor.start {
    %s = dtensor.reduce_scatter max %b on @tp mesh_dims [0] scatter_dim 0 : tensor<8x2xf32> -> tensor<2x2xf32>
    dtensor.yield %s : tensor<2x2xf32>
  } : !dtensor.future<tensor<2x2xf32>>
  // CHECK: dtensor.all_to_all %{{.*}} on @tp mesh_dims [0] split_dim 1 concat_dim 0 : tensor<?x8xf32> -> tensor<?x2xf32>
  %ft = dtensor.start {
    %t = dtensor.all_to_all %c on @tp mesh_dims [0] split_dim 1 concat_dim 0 : tensor<?x8xf32> -> tensor<?x2xf32>
    dtensor.yield %t : tensor<?x2xf32>
  } : !dtensor.future<tensor<?x2xf32>>
  // CHECK: dtensor.broadcast %{{.*}} on @mesh mesh_dims [0, 1] root 2 : tensor<8x2xf32>
  // CHECK: } {note = "attributes follow the body"} : !dtensor.future<tensor<8x2xf32>>
  %fb = dtensor.start {
    %x = dtensor.broadcast %b on @mesh mesh_dims [0, 1] root 2 : tensor<8x2xf32>
    dtensor.yield %x : tensor<8x2xf32>
  } {note = "attributes follow the body"} : !dtensor.future<tensor<8x2xf32>>
  // CHECK: %[[W:.*]]:2 = dtensor.wait %[[F]]#0, %[[F]]#1 : !dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<8x2xf32>>
  %w:2 = dtensor.wait %f#0, %f#1 : !dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<8x2xf32>>
  // CHECK: dtensor.wait %[[G]] : !dtensor.future<tensor<10x8xf32>>
  %g = dtensor.wait %fg : !dtensor.future<tensor<10x8xf32>>
  %s = dtensor.wait %fs : !dtensor.future<tensor<2x2xf32>>
  %t = dtensor.wait %ft : !dtensor.future<tensor<?x2xf32>>
  %x = dtensor.wait %fb : !dtensor.future<tensor<8x2xf32>>
  // CHECK: return %[[W]]#0, %[[W]]#1
  return %w#0, %w#1, %g, %s, %t, %x : tensor<4xf32>, tensor<8x2xf32>, tensor<10x8xf32>, tensor<2x2xf32>, tensor<?x2xf32>, tensor<8x2xf32>
}

// The future type stands alone too.
// CHECK-LABEL: func.func private @futures
// CHECK-SAME: (!dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<?x8xi8>>)
func.func private @futures(!dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<?x8xi8>>)

// Weight initializers, each kind with its named parameters.
// CHECK-LABEL: func.func private @inits
// CHECK-SAME: dtensor.init = #dtensor.init<zeros>
// CHECK-SAME: dtensor.init = #dtensor.init<ones>
// CHECK-SAME: dtensor.init = #dtensor.init<constant, value = 3.000000e+00>
// CHECK-SAME: dtensor.init = #dtensor.init<normal, mean = 0.000000e+00, std = 2.000000e-02>
// CHECK-SAME: dtensor.init = #dtensor.init<uniform, low = -1.000000e-01, high = 1.000000e-01>
func.func private @inits(
    tensor<4xf32> {dtensor.weight, dtensor.init = #dtensor.init<zeros>},
    tensor<4xi32> {dtensor.weight, dtensor.init = #dtensor.init<ones>},
    tensor<4xi64> {dtensor.weight, dtensor.init = #dtensor.init<constant, value = 3.0>},
    tensor<4xbf16> {dtensor.weight, dtensor.init = #dtensor.init<normal, mean = 0.0, std = 0.02>},
    tensor<2x2xf16> {dtensor.weight, dtensor.init = #dtensor.init<uniform, low = -0.1, high = 0.1>})

// Fused attention with each optional operand alone and together (each typed
// where it appears, so any subset parses back), and the dynamic head and
// query dims of uneven shards.
// CHECK-LABEL: func.func @attention
// CHECK: dtensor.attention %{{.*}}, %{{.*}}, %{{.*}} positions(%{{.*}} : tensor<2xi64>) into %{{.*}} {causal, {{.*}}} : tensor<2x?x?x16xf32>, tensor<2x?x8x16xf32>, tensor<2x?x8x16xf32> into tensor<2x?x?x16xf32> -> tensor<2x?x?x16xf32>
// CHECK: dtensor.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<1x1x3x8xf32>) into %{{.*}} {{{.*}}query_dims = array<i64: 0, 2, 1, 3>{{.*}}} : tensor<2x3x4x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> into tensor<2x4x3x16xf32> -> tensor<2x4x3x16xf32>
// CHECK: dtensor.attention %{{.*}}, %{{.*}}, %{{.*}} rows(%{{.*}} : tensor<2xi64>) positions(%{{.*}} : tensor<2xi64>) into %{{.*}} {causal, {{.*}}} : tensor<2x4x1x16xf32>, tensor<6x2x8x16xf32>, tensor<6x2x8x16xf32> into tensor<2x4x1x16xf32> -> tensor<2x4x1x16xf32>
func.func @attention(%q: tensor<2x?x?x16xf32>, %k: tensor<2x?x8x16xf32>,
                     %v: tensor<2x?x8x16xf32>, %o: tensor<2x?x?x16xf32>,
                     %p: tensor<2xi64>, %qt: tensor<2x3x4x16xf32>,
                     %ks: tensor<2x4x8x16xf32>, %m: tensor<1x1x3x8xf32>,
                     %ot: tensor<2x4x3x16xf32>, %q1: tensor<2x4x1x16xf32>,
                     %ck: tensor<6x2x8x16xf32>, %o1: tensor<2x4x1x16xf32>)
    -> (tensor<2x?x?x16xf32>, tensor<2x4x3x16xf32>, tensor<2x4x1x16xf32>) {
  %a = dtensor.attention %q, %k, %v positions(%p : tensor<2xi64>) into %o
      {causal, scale = 0.25 : f64, query_dims = array<i64: 0, 1, 2, 3>,
       key_dims = array<i64: 0, 1, 2, 3>, value_dims = array<i64: 0, 1, 2, 3>,
       result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x?x?x16xf32>, tensor<2x?x8x16xf32>, tensor<2x?x8x16xf32>
        into tensor<2x?x?x16xf32> -> tensor<2x?x?x16xf32>
  %b = dtensor.attention %qt, %ks, %ks mask(%m : tensor<1x1x3x8xf32>) into %ot
      {scale = 0.25 : f64, query_dims = array<i64: 0, 2, 1, 3>,
       key_dims = array<i64: 0, 1, 2, 3>, value_dims = array<i64: 0, 1, 2, 3>,
       result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x3x4x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
        into tensor<2x4x3x16xf32> -> tensor<2x4x3x16xf32>
  %c = dtensor.attention %q1, %ck, %ck rows(%p : tensor<2xi64>)
      positions(%p : tensor<2xi64>) into %o1
      {causal, scale = 0.25 : f64, query_dims = array<i64: 0, 1, 2, 3>,
       key_dims = array<i64: 0, 1, 2, 3>, value_dims = array<i64: 0, 1, 2, 3>,
       result_dims = array<i64: 0, 1, 2, 3>}
      : tensor<2x4x1x16xf32>, tensor<6x2x8x16xf32>, tensor<6x2x8x16xf32>
        into tensor<2x4x1x16xf32> -> tensor<2x4x1x16xf32>
  return %a, %b, %c : tensor<2x?x?x16xf32>, tensor<2x4x3x16xf32>, tensor<2x4x1x16xf32>
}

// Row writes into a cache: i64 or i32 indices, dynamic trailing dims (an
// unevenly sharded head dim after partitioning) and no trailing dims at all.
// CHECK-LABEL: func.func @write_rows
// CHECK: dtensor.write_rows %{{.*}} into %{{.*}} at slots(%{{.*}}) positions(%{{.*}}) : tensor<2x3x4x8xf32> into tensor<4x16x4x8xf32>, tensor<2xi64>, tensor<2xi64>
// CHECK: dtensor.write_rows %{{.*}} into %{{.*}} at slots(%{{.*}}) positions(%{{.*}}) : tensor<2x1x?x8xbf16> into tensor<4x16x?x8xbf16>, tensor<2xi32>, tensor<?xi64>
// CHECK: dtensor.write_rows %{{.*}} into %{{.*}} at slots(%{{.*}}) positions(%{{.*}}) : tensor<1x2xi32> into tensor<3x5xi32>, tensor<1xi32>, tensor<1xi32>
func.func @write_rows(%v: tensor<2x3x4x8xf32>, %c: tensor<4x16x4x8xf32>,
                      %s: tensor<2xi64>, %p: tensor<2xi64>,
                      %vh: tensor<2x1x?x8xbf16>, %ch: tensor<4x16x?x8xbf16>,
                      %s32: tensor<2xi32>, %pd: tensor<?xi64>,
                      %v2: tensor<1x2xi32>, %c2: tensor<3x5xi32>,
                      %i: tensor<1xi32>)
    -> (tensor<4x16x4x8xf32>, tensor<4x16x?x8xbf16>, tensor<3x5xi32>) {
  %r = dtensor.write_rows %v into %c at slots(%s) positions(%p)
      : tensor<2x3x4x8xf32> into tensor<4x16x4x8xf32>, tensor<2xi64>, tensor<2xi64>
  %h = dtensor.write_rows %vh into %ch at slots(%s32) positions(%pd)
      : tensor<2x1x?x8xbf16> into tensor<4x16x?x8xbf16>, tensor<2xi32>, tensor<?xi64>
  %q = dtensor.write_rows %v2 into %c2 at slots(%i) positions(%i)
      : tensor<1x2xi32> into tensor<3x5xi32>, tensor<1xi32>, tensor<1xi32>
  return %r, %h, %q : tensor<4x16x4x8xf32>, tensor<4x16x?x8xbf16>, tensor<3x5xi32>
}

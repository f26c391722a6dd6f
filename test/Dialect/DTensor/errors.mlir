// Every verifier rule of the dtensor dialect, one failing input each.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// dtensor.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'dtensor.mesh' op needs at least one mesh dim}}
dtensor.mesh @m shape []

// -----

// expected-error @+1 {{'dtensor.mesh' op mesh dim 1 has size 0; sizes must be positive}}
dtensor.mesh @m shape [2, 0]

// -----

// expected-error @+1 {{'dtensor.mesh' op mesh dim 0 has size -2; sizes must be positive}}
dtensor.mesh @m shape [-2]

// -----

// expected-error @+1 {{'dtensor.mesh' op has more devices than a 64-bit integer can count}}
dtensor.mesh @m shape [4294967296, 4294967296]

// -----

// expected-error @+1 {{'dtensor.mesh' op has 1 dim names for 2 mesh dims}}
dtensor.mesh @m shape [2, 2] names ["dp"]

// -----

// expected-error @+1 {{'dtensor.mesh' op dim names must not be empty}}
dtensor.mesh @m shape [2] names [""]

// -----

// expected-error @+1 {{'dtensor.mesh' op dim name 'tp' is used twice}}
dtensor.mesh @m shape [2, 2] names ["tp", "tp"]

// -----

// expected-error @+1 {{'dtensor.mesh' op lists 3 device ids for 4 mesh positions}}
dtensor.mesh @m shape [2, 2] devices [0, 1, 2]

// -----

// expected-error @+1 {{'dtensor.mesh' op device id 4 is out of range [0, 4)}}
dtensor.mesh @m shape [4] devices [0, 1, 2, 4]

// -----

// expected-error @+1 {{'dtensor.mesh' op device id -1 is out of range [0, 2)}}
dtensor.mesh @m shape [2] devices [-1, 0]

// -----

// expected-error @+1 {{'dtensor.mesh' op device id 1 appears twice}}
dtensor.mesh @m shape [3] devices [1, 0, 1]

// -----

func.func @nested() {
  // expected-error @+1 {{'dtensor.mesh' op expects parent op 'builtin.module'}}
  dtensor.mesh @m shape [2]
  return
}

// -----

//===----------------------------------------------------------------------===//
// Layouts on function arguments and results
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [2, 2]
// expected-error @+1 {{'func.func' op layout of argument #0: has 1 placements but mesh @m has 2 dims}}
func.func private @f(tensor<4x4xf32> {dtensor.layout = #dtensor.layout<@m, [replicate]>})

// -----

dtensor.mesh @m shape [2, 2]
// expected-error @+1 {{'func.func' op layout of argument #0: head_tail shard dim 1 on mesh dim 0 is also sharded over mesh dim 1}}
func.func private @f(tensor<4x8xf32> {dtensor.layout = #dtensor.layout<@m, [shard<1, head_tail>, shard<-1>]>})

// -----

dtensor.mesh @m shape [2]
// expected-error @+1 {{'func.func' op layout of argument #1: shard dim 2 on mesh dim 0 is out of range for a rank-2 tensor}}
func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32> {dtensor.layout = #dtensor.layout<@m, [shard<2>]>}) {
  return
}

// -----

dtensor.mesh @m shape [2]
// expected-error @+1 {{'func.func' op layout of result #0: shard dim -3 on mesh dim 0 is out of range for a rank-2 tensor}}
func.func private @f() -> (tensor<4x4xf32> {dtensor.layout = #dtensor.layout<@m, [shard<-3>]>})

// -----

// expected-error @+1 {{'func.func' op layout of argument #0 refers to @missing, which is not a dtensor.mesh}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@missing, [replicate]>})

// -----

func.func private @not_a_mesh()
// expected-error @+1 {{'func.func' op layout of argument #0 refers to @not_a_mesh, which is not a dtensor.mesh}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@not_a_mesh, [replicate]>})

// -----

// expected-error @+1 {{'func.func' op 'dtensor.layout' on argument #0 must be a #dtensor.layout attribute}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.shard<0>})

// -----

dtensor.mesh @m shape [2]
// expected-error @+1 {{'func.func' op argument #0 has a layout but is not a ranked tensor}}
func.func private @f(f32 {dtensor.layout = #dtensor.layout<@m, [replicate]>})

// -----

// expected-error @+1 {{'func.func' op unknown dtensor attribute 'dtensor.placement' on argument #0}}
func.func private @f(tensor<4xf32> {dtensor.placement = 1 : i64})

// -----

//===----------------------------------------------------------------------===//
// Layouts of op results (dtensor.layouts) and other op attributes
//===----------------------------------------------------------------------===//

// The default entry of a program of several: a public function with a body.
// expected-error @+1 {{'builtin.module' op 'dtensor.default_entry' names @decode, which is not a public function with a body}}
module attributes {dtensor.default_entry = "decode"} {
  func.func private @decode(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{'dtensor.default_entry' must be a string attribute of a module}}
func.func @g() attributes {dtensor.default_entry = "g"} {
  return
}

// -----

// expected-error @+1 {{'builtin.module' op 'dtensor.default_entry' must be a string attribute of a module}}
module attributes {dtensor.default_entry = 1 : i64} {
}

// -----

// The rotation of ring attention chosen by a model plan.
// expected-error @+1 {{'builtin.module' op 'dtensor.rotate_method' must be "allgather" or "alltoall" on a module}}
module attributes {dtensor.rotate_method = "ring"} {
}

// -----

// expected-error @+1 {{'dtensor.rotate_method' must be "allgather" or "alltoall" on a module}}
func.func @h() attributes {dtensor.rotate_method = "alltoall"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'dtensor.layout' is not an operation attribute; the layouts of an op's results belong in 'dtensor.layouts', a function argument's or result's in its 'dtensor.layout'}}
func.func private @f() attributes {dtensor.layout = 1 : i64}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dtensor.sharding' is not an operation attribute}}
  %0 = arith.addf %x, %x {dtensor.sharding = 0 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dtensor.layouts' must be an array with one entry per result}}
  %0 = arith.addf %x, %x {dtensor.layouts = #dtensor.layout<@m, [shard<0>]>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op 'dtensor.layouts' has 2 entries but the op has 1 results}}
  %0 = arith.addf %x, %x {dtensor.layouts = [#dtensor.layout<@m, [shard<0>]>, #dtensor.layout<@m, [replicate]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>, %i: index) -> (index, tensor<4xf32>) {
  // expected-error @+1 {{'scf.execute_region' op 'dtensor.layouts' on result #1 must be a #dtensor.layout attribute}}
  %0:2 = scf.execute_region -> (index, tensor<4xf32>) {
    scf.yield %i, %x : index, tensor<4xf32>
  } {dtensor.layouts = [unit, #dtensor.shard<0>]}
  return %0#0, %0#1 : index, tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>, %i: index) -> (tensor<4xf32>, index) {
  // expected-error @+1 {{'scf.execute_region' op result #1 is not a ranked tensor, so its entry in 'dtensor.layouts' must be a unit attribute}}
  %0:2 = scf.execute_region -> (tensor<4xf32>, index) {
    scf.yield %x, %i : tensor<4xf32>, index
  } {dtensor.layouts = [#dtensor.layout<@m, [shard<0>]>, #dtensor.layout<@m, [replicate]>]}
  return %0#0, %0#1 : tensor<4xf32>, index
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op layout of result #0 refers to @missing, which is not a dtensor.mesh}}
  %0 = arith.addf %x, %x {dtensor.layouts = [#dtensor.layout<@missing, [shard<0>]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'scf.execute_region' op layout of result #1: has 1 placements but mesh @m has 2 dims}}
  %0:2 = scf.execute_region -> (tensor<4xf32>, tensor<4xf32>) {
    scf.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  } {dtensor.layouts = [#dtensor.layout<@m, [shard<0>, replicate]>, #dtensor.layout<@m, [replicate]>]}
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.addf' op layout of result #0: shard dim 1 on mesh dim 0 is out of range for a rank-1 tensor}}
  %0 = arith.addf %x, %x {dtensor.layouts = [#dtensor.layout<@m, [shard<1>]>]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.distribute and dtensor.redistribute
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dtensor.distribute' op layout has 3 placements but mesh @m has 2 dims}}
  %0 = dtensor.distribute %x to <@m, [replicate, replicate, replicate]> : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.distribute' op layout shard dim 1 on mesh dim 0 is out of range for a rank-1 tensor}}
  %0 = dtensor.distribute %x to <@m, [shard<1>]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.distribute' op layout refers to @nowhere, which is not a dtensor.mesh}}
  %0 = dtensor.distribute %x to <@nowhere, [shard<0>]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dtensor.distribute' op open mesh dim 2 is out of range for a layout of 2 mesh dim(s)}}
  %0 = dtensor.distribute %x to <@m, [shard<0>, replicate]> {open_mesh_dims = array<i64: 2>} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dtensor.to_layout' op open mesh dims must be distinct and increasing}}
  %0 = dtensor.to_layout %x to <@m, [replicate, replicate]> {open_mesh_dims = array<i64: 1, 1>} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.to_layout' op layout shard dim 1 on mesh dim 0 is out of range for a rank-1 tensor}}
  %0 = dtensor.to_layout %x to <@m, [shard<1>]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.to_layout' op layout refers to @nowhere, which is not a dtensor.mesh}}
  %0 = dtensor.to_layout %x to <@nowhere, [shard<0>]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @a shape [2]
dtensor.mesh @b shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.redistribute' op source layout is on @a but target layout is on @b; both must use the same mesh}}
  %0 = dtensor.redistribute %x from <@a, [shard<0>]> to <@b, [replicate]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.redistribute' op source layout shard dim -2 on mesh dim 0 is out of range for a rank-1 tensor}}
  %0 = dtensor.redistribute %x from <@m, [shard<-2>]> to <@m, [replicate]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.redistribute' op target layout has 2 placements but mesh @m has 1 dims}}
  %0 = dtensor.redistribute %x from <@m, [shard<0>]> to <@m, [replicate, replicate]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.redistribute' op target layout shard dim 1 on mesh dim 0 is out of range for a rank-1 tensor}}
  %0 = dtensor.redistribute %x from <@m, [replicate]> to <@m, [shard<1>]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.redistribute' op source layout refers to @gone, which is not a dtensor.mesh}}
  %0 = dtensor.redistribute %x from <@gone, [shard<0>]> to <@gone, [replicate]> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Mesh groups (all local ops)
//===----------------------------------------------------------------------===//

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.all_reduce' op @nowhere does not name a dtensor.mesh}}
  %0 = dtensor.all_reduce sum %x on @nowhere mesh_dims [0] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.broadcast' op needs at least one mesh dim}}
  %0 = dtensor.broadcast %x on @m mesh_dims [] root 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.all_reduce' op mesh dim 2 is out of range for mesh @m with 2 dims}}
  %0 = dtensor.all_reduce max %x on @m mesh_dims [2] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f() -> index {
  // expected-error @+1 {{'dtensor.mesh_coord' op mesh dim -1 is negative}}
  %0 = dtensor.mesh_coord on @m mesh_dims [-1] : index
  return %0 : index
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.all_reduce' op mesh dim 1 is listed twice}}
  %0 = dtensor.all_reduce sum %x on @m mesh_dims [1, 1] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f() -> index {
  // expected-error @+1 {{'dtensor.mesh_coord' op has 1 results for 2 mesh dims}}
  %0 = dtensor.mesh_coord on @m mesh_dims [0, 1] : index
  return %0 : index
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.all_gather
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x12xf16> {
  // expected-error @+1 {{'dtensor.all_gather' op result #0 element type 'f16' differs from input #0 element type 'f32'}}
  %0 = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 1 : tensor<2x3xf32> -> tensor<2x12xf16>
  return %0 : tensor<2x12xf16>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<2x3xf32>) -> tensor<24xf32> {
  // expected-error @+1 {{'dtensor.all_gather' op result #0 rank 1 differs from input #0 rank 2}}
  %0 = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 0 : tensor<2x3xf32> -> tensor<24xf32>
  return %0 : tensor<24xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x12xf32> {
  // expected-error @+1 {{'dtensor.all_gather' op gather_dim 2 is out of range for result #0, a rank-2 tensor}}
  %0 = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 2 : tensor<2x3xf32> -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x9xf32> {
  // expected-error @+1 {{'dtensor.all_gather' op result #0 dim 1 has size 9; expected 12 (3 on each of 4 ranks)}}
  %0 = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 1 : tensor<2x3xf32> -> tensor<2x9xf32>
  return %0 : tensor<2x9xf32>
}

// -----

dtensor.mesh @m shape [2, 3]
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x18xf32> {
  // The group over both mesh dims has 6 ranks.
  // expected-error @+1 {{'dtensor.all_gather' op result #0 dim 1 has size 18; expected 9 (3 on each of 3 ranks)}}
  %0 = dtensor.all_gather %x on @m mesh_dims [1] gather_dim 1 : tensor<2x3xf32> -> tensor<2x18xf32>
  return %0 : tensor<2x18xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<2x3xf32>) -> tensor<8x12xf32> {
  // expected-error @+1 {{'dtensor.all_gather' op result #0 dim 0 differs from input #0; only the communicated dim may change}}
  %0 = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 1 : tensor<2x3xf32> -> tensor<8x12xf32>
  return %0 : tensor<8x12xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<2x3xf32>) -> tensor<?x12xf32> {
  // A static dim may not turn dynamic outside the gathered dim either.
  // expected-error @+1 {{'dtensor.all_gather' op result #0 dim 0 differs from input #0; only the communicated dim may change}}
  %0 = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 1 : tensor<2x3xf32> -> tensor<?x12xf32>
  return %0 : tensor<?x12xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<4611686018427387904xi8>) -> tensor<?xi8> {
  // expected-error @+1 {{'dtensor.all_gather' op result #0 dim 0 would hold 4611686018427387904 on each of 4 ranks, more than a 64-bit size can hold}}
  %0 = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 0 : tensor<4611686018427387904xi8> -> tensor<?xi8>
  return %0 : tensor<?xi8>
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.reduce_scatter
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<10x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'dtensor.reduce_scatter' op input #0 dim 0 of size 10 does not split evenly over 4 ranks; the result #0 dim must be dynamic}}
  %0 = dtensor.reduce_scatter sum %x on @m mesh_dims [0] scatter_dim 0 : tensor<10x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'dtensor.reduce_scatter' op result #0 dim 0 has size 4; expected 2 (8 split over 4 ranks)}}
  %0 = dtensor.reduce_scatter sum %x on @m mesh_dims [0] scatter_dim 0 : tensor<8x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<8x3xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{'dtensor.reduce_scatter' op scatter_dim -1 is out of range for result #0, a rank-2 tensor}}
  %0 = dtensor.reduce_scatter sum %x on @m mesh_dims [0] scatter_dim -1 : tensor<8x3xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<8x3xf32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'dtensor.reduce_scatter' op result #0 element type 'i32' differs from input #0 element type 'f32'}}
  %0 = dtensor.reduce_scatter sum %x on @m mesh_dims [0] scatter_dim 0 : tensor<8x3xf32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.all_to_all
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dtensor.all_to_all' op split_dim and concat_dim must differ}}
  %0 = dtensor.all_to_all %x on @m mesh_dims [0] split_dim 1 concat_dim 1 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dtensor.all_to_all' op concat_dim 2 is out of range for a rank-2 tensor}}
  %0 = dtensor.all_to_all %x on @m mesh_dims [0] split_dim 1 concat_dim 2 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dtensor.all_to_all' op split_dim 5 is out of range for a rank-2 tensor}}
  %0 = dtensor.all_to_all %x on @m mesh_dims [0] split_dim 5 concat_dim 0 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'dtensor.all_to_all' op result dim 1 has size 4; expected 2 (4 split over 2 ranks)}}
  %0 = dtensor.all_to_all %x on @m mesh_dims [0] split_dim 1 concat_dim 0 : tensor<4x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'dtensor.all_to_all' op result dim 0 has size 4; expected 8 (4 on each of 2 ranks)}}
  %0 = dtensor.all_to_all %x on @m mesh_dims [0] split_dim 1 concat_dim 0 : tensor<4x4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

dtensor.mesh @m shape [3]
func.func @f(%x: tensor<4x4xf32>) -> tensor<12x1xf32> {
  // expected-error @+1 {{'dtensor.all_to_all' op input dim 1 of size 4 does not split evenly over 3 ranks; the result dim must be dynamic}}
  %0 = dtensor.all_to_all %x on @m mesh_dims [0] split_dim 1 concat_dim 0 : tensor<4x4xf32> -> tensor<12x1xf32>
  return %0 : tensor<12x1xf32>
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.broadcast
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [2, 3]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.broadcast' op root 3 is out of range for a group of 3 ranks}}
  %0 = dtensor.broadcast %x on @m mesh_dims [1] root 3 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.broadcast' op root -1 is out of range for a group of 2 ranks}}
  %0 = dtensor.broadcast %x on @m mesh_dims [0] root -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.chunk
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<10x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'dtensor.chunk' op input dim 0 of size 10 does not split evenly over 4 ranks; the result dim must be dynamic}}
  %0 = dtensor.chunk %x on @m mesh_dims [0, 1] dim 0 : tensor<10x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

dtensor.mesh @m shape [2, 2]
func.func @f(%x: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'dtensor.chunk' op result dim 0 has size 4; expected 2 (8 split over 4 ranks)}}
  %0 = dtensor.chunk %x on @m mesh_dims [0, 1] dim 0 : tensor<8x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x2xf32> {
  // expected-error @+1 {{'dtensor.chunk' op dim 2 is out of range for a rank-2 tensor}}
  %0 = dtensor.chunk %x on @m mesh_dims [0] dim 2 : tensor<8x4xf32> -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8x4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'dtensor.chunk' op result dim 1 differs from the input; only the communicated dim may change}}
  %0 = dtensor.chunk %x on @m mesh_dims [0] dim 0 : tensor<8x4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Variadic collectives: all_reduce, all_gather, reduce_scatter
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [2]
func.func @f() {
  // expected-error @+1 {{'dtensor.all_reduce' op needs at least one input}}
  "dtensor.all_reduce"() <{mesh = @m, mesh_dims = array<i64: 0>, reduction = 0 : i32}> : () -> ()
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>, %y: tensor<8xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'dtensor.all_gather' op has 2 inputs but 1 results; each input gives one result}}
  %0 = "dtensor.all_gather"(%x, %y) <{gather_dim = 0 : i64, mesh = @m, mesh_dims = array<i64: 0>}> : (tensor<4xf32>, tensor<8xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'dtensor.all_reduce' op input #1 element type 'f16' differs from input #0 element type 'f32'; the inputs of one collective share an element type}}
  %0:2 = dtensor.all_reduce sum %x, %y on @m mesh_dims [0] : tensor<4xf32>, tensor<4xf16>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.all_reduce' op result #1 type 'tensor<4xf32>' differs from input #1 type 'tensor<8xf32>'}}
  %0:2 = "dtensor.all_reduce"(%x, %y) <{mesh = @m, mesh_dims = array<i64: 0>, reduction = 0 : i32}> : (tensor<4xf32>, tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{'dtensor.all_gather' op result #1 dim 1 differs from input #1; only the communicated dim may change}}
  %0:2 = dtensor.all_gather %x, %y on @m mesh_dims [0] gather_dim 0 : tensor<4xf32>, tensor<3x5xf32> -> tensor<8xf32>, tensor<6x4xf32>
  return
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<4x4xf32>, %y: tensor<8x3xf32>) {
  // expected-error @+1 {{'dtensor.all_gather' op result #1 dim 1 has size 6; expected 12 (3 on each of 4 ranks)}}
  %0:2 = dtensor.all_gather %x, %y on @m mesh_dims [0] gather_dim 1 : tensor<4x4xf32>, tensor<8x3xf32> -> tensor<4x16xf32>, tensor<8x6xf32>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4x4xf32>, %y: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.all_gather' op gather_dim 1 is out of range for result #1, a rank-1 tensor}}
  %0:2 = dtensor.all_gather %x, %y on @m mesh_dims [0] gather_dim 1 : tensor<4x4xf32>, tensor<8xf32> -> tensor<4x8xf32>, tensor<16xf32>
  return
}

// -----

dtensor.mesh @m shape [4]
func.func @f(%x: tensor<8xf32>, %y: tensor<10x2xf32>) {
  // expected-error @+1 {{'dtensor.reduce_scatter' op input #1 dim 0 of size 10 does not split evenly over 4 ranks; the result #1 dim must be dynamic}}
  %0:2 = dtensor.reduce_scatter sum %x, %y on @m mesh_dims [0] scatter_dim 0 : tensor<8xf32>, tensor<10x2xf32> -> tensor<2xf32>, tensor<3x2xf32>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>, %y: tensor<4x2xf32>) {
  // expected-error @+1 {{'dtensor.reduce_scatter' op result #1 rank 1 differs from input #1 rank 2}}
  %0:2 = dtensor.reduce_scatter sum %x, %y on @m mesh_dims [0] scatter_dim 0 : tensor<8xf32>, tensor<4x2xf32> -> tensor<4xf32>, tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.start, dtensor.yield, dtensor.wait
//===----------------------------------------------------------------------===//

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op body holds 'dtensor.chunk', which is not a collective}}
  %f = dtensor.start {
    %c = dtensor.chunk %x on @m mesh_dims [0] dim 0 : tensor<8xf32> -> tensor<4xf32>
    dtensor.yield %c : tensor<4xf32>
  } : !dtensor.future<tensor<4xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op body must hold exactly one collective before its dtensor.yield}}
  %f = dtensor.start {
    %a = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<8xf32>
    %b = dtensor.all_reduce sum %a on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %b : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op body must hold exactly one collective before its dtensor.yield}}
  %f = dtensor.start {
    dtensor.yield %x : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op dtensor.yield must return the results of the collective, all of them in order}}
  %f = dtensor.start {
    %a = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %x : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'dtensor.start' op dtensor.yield must return the results of the collective, all of them in order}}
  %f:2 = dtensor.start {
    %a:2 = dtensor.all_reduce sum %x, %y on @m mesh_dims [0] : tensor<8xf32>, tensor<4xf32>
    dtensor.yield %a#1, %a#0 : tensor<4xf32>, tensor<8xf32>
  } : !dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op returns 2 futures but its collective has 1 results}}
  %f:2 = dtensor.start {
    %a = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %a : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>, !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op future #0 holds 'tensor<4xf32>' but the collective's result #0 is 'tensor<8xf32>'}}
  %f = dtensor.start {
    %a = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %a : tensor<8xf32>
  } : !dtensor.future<tensor<4xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op body must not take arguments}}
  %f = "dtensor.start"() ({
  ^bb0(%arg: tensor<8xf32>):
    %a = dtensor.all_reduce sum %arg on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %a : tensor<8xf32>
  }) : () -> !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.start' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
  %f = "dtensor.start"() ({}) : () -> !dtensor.future<tensor<8xf32>>
  return
}

// -----

// The collective in a start is verified like any other.
dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  %f = dtensor.start {
    // expected-error @+1 {{'dtensor.all_gather' op result #0 dim 0 has size 8; expected 16 (8 on each of 2 ranks)}}
    %a = dtensor.all_gather %x on @m mesh_dims [0] gather_dim 0 : tensor<8xf32> -> tensor<8xf32>
    dtensor.yield %a : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  return
}

// -----

func.func @f(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dtensor.yield' op expects parent op to be one of 'dtensor.start, dtensor.local_map'}}
  dtensor.yield %x : tensor<8xf32>
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>, %y: tensor<4xf32>) {
  %f:2 = dtensor.start {
    %a:2 = dtensor.all_reduce sum %x, %y on @m mesh_dims [0] : tensor<8xf32>, tensor<4xf32>
    dtensor.yield %a#0, %a#1 : tensor<8xf32>, tensor<4xf32>
  } : !dtensor.future<tensor<8xf32>>, !dtensor.future<tensor<4xf32>>
  // expected-error @+1 {{'dtensor.wait' op waits on 1 of the 2 futures of its dtensor.start; it must wait on all of them}}
  %w = dtensor.wait %f#0 : !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>, %y: tensor<4xf32>) {
  %f:2 = dtensor.start {
    %a:2 = dtensor.all_reduce sum %x, %y on @m mesh_dims [0] : tensor<8xf32>, tensor<4xf32>
    dtensor.yield %a#0, %a#1 : tensor<8xf32>, tensor<4xf32>
  } : !dtensor.future<tensor<8xf32>>, !dtensor.future<tensor<4xf32>>
  // expected-error @+1 {{'dtensor.wait' op future #0 is future #1 of its dtensor.start; futures must be in order}}
  %w:2 = dtensor.wait %f#1, %f#0 : !dtensor.future<tensor<4xf32>>, !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  %f = dtensor.start {
    %a = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %a : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  %g = dtensor.start {
    %a = dtensor.all_reduce max %x on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %a : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  // expected-error @+1 {{'dtensor.wait' op future #1 does not come from the dtensor.start of future #0; one wait completes one start}}
  %w:2 = dtensor.wait %f, %g : !dtensor.future<tensor<8xf32>>, !dtensor.future<tensor<8xf32>>
  return
}

// -----

func.func @f(%f: !dtensor.future<tensor<8xf32>>) -> tensor<8xf32> {
  // expected-error @+1 {{'dtensor.wait' op needs the futures of a dtensor.start}}
  %w = dtensor.wait %f : !dtensor.future<tensor<8xf32>>
  return %w : tensor<8xf32>
}

// -----

func.func @f() {
  // expected-error @+1 {{'dtensor.wait' op needs the futures of a dtensor.start}}
  "dtensor.wait"() : () -> ()
  return
}

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<8xf32>) {
  %f = dtensor.start {
    %a = dtensor.all_reduce sum %x on @m mesh_dims [0] : tensor<8xf32>
    dtensor.yield %a : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  // expected-error @+2 {{'dtensor.wait' op inferred type(s) 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'dtensor.wait' op failed to infer returned types}}
  %w = "dtensor.wait"(%f) : (!dtensor.future<tensor<8xf32>>) -> tensor<4xf32>
  return
}

// -----

dtensor.mesh @tp shape [4]

func.func @start_empty_body() {
  // expected-error @+1 {{'dtensor.start' op body must end in dtensor.yield}}
  %f = "dtensor.start"() ({
  ^bb0:
  }) : () -> !dtensor.future<tensor<8xf32>>
  return
}

// -----

dtensor.mesh @tp shape [4]

func.func @start_without_yield(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dtensor.start' op body must end in dtensor.yield}}
  %f = dtensor.start {
    %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  } : !dtensor.future<tensor<8xf32>>
  %y = dtensor.wait %f : !dtensor.future<tensor<8xf32>>
  return %y : tensor<8xf32>
}

// -----

// expected-error @below {{'dtensor.name' of argument #0 must be a non-empty string}}
func.func @bad_name(%x: tensor<4xf32> {dtensor.name = ""}) {
  return
}

// -----

// expected-error @below {{'dtensor.name' of result #0 must be a non-empty string}}
func.func @bad_name_type(%x: tensor<4xf32>) -> (tensor<4xf32> {dtensor.name = 3 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{'dtensor.weight' must be a unit attribute on a function argument}}
func.func @weight_result(%x: tensor<4xf32>) -> (tensor<4xf32> {dtensor.weight}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{'dtensor.comm_groups' entry #0 must be {mesh = @m, mesh_dims = array<i64: ...>}}}
module attributes {dtensor.comm_groups = [{mesh = @m}]} {
}

// -----

// expected-error @below {{'dtensor.comm_meshes' entry #0 must be a mesh symbol reference}}
module attributes {dtensor.comm_meshes = [1 : i64]} {
}

// -----

// expected-error @below {{'dtensor.init' on argument #0 needs a weight argument ('dtensor.weight')}}
func.func @init_input(%x: tensor<4xf32> {dtensor.init = #dtensor.init<zeros>}) {
  return
}

// -----

// expected-error @below {{'dtensor.init' on result #0 needs a weight argument ('dtensor.weight')}}
func.func @init_result(%x: tensor<4xf32>) -> (tensor<4xf32> {dtensor.init = #dtensor.init<ones>}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{'dtensor.init' on argument #0 must be a #dtensor.init attribute}}
func.func @init_not_attr(%x: tensor<4xf32> {dtensor.weight, dtensor.init = 0.5 : f32}) {
  return
}

// -----

// expected-error @below {{argument #0 of element type 'i32' cannot take #dtensor.init<normal, mean = 0.000000e+00, std = 1.000000e+00>; integer weights take zeros, ones or an integral constant}}
func.func @init_int_normal(%x: tensor<4xi32> {dtensor.weight, dtensor.init = #dtensor.init<normal, mean = 0.0, std = 1.0>}) {
  return
}

// -----

// expected-error @below {{argument #0 of element type 'i64' cannot take #dtensor.init<constant, value = 5.000000e-01>}}
func.func @init_int_fraction(%x: tensor<4xi64> {dtensor.weight, dtensor.init = #dtensor.init<constant, value = 0.5>}) {
  return
}

// -----

// expected-error @below {{argument #0 has an initializer but is not a ranked tensor}}
func.func @init_scalar(%x: f32 {dtensor.weight, dtensor.init = #dtensor.init<zeros>}) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.site and dtensor.collective_sites
//===----------------------------------------------------------------------===//

dtensor.mesh @tp shape [2]
func.func @site_on_local_op(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'dtensor.chunk' op 'dtensor.site' numbers collectives only}}
  %c = dtensor.chunk %x on @tp mesh_dims [0] dim 0 {dtensor.site = 0 : i64} : tensor<4xf32> -> tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

dtensor.mesh @tp shape [2]
func.func @negative_site(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.all_reduce' op 'dtensor.site' must be a non-negative i64}}
  %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] {dtensor.site = -1 : i64} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

dtensor.mesh @tp shape [2]
func.func @i32_site(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.all_reduce' op 'dtensor.site' must be a non-negative i64}}
  %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] {dtensor.site = 1 : i32} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{'builtin.module' op 'dtensor.collective_sites' entry #1 must be a dictionary with a 'kind' string}}
module attributes {dtensor.collective_sites = [{kind = "all_reduce"}, {module = "fc2"}]} {
}

// -----

// expected-error @+1 {{'builtin.module' op 'dtensor.collective_sites' must be an array on a module}}
module attributes {dtensor.collective_sites = {kind = "all_reduce"}} {
}

// -----

dtensor.mesh @tp shape [2]
// expected-error @+1 {{'func.func' op 'dtensor.collective_sites' must be an array on a module}}
func.func @sites_on_function() attributes {dtensor.collective_sites = []} {
  return
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.state and dtensor.updates
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'func.func' op 'dtensor.state' must be a unit attribute on a function argument}}
func.func @state_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {dtensor.state}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0 cannot be both a weight and state}}
func.func @weight_and_state(%x: tensor<4xf32> {dtensor.weight, dtensor.state}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0 updates argument #0, which is not a state argument ('dtensor.state') or a weight ('dtensor.weight')}}
func.func @updates_input(%x: tensor<4xf32>) -> (tensor<4xf32> {dtensor.updates = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 updates argument #3, which is not a state argument ('dtensor.state') or a weight ('dtensor.weight')}}
func.func @updates_out_of_range(%x: tensor<4xf32> {dtensor.state}) -> (tensor<4xf32> {dtensor.updates = 3 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 of type 'tensor<2xf32>' cannot update argument #0 of type 'tensor<4xf32>'}}
func.func @updates_other_type(%x: tensor<4xf32> {dtensor.state}, %y: tensor<2xf32>) -> (tensor<2xf32> {dtensor.updates = 0 : i64}) {
  return %y : tensor<2xf32>
}

// -----

// expected-error @+1 {{'func.func' op results #0 and #1 both update argument #0}}
func.func @updates_twice(%x: tensor<4xf32> {dtensor.state}) -> (tensor<4xf32> {dtensor.updates = 0 : i64}, tensor<4xf32> {dtensor.updates = 0 : i64}) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'dtensor.updates' must be an argument index on a result}}
func.func @updates_on_argument(%x: tensor<4xf32> {dtensor.updates = 0 : i64}) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// dtensor.write_rows
//===----------------------------------------------------------------------===//

// -----

func.func @write_rows_rank_1_cache(%v: tensor<4xf32>, %c: tensor<4xf32>, %i: tensor<1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op cache must have rank 2 or more ([slots, positions, ...]), not 1}}
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i) : tensor<4xf32> into tensor<4xf32>, tensor<1xi64>, tensor<1xi64>
  return %r : tensor<4xf32>
}

// -----

func.func @write_rows_rank(%v: tensor<1x2x8xf32>, %c: tensor<4x16x2x8xf32>, %i: tensor<1xi64>) -> tensor<4x16x2x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op values rank 3 differs from cache rank 4}}
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i) : tensor<1x2x8xf32> into tensor<4x16x2x8xf32>, tensor<1xi64>, tensor<1xi64>
  return %r : tensor<4x16x2x8xf32>
}

// -----

func.func @write_rows_element_type(%v: tensor<1x2x8xf16>, %c: tensor<4x16x8xf32>, %i: tensor<1xi64>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op values element type 'f16' differs from cache element type 'f32'}}
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i) : tensor<1x2x8xf16> into tensor<4x16x8xf32>, tensor<1xi64>, tensor<1xi64>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_trailing(%v: tensor<1x2x3x8xf32>, %c: tensor<4x16x2x8xf32>, %i: tensor<1xi64>) -> tensor<4x16x2x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op values dim 2 has size 3 but cache dim 2 has size 2; the dims after the first two must match}}
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i) : tensor<1x2x3x8xf32> into tensor<4x16x2x8xf32>, tensor<1xi64>, tensor<1xi64>
  return %r : tensor<4x16x2x8xf32>
}

// -----

func.func @write_rows_too_long(%v: tensor<1x17x8xf32>, %c: tensor<4x16x8xf32>, %i: tensor<1xi64>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op writes 17 consecutive positions per row into a cache of 16 positions}}
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%i) : tensor<1x17x8xf32> into tensor<4x16x8xf32>, tensor<1xi64>, tensor<1xi64>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_slots_rank(%v: tensor<1x2x8xf32>, %c: tensor<4x16x8xf32>, %s: tensor<1x1xi64>, %i: tensor<1xi64>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op slots must be a 1-D tensor, not rank 2}}
  %r = dtensor.write_rows %v into %c at slots(%s) positions(%i) : tensor<1x2x8xf32> into tensor<4x16x8xf32>, tensor<1x1xi64>, tensor<1xi64>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_slots_type(%v: tensor<1x2x8xf32>, %c: tensor<4x16x8xf32>, %s: tensor<1xf32>, %i: tensor<1xi64>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op slots element type 'f32' is not i32 or i64}}
  %r = dtensor.write_rows %v into %c at slots(%s) positions(%i) : tensor<1x2x8xf32> into tensor<4x16x8xf32>, tensor<1xf32>, tensor<1xi64>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_slots_count(%v: tensor<2x2x8xf32>, %c: tensor<4x16x8xf32>, %s: tensor<3xi32>, %i: tensor<2xi64>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op slots has 3 elements but values has 2 rows; each row needs one}}
  %r = dtensor.write_rows %v into %c at slots(%s) positions(%i) : tensor<2x2x8xf32> into tensor<4x16x8xf32>, tensor<3xi32>, tensor<2xi64>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_positions_rank(%v: tensor<1x2x8xf32>, %c: tensor<4x16x8xf32>, %i: tensor<1xi64>, %p: tensor<i64>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op positions must be a 1-D tensor, not rank 0}}
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%p) : tensor<1x2x8xf32> into tensor<4x16x8xf32>, tensor<1xi64>, tensor<i64>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_positions_type(%v: tensor<1x2x8xf32>, %c: tensor<4x16x8xf32>, %i: tensor<1xi64>, %p: tensor<1xi16>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op positions element type 'i16' is not i32 or i64}}
  %r = dtensor.write_rows %v into %c at slots(%i) positions(%p) : tensor<1x2x8xf32> into tensor<4x16x8xf32>, tensor<1xi64>, tensor<1xi16>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_positions_count(%v: tensor<2x2x8xf32>, %c: tensor<4x16x8xf32>, %s: tensor<2xi64>, %p: tensor<1xi64>) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op positions has 1 elements but values has 2 rows; each row needs one}}
  %r = dtensor.write_rows %v into %c at slots(%s) positions(%p) : tensor<2x2x8xf32> into tensor<4x16x8xf32>, tensor<2xi64>, tensor<1xi64>
  return %r : tensor<4x16x8xf32>
}

// -----

func.func @write_rows_result_type(%v: tensor<1x2x8xf32>, %c: tensor<4x16x8xf32>, %i: tensor<1xi64>) -> tensor<4x16x?xf32> {
  // expected-error @+1 {{'dtensor.write_rows' op failed to verify that all of {cache, result} have same type}}
  %r = "dtensor.write_rows"(%v, %c, %i, %i) : (tensor<1x2x8xf32>, tensor<4x16x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x16x?xf32>
  return %r : tensor<4x16x?xf32>
}

// -----

// expected-error @+1 {{'builtin.module' op 'dtensor.training' must be a dictionary on a module}}
module attributes {dtensor.training = "sgd"} {
}

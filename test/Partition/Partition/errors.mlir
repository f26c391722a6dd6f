// Every diagnostic of --dtensor-partition.
// RUN: dtensor-opt %s --split-input-file --dtensor-partition -verify-diagnostics
// RUN: not dtensor-opt %s --split-input-file --dtensor-partition="call-us=-1" 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: --dtensor-partition options need call-us >= 0, latency-us >= 0 and bandwidth-gbps > 0

dtensor.mesh @tp shape [2]

// expected-error @+1 {{argument #1 has no layout; run --dtensor-propagate before --dtensor-partition}}
func.func @argument_without_layout(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}, %y: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @result_without_layout(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8xf32> {
  // expected-error @+1 {{result #0 has no layout; run --dtensor-propagate before --dtensor-partition}}
  %0 = math.tanh %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]
dtensor.mesh @other shape [4]

// expected-error @+1 {{uses meshes @tp and @other; partitioning needs one mesh per function}}
func.func @two_meshes(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@other, [shard<0>]>}) {
  return %x : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

// expected-error @+1 {{argument #0 shards dim 0, whose global size is dynamic; partitioning needs static sizes for sharded dims}}
func.func @dynamic_sharded_dim(%x: tensor<?xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<?xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  return %x : tensor<?xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @partial_slice(%x: tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<4x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  // expected-error @+1 {{slices dim 0, which is sharded; only whole sharded dims can be sliced}}
  %0 = tensor.extract_slice %x[2, 0] [4, 4] [1, 1] {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]} : tensor<8x4xf32> to tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @sharded_capture(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  // expected-error @+1 {{uses a sharded value inside its region; partitioning only rewrites values at the function's top level}}
  %0 = tensor.generate {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<8xf32>
    tensor.yield %v : f32
  } {dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @sharded(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  return %x : tensor<8xf32>
}

func.func @global_caller(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{calls @sharded, which is partitioned, from a function without layouts}}
  %0 = func.call @sharded(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @returned_layout(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  // expected-error @+1 {{returns a value laid out as [S(0)] as result #0, which is declared [R]}}
  return %x : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

// expected-error @+1 {{has several blocks; partitioning handles single-block functions}}
func.func @blocks(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  cf.br ^next
^next:
  return %x : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @dim_of_sharded(%x: tensor<8x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}, %i: index) -> index {
  // expected-error @+1 {{takes a non-constant dim of a sharded tensor; partitioning needs to know which dim it is}}
  %0 = tensor.dim %x, %i : tensor<8x4xf32>
  return %0 : index
}

// -----

dtensor.mesh @tp shape [2]

func.func @wrong_source(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  // expected-error @+1 {{redistributes from [P(sum)] a value laid out as [S(0)]}}
  %0 = dtensor.redistribute %x from <@tp, [partial<sum>]> to <@tp, [replicate]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dtensor.mesh @tp shape [2]

#id = affine_map<(d0) -> (d0)>
func.func @linalg_capture(%x: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}, %y: tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> (tensor<8xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  // expected-error @+1 {{uses a sharded value inside its region; partitioning only rewrites values at the function's top level}}
  %0 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%y : tensor<8xf32>) attrs = {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]} {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %v = tensor.extract %x[%i] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A local map's inputs must have its input layouts: propagation sees to it.
dtensor.mesh @tp shape [4]
func.func @local_map_unpropagated(
    %x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  // expected-error @+1 {{'dtensor.local_map' op input #0 is laid out as [R], but the local map takes it as [S(1)]; run --dtensor-propagate before --dtensor-partition}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [shard<1>]>]
      out [#dtensor.layout<@tp, [shard<1>]>] {
  ^bb0(%lx: tensor<8x16xf32>):
    dtensor.yield %lx : tensor<8x16xf32>
  } {dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @m shape [2, 2]

// A claim whose open mesh dims propagation has not chosen.
func.func @open_mesh_dims(%x: tensor<8x8xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>}) -> (tensor<8x8xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, replicate]>}) {
  // expected-error @+1 {{'dtensor.distribute' op leaves mesh dims open; --dtensor-propagate chooses them before partitioning}}
  %0 = dtensor.distribute %x to <@m, [shard<0>, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

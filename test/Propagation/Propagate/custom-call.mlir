// Sharding propagation through dtensor.custom_call: the registered
// strategies (PyTorch's register_sharding, one mesh dim each) expanded to the
// mesh, the cheapest chosen; without strategies the op runs replicated.
// RUN: dtensor-opt %s --dtensor-propagate | FileCheck %s

// CHECK-LABEL: func.func @picks_dim1(
// CHECK-NOT: dtensor.redistribute
// CHECK: dtensor.custom_call "swiglu"{{.*}}{dtensor.layouts = [#dtensor.layout<@tp, [shard<1>]>]}
// CHECK-NOT: dtensor.redistribute
// CHECK: return

// CHECK-LABEL: func.func @picks_dim0(
// CHECK-NOT: dtensor.redistribute
// CHECK: dtensor.custom_call "swiglu"{{.*}}{dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK-NOT: dtensor.redistribute
// CHECK: return

// CHECK-LABEL: func.func @full_mesh(
// CHECK-NOT: dtensor.redistribute
// CHECK: dtensor.custom_call "swiglu"{{.*}}{dtensor.layouts = [#dtensor.layout<@m, [shard<0>, shard<1>]>]}
// CHECK-NOT: dtensor.redistribute
// CHECK: return

// CHECK-LABEL: func.func @only_dim0(
// CHECK: %[[E:.*]] = tensor.empty() {dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK: %[[G:.*]] = dtensor.redistribute %arg0 from <@tp, [shard<1>]> to <@tp, [shard<0>]>
// CHECK: %[[U:.*]] = dtensor.redistribute %arg1 from <@tp, [shard<1>]> to <@tp, [shard<0>]>
// CHECK: %[[Y:.*]] = dtensor.custom_call "swiglu" symbol "example_swiglu"(%[[G]], %[[U]]) into %[[E]]{{.*}}{dtensor.layouts = [#dtensor.layout<@tp, [shard<0>]>]}
// CHECK: dtensor.redistribute %[[Y]] from <@tp, [shard<0>]> to <@tp, [shard<1>]>

// CHECK-LABEL: func.func @no_strategies(
// CHECK: dtensor.redistribute %arg0 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK: dtensor.redistribute %arg1 from <@tp, [shard<0>]> to <@tp, [replicate]>
// CHECK: dtensor.custom_call "norm"{{.*}}{dtensor.layouts = [#dtensor.layout<@tp, [replicate]>]}

// CHECK-LABEL: func.func @partial(
// CHECK-NOT: dtensor.redistribute
// CHECK: %[[Y:.*]] = dtensor.custom_call "mm"{{.*}}{dtensor.layouts = [#dtensor.layout<@tp, [partial<sum>]>]}
// CHECK: dtensor.redistribute %[[Y]] from <@tp, [partial<sum>]> to <@tp, [replicate]>

dtensor.mesh @tp shape [2] names ["tp"]
dtensor.mesh @m shape [2, 2] names ["dp", "tp"]

// The inputs arrive sharded on dim 1: the second strategy needs nothing.
func.func @picks_dim1(%g: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                      %u: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>],
                  [#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.shard<1>]]
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// Sharded on dim 0: the first.
func.func @picks_dim0(%g: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                      %u: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>],
                  [#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.shard<1>]]
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// On a 2-D mesh each mesh dim picks a listed strategy: dim 0 over dp, dim 1
// over tp, as the inputs arrive.
func.func @full_mesh(%g: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, shard<1>]>},
                     %u: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, shard<1>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0>, shard<1>]>}) {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>],
                  [#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.shard<1>]]
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// Only the dim-0 strategy: inputs sharded on dim 1 are redistributed.
func.func @only_dim0(%g: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                     %u: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>]]
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// No strategies: replicated, the inputs gathered.
func.func @no_strategies(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>},
                         %w: tensor<64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "norm" symbol "example_rms_norm" (%x, %w) into %e
      : (tensor<8x64xf32>, tensor<64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// A Partial result: a row-parallel custom matmul whose output is claimed
// partial and reduced where the caller wants it replicated.
func.func @partial(%x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>},
                   %w: tensor<64x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) {
  %e = tensor.empty() : tensor<8x16xf32>
  %y = dtensor.custom_call "mm" symbol "my_matmul" (%x, %w) into %e
      strategies [[#dtensor.replicate, #dtensor.replicate, #dtensor.replicate],
                  [#dtensor.partial<sum>, #dtensor.shard<1>, #dtensor.shard<0>]]
      : (tensor<8x64xf32>, tensor<64x16xf32>) into tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

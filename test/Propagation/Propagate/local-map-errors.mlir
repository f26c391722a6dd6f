// A local map without redistribute_inputs claims its inputs' layouts: a value
// laid out otherwise is an error, as PyTorch's local_map raises.
// RUN: dtensor-opt %s --dtensor-propagate -split-input-file -verify-diagnostics

dtensor.mesh @tp shape [4]
func.func @mismatch(
    // expected-note @+1 {{the other layout constraint is here}}
    %x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  // expected-error @+1 {{conflicting layouts for one value: [S(1)] here, but [R] before}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [shard<1>]>]
      out [#dtensor.layout<@tp, [shard<1>]>] {
  ^bb0(%lx: tensor<8x16xf32>):
    dtensor.yield %lx : tensor<8x16xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Its outputs are claims too.
dtensor.mesh @tp shape [4]
func.func @output_claim(
    %x: tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>})
    -> (tensor<8x64xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<1>]>}) {
  // expected-note @+1 {{the other layout constraint is here}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [shard<1>]>]
      out [#dtensor.layout<@tp, [shard<1>]>] {
  ^bb0(%lx: tensor<8x16xf32>):
    dtensor.yield %lx : tensor<8x16xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  // expected-error @+1 {{conflicting layouts for one value: [S(0)] here, but [S(1)] before}}
  %d = dtensor.distribute %y to <@tp, [shard<0>]> : tensor<8x64xf32>
  return %d : tensor<8x64xf32>
}

// Every verifier rule of dtensor.local_map, one failing input each.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op has 1 input(s) but 2 input layout(s)}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [replicate]>, #dtensor.layout<@tp, [replicate]>]
      out [#dtensor.layout<@tp, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    dtensor.yield %lx : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op has 1 result(s) but 0 output layout(s)}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [replicate]>] out [] {
  ^bb0(%lx: tensor<8x64xf32>):
    dtensor.yield %lx : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op body takes 0 argument(s) for 1 input(s)}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [replicate]>]
      out [#dtensor.layout<@tp, [replicate]>] {
    %c = arith.constant dense<1.0> : tensor<8x64xf32>
    dtensor.yield %c : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op body yields 2 value(s) for 1 result(s)}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [replicate]>]
      out [#dtensor.layout<@tp, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    dtensor.yield %lx, %lx : tensor<8x64xf32>, tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// A captured global value: the body would read the whole tensor at global
// indices on every rank.
dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>, %g: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [replicate]>]
      out [#dtensor.layout<@tp, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    // expected-error @+1 {{'dtensor.yield' op using value defined outside the region}}
    dtensor.yield %g : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op the body's input #0 is 'tensor<8x64xf32>', but #dtensor.layout<@tp, [shard<1>]> gives 'tensor<8x64xf32>' the per-rank type 'tensor<8x16xf32>'}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [shard<1>]>]
      out [#dtensor.layout<@tp, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    dtensor.yield %lx : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @m3 shape [3]
func.func @f(%x: tensor<10x8xf32>) -> tensor<10x8xf32> {
  // expected-error @+1 {{'dtensor.local_map' op the body's result #0 is 'tensor<4x8xf32>', but #dtensor.layout<@m3, [shard<0>]> gives 'tensor<10x8xf32>' the per-rank type 'tensor<?x8xf32>'}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@m3, [shard<0>]>]
      out [#dtensor.layout<@m3, [shard<0>]>] {
  ^bb0(%lx: tensor<?x8xf32>):
    %c = arith.constant dense<1.0> : tensor<4x8xf32>
    dtensor.yield %c : tensor<4x8xf32>
  } : (tensor<10x8xf32>) -> tensor<10x8xf32>
  return %y : tensor<10x8xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op input layout #0: shard dim 2 on mesh dim 0 is out of range for a rank-2 tensor}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [shard<2>]>]
      out [#dtensor.layout<@tp, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    dtensor.yield %lx : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op input layout #0 refers to @nope, which is not a dtensor.mesh}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@nope, [replicate]>]
      out [#dtensor.layout<@nope, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    dtensor.yield %lx : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
dtensor.mesh @dp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op uses meshes @tp and @dp; a local map is on one mesh}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [replicate]>]
      out [#dtensor.layout<@dp, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    dtensor.yield %lx : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op input #0 shards dim 0, whose global size is dynamic; sharded dims need static sizes}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [shard<0>]>]
      out [#dtensor.layout<@tp, [replicate]>] {
  ^bb0(%lx: tensor<?x64xf32>):
    dtensor.yield %lx : tensor<?x64xf32>
  } : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

dtensor.mesh @tp shape [4]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op body holds 'dtensor.distribute'; the body is per-rank code, layouts belong to the program around it}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@tp, [replicate]>]
      out [#dtensor.layout<@tp, [replicate]>] {
  ^bb0(%lx: tensor<8x64xf32>):
    %d = dtensor.distribute %lx to <@tp, [replicate]> : tensor<8x64xf32>
    dtensor.yield %d : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

dtensor.mesh @cp shape [2]
func.func @f(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'dtensor.local_map' op input layout #0 shards dim 0 head_tail; a local map's pieces are one block per rank}}
  %y = dtensor.local_map (%x) in [#dtensor.layout<@cp, [shard<0, head_tail>]>]
      out [#dtensor.layout<@cp, [replicate]>] {
  ^bb0(%lx: tensor<4x64xf32>):
    %z = tensor.empty() : tensor<8x64xf32>
    dtensor.yield %z : tensor<8x64xf32>
  } : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

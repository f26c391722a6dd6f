// Contradictory constraints and unsupported input are errors naming the
// places involved.
// RUN: dtensor-opt %s --dtensor-propagate -split-input-file -verify-diagnostics
// RUN: not dtensor-opt %s --dtensor-propagate="bandwidth-gbps=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: dtensor-propagate: call-us and latency-us must be >= 0, bandwidth-gbps and compute-gflops > 0

dtensor.mesh @tp shape [2]

// expected-note @+1 {{the other layout constraint is here}}
func.func @arg_vs_distribute(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x16xf32> {
  // expected-error @+1 {{conflicting layouts for one value: [S(1)] here, but [S(0)] before}}
  %0 = dtensor.distribute %x to <@tp, [shard<1>]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @two_distributes(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %t = math.tanh %x : tensor<8x16xf32>
  // expected-note @+1 {{the other layout constraint is here}}
  %a = dtensor.distribute %t to <@tp, [shard<0>]> : tensor<8x16xf32>
  // expected-error @+1 {{conflicting layouts for one value: [R] here, but [S(0)] before}}
  %b = dtensor.distribute %t to <@tp, [replicate]> : tensor<8x16xf32>
  return %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// expected-note @+1 {{the other layout constraint is here}}
func.func @redistribute_source(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [replicate]>}) -> tensor<8x16xf32> {
  // expected-error @+1 {{conflicting layouts for one value: [P(sum)] here, but [R] before}}
  %0 = dtensor.redistribute %x from <@tp, [partial<sum>]> to <@tp, [replicate]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dtensor.mesh @a shape [2]
dtensor.mesh @b shape [2]

// expected-note @+1 {{mesh @a is used here}}
func.func @two_meshes(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@a, [shard<0>]>}) -> tensor<8x16xf32> {
  // expected-error @+1 {{function 'two_meshes' uses mesh @b here and mesh @a elsewhere; propagation needs one mesh per function}}
  %0 = dtensor.distribute %x to <@b, [shard<0>]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @recursive(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x16xf32> {
  // expected-error @+1 {{recursive call to 'recursive': propagation needs an acyclic call graph}}
  %0 = func.call @recursive(%x) : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

// expected-error @+1 {{propagation supports functions with a single block}}
func.func @blocks(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x16xf32> {
  cf.br ^next
^next:
  return %x : tensor<8x16xf32>
}

// -----

dtensor.mesh @tp shape [2]

func.func @nested(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}) -> tensor<8x16xf32> {
  %0 = scf.execute_region -> tensor<8x16xf32> {
    // expected-error @+1 {{layout constraints must be at the top level of a function}}
    %1 = dtensor.distribute %x to <@tp, [shard<0>]> : tensor<8x16xf32>
    scf.yield %1 : tensor<8x16xf32>
  }
  return %0 : tensor<8x16xf32>
}

// Claims and requests with open mesh dims constrain only their other mesh
// dims; propagation chooses the open ones and writes them into the layout.
// RUN: dtensor-opt %s --dtensor-propagate -split-input-file -verify-diagnostics | FileCheck %s

dtensor.mesh @m shape [2, 2]

// k arrives sharded over both mesh dims. The claim and the request speak
// of mesh dim 0 only: k keeps Shard(2) over mesh dim 1 and is gathered over
// mesh dim 0 alone (the all-gather rotation of context parallelism).
// CHECK-LABEL: func.func @open_keeps_other_dims
// CHECK:       %[[N:.*]] = arith.negf %arg0 {dtensor.layouts = [#dtensor.layout<@m, [shard<1>, shard<2>]>]}
// CHECK-NEXT:  %[[C:.*]] = dtensor.distribute %[[N]] to <@m, [shard<1>, shard<2>]> : tensor<2x8x16xf32>
// CHECK-NEXT:  %[[G:.*]] = dtensor.redistribute %[[C]] from <@m, [shard<1>, shard<2>]> to <@m, [replicate, shard<2>]>
// CHECK-NEXT:  %[[R:.*]] = dtensor.distribute %[[G]] to <@m, [replicate, shard<2>]> : tensor<2x8x16xf32>
// CHECK-NOT:   open_mesh_dims
// CHECK:       return %[[R]]
func.func @open_keeps_other_dims(%k: tensor<2x8x16xf32> {dtensor.layout = #dtensor.layout<@m, [shard<1>, shard<2>]>}) -> tensor<2x8x16xf32> {
  %n = arith.negf %k : tensor<2x8x16xf32>
  %c = dtensor.distribute %n to <@m, [shard<1>, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<2x8x16xf32>
  %r = dtensor.to_layout %c to <@m, [replicate, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

dtensor.mesh @m shape [2, 2]

// The same claim without open dims replicates over mesh dim 1 as well.
// CHECK-LABEL: func.func @closed_constrains_every_dim
// CHECK:       dtensor.redistribute %{{.*}} from <@m, [shard<1>, shard<2>]> to <@m, [shard<1>, replicate]>
// CHECK:       dtensor.redistribute %{{.*}} from <@m, [shard<1>, replicate]> to <@m, [replicate, replicate]>
func.func @closed_constrains_every_dim(%k: tensor<2x8x16xf32> {dtensor.layout = #dtensor.layout<@m, [shard<1>, shard<2>]>}) -> tensor<2x8x16xf32> {
  %n = arith.negf %k : tensor<2x8x16xf32>
  %c = dtensor.distribute %n to <@m, [shard<1>, replicate]> : tensor<2x8x16xf32>
  %r = dtensor.to_layout %c to <@m, [replicate, replicate]> : tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

dtensor.mesh @m shape [2, 2]

// An open claim on an argument admits the argument's own layout where they
// agree: nothing moves.
// CHECK-LABEL: func.func @open_claim_on_argument
// CHECK-NOT:   dtensor.redistribute
// CHECK:       dtensor.distribute %arg0 to <@m, [shard<1>, shard<2>]> : tensor<2x8x16xf32>
func.func @open_claim_on_argument(%k: tensor<2x8x16xf32> {dtensor.layout = #dtensor.layout<@m, [shard<1>, shard<2>]>}) -> tensor<2x8x16xf32> {
  %c = dtensor.distribute %k to <@m, [shard<1>, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<2x8x16xf32>
  %n = arith.negf %c : tensor<2x8x16xf32>
  return %n : tensor<2x8x16xf32>
}

// -----

dtensor.mesh @m shape [2, 2]

// Where the closed dims disagree, the claims conflict; an open dim is
// written `?`.
// expected-note @+1 {{the other layout constraint is here}}
func.func @open_claim_conflict(%k: tensor<2x8x16xf32> {dtensor.layout = #dtensor.layout<@m, [shard<1>, shard<2>]>}) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{conflicting layouts for one value: [S(0), ?] here, but [S(1), S(2)] before}}
  %c = dtensor.distribute %k to <@m, [shard<0>, replicate]> {open_mesh_dims = array<i64: 1>} : tensor<2x8x16xf32>
  return %c : tensor<2x8x16xf32>
}

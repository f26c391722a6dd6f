// RUN: dtensor-opt %s --dtensor-strip-layouts -split-input-file -verify-diagnostics

dtensor.mesh @mesh shape [2]

func.func @per_rank(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @below {{belongs to a per-rank program, which has no single-device form}}
  %r = dtensor.all_reduce sum %x on @mesh mesh_dims [0] : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

dtensor.mesh @mesh shape [2]

func.func @coord() -> index {
  // expected-error @below {{belongs to a per-rank program}}
  %i = dtensor.mesh_coord on @mesh mesh_dims [0] : index
  return %i : index
}

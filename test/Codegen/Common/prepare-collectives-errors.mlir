// RUN: dtensor-opt %s --dtensor-prepare-collectives --split-input-file -verify-diagnostics

dtensor.mesh @tp shape [2]

func.func @complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{element type 'complex<f32>' is not supported by the runtime collectives}}
  %r = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<4xcomplex<f32>>
  return %r : tensor<4xcomplex<f32>>
}


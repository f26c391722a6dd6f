// RUN: dtensor-opt %s --dtensor-entry-out-params --split-input-file -verify-diagnostics

// expected-error @+1 {{'func.func' op argument 1 of an entry function must be a ranked tensor, not 'index'}}
func.func @scalar_arg(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0 of an entry function must be a ranked tensor, not 'tensor<*xf32>'}}
func.func @unranked_result(%x: tensor<4xf32>) -> tensor<*xf32> {
  %r = tensor.cast %x : tensor<4xf32> to tensor<*xf32>
  return %r : tensor<*xf32>
}

// -----

// expected-error @+1 {{'func.func' op an entry function must not be called within the module}}
func.func @callee(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

func.func private @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @callee(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

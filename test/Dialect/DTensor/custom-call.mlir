// dtensor.custom_call: parses and prints round trip, with and without
// strategies; the verifier checks each strategy's arity and shard dims.
// RUN: dtensor-opt %s --split-input-file | dtensor-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @with_strategies(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x64xf32>
// CHECK: dtensor.custom_call "swiglu" symbol "example_swiglu"(%{{.*}}, %{{.*}}) into %[[E]] strategies {{\[}}[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>], [#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.partial<sum>]] : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
func.func @with_strategies(%g: tensor<8x64xf32>, %u: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  %y = dtensor.custom_call "swiglu" symbol "example_swiglu" (%g, %u) into %e
      strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>],
                  [#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.partial<sum>]]
      : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// CHECK-LABEL: func.func @replicated(
// CHECK: dtensor.custom_call "norm" symbol "k"(%{{.*}}) into %{{.*}} : (tensor<4x8xf16>) into tensor<4xf32>
// CHECK-NOT: strategies
func.func @replicated(%x: tensor<4x8xf16>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = dtensor.custom_call "norm" symbol "k" (%x) into %e : (tensor<4x8xf16>) into tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A declared backward: one entry per input, unit for an input without a
// gradient.
// CHECK-LABEL: func.func @with_backward(
// CHECK: dtensor.custom_call "norm" symbol "k"(%{{.*}}, %{{.*}}) into %{{.*}} backward [{op_name = "norm_grad_x", strategies = {{\[}}[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.replicate, #dtensor.shard<0>]], symbol = "k_grad_x"}, unit] : (tensor<4x8xf32>, tensor<8xf32>) into tensor<4x8xf32>
func.func @with_backward(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = dtensor.custom_call "norm" symbol "k" (%x, %w) into %e
      backward [{op_name = "norm_grad_x", symbol = "k_grad_x",
                 strategies = [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.replicate, #dtensor.shard<0>]]},
                unit]
      : (tensor<4x8xf32>, tensor<8xf32>) into tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

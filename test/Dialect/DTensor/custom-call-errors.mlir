// The verifier of dtensor.custom_call: a strategy has the result's placement
// and one per input, each a placement, shard dims within the tensor's rank.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

func.func @arity(%g: tensor<8x64xf32>, %u: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{'dtensor.custom_call' op strategy #1 has 2 placements; expected 3 (the result's, then one per input)}}
  %y = dtensor.custom_call "swiglu" symbol "s" (%g, %u) into %e strategies [[#dtensor.replicate, #dtensor.replicate, #dtensor.replicate], [#dtensor.shard<0>, #dtensor.shard<0>]] : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @input_rank(%x: tensor<8x64xf32>, %w: tensor<64xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<8x64xf32>
  // expected-error @+1 {{'dtensor.custom_call' op strategy #0 shards dim 1 of input #1, which has rank 1}}
  %y = dtensor.custom_call "norm" symbol "s" (%x, %w) into %e strategies [[#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.shard<1>]] : (tensor<8x64xf32>, tensor<64xf32>) into tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

func.func @result_rank(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op strategy #0 shards dim -2 of the result, which has rank 1}}
  %y = dtensor.custom_call "rowsum" symbol "s" (%x) into %e strategies [[#dtensor.shard<-2>, #dtensor.shard<0>]] : (tensor<8x64xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @not_a_placement(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op strategy #0 entry #1 is not a placement}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e strategies [[#dtensor.replicate, 3 : i64]] : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @not_a_list(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op strategy #0 is not a list of placements}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e strategies [#dtensor.replicate] : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @empty_symbol(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op needs a non-empty symbol}}
  %y = dtensor.custom_call "f" symbol "" (%x) into %e : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @init_type(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{'dtensor.custom_call' op failed to verify that all of {init, result} have same type}}
  %y = "dtensor.custom_call"(%e, %x) {op_name = "f", symbol = "s"} : (tensor<4xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @empty_strategies(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op has an empty strategy list; leave out 'strategies' to run the op replicated}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e strategies [] : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A backward: one entry per input, each unit or {op_name, symbol,
// strategies?}, the strategies checked against the backward op's types
// (the input's gradient, then the inputs and the result's gradient).
func.func @backward_count(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op has 1 backward entries; expected one per input (2)}}
  %y = dtensor.custom_call "f" symbol "s" (%x, %w) into %e backward [unit] : (tensor<8xf32>, tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @backward_entry(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op backward of input #0: expected unit (no gradient) or a dictionary {op_name, symbol, strategies?}}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e backward ["g"] : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @backward_symbol(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op backward of input #0: needs a non-empty string 'symbol'}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e backward [{op_name = "g"}] : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @backward_member(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op backward of input #0: unknown member 'shape'}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e backward [{op_name = "g", symbol = "t", shape = 1}] : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @backward_strategy_arity(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op backward of input #0: strategy #0 has 2 placements; expected 3 (the result's, then one per input)}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e backward [{op_name = "g", symbol = "t", strategies = [[#dtensor.shard<0>, #dtensor.shard<0>]]}] : (tensor<8xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @backward_strategy_rank(%x: tensor<8x4xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'dtensor.custom_call' op backward of input #0: strategy #0 shards dim 1 of input #1, which has rank 1}}
  %y = dtensor.custom_call "f" symbol "s" (%x) into %e backward [{op_name = "g", symbol = "t", strategies = [[#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.shard<1>]]}] : (tensor<8x4xf32>) into tensor<8xf32>
  return %y : tensor<8xf32>
}

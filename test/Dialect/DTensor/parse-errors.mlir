// Malformed placements and layouts are rejected by the parser.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected a placement: shard<dim>, shard<dim, head_tail>, replicate or partial<sum|avg|max|min>}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@m, [sharded<0>]>})

// -----

// expected-error @+1 {{expected a placement: shard<dim>, shard<dim, head_tail>, replicate or partial<sum|avg|max|min>}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@m, [layout<@m, []>]>})

// -----

// expected-error @+2 {{expected ::dtensor::ReductionKind to be one of: sum, avg, max, min}}
// expected-error @+1 {{failed to parse DTensor_PartialAttr parameter 'kind'}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@m, [partial<prod>]>})

// -----

// expected-error @+1 {{expected attribute value}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<[replicate]>})

// -----

// A future holds a ranked tensor.
// expected-error @+2 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
// expected-error @+1 {{failed to parse DTensor_FutureType parameter 'valueType' which is to be a `::mlir::RankedTensorType`}}
func.func private @f(!dtensor.future<f32>)

// -----

dtensor.mesh @m shape [2]
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'dtensor.all_reduce' expected string or keyword containing one of the following enum values for attribute 'reduction' [sum, avg, max, min]}}
  %0 = dtensor.all_reduce prod %x on @m mesh_dims [0] : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{unknown initializer kind 'xavier'; expected zeros, ones, constant, normal or uniform}}
func.func private @f(tensor<4xf32> {dtensor.weight, dtensor.init = #dtensor.init<xavier>})

// -----

// expected-error @+1 {{'std' must be >= 0, got -1}}
func.func private @f(tensor<4xf32> {dtensor.weight, dtensor.init = #dtensor.init<normal, mean = 0.0, std = -1.0>})

// -----

// expected-error @+1 {{'low' (1) must be <= 'high' (0)}}
func.func private @f(tensor<4xf32> {dtensor.weight, dtensor.init = #dtensor.init<uniform, low = 1.0, high = 0.0>})

// -----

// expected-error @+1 {{expected 'std'}}
func.func private @f(tensor<4xf32> {dtensor.weight, dtensor.init = #dtensor.init<normal, mean = 0.0, sd = 1.0>})

// -----

// expected-error @+1 {{expected 'head_tail'}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@m, [shard<0, tail>]>})

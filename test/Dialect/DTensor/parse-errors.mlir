// Malformed placements and layouts are rejected by the parser.
// RUN: dtensor-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{expected a placement: shard<dim>, replicate or partial<sum|avg|max|min>}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@m, [sharded<0>]>})

// -----

// expected-error @+1 {{expected a placement: shard<dim>, replicate or partial<sum|avg|max|min>}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@m, [layout<@m, []>]>})

// -----

// expected-error @+2 {{expected ::dtensor::ReductionKind to be one of: sum, avg, max, min}}
// expected-error @+1 {{failed to parse DTensor_PartialAttr parameter 'kind'}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<@m, [partial<prod>]>})

// -----

// expected-error @+1 {{expected attribute value}}
func.func private @f(tensor<4xf32> {dtensor.layout = #dtensor.layout<[replicate]>})

// A result may update a weight (a parameter that the entry trains in place)
// as well as state; the module may hold a training plan.
// RUN: dtensor-opt %s | FileCheck %s

// CHECK: module attributes {dtensor.training = {loss = "loss", optimizer = {kind = "sgd", lr = 1.000000e-01 : f64}}}
module attributes {dtensor.training = {loss = "loss", optimizer = {kind = "sgd", lr = 0.1 : f64}}} {
  // CHECK-LABEL: func.func @step
  // CHECK-SAME: {dtensor.name = "w", dtensor.weight}
  // CHECK-SAME: {dtensor.name = "w.momentum_buffer", dtensor.state}
  // CHECK-SAME: -> (tensor<4xf32> {dtensor.updates = 0 : i64}, tensor<4xf32> {dtensor.updates = 1 : i64})
  func.func @step(%w: tensor<4xf32> {dtensor.weight, dtensor.name = "w"},
                  %m: tensor<4xf32> {dtensor.state, dtensor.name = "w.momentum_buffer"})
      -> (tensor<4xf32> {dtensor.updates = 0 : i64},
          tensor<4xf32> {dtensor.updates = 1 : i64}) {
    return %w, %m : tensor<4xf32>, tensor<4xf32>
  }
}

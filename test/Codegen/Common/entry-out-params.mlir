// RUN: dtensor-opt %s --dtensor-entry-out-params | FileCheck %s

// Results become memref out-params (dynamic dims kept), written with
// materialize_in_destination; inputs are not writable; dtensor attributes
// are dropped; the entry gets a C interface.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32> {bufferization.writable = false},
// CHECK-SAME: %[[OUT0:.*]]: memref<?x4xf32>, %[[OUT1:.*]]: memref<4xf32>)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-NOT: dtensor.layout
// CHECK: %[[E:.*]] = math.exp %[[X]]
// CHECK: bufferization.materialize_in_destination %[[E]] in writable %[[OUT0]] : (tensor<?x4xf32>, memref<?x4xf32>) -> ()
// CHECK: bufferization.materialize_in_destination %{{.*}} in writable %[[OUT1]]
// CHECK-NEXT: return{{$}}

dtensor.mesh @tp shape [2]

func.func @step(%x: tensor<?x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>})
    -> (tensor<?x4xf32> {dtensor.layout = #dtensor.layout<@tp, [shard<0>]>}, tensor<4xf32>) {
  %e = math.exp %x : tensor<?x4xf32>
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %e, %c : tensor<?x4xf32>, tensor<4xf32>
}

// Private functions keep their signature.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// State: the argument is writable, the result updating it gets no out-param
// and is materialized into the argument after the outputs, and stays the
// entry's result (--dtensor-drop-state-results drops it after
// bufferization).
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[IN:.*]]: tensor<4xf32> {bufferization.writable = false},
// CHECK-SAME: %[[STATE:.*]]: tensor<4xf32> {bufferization.writable = true},
// CHECK-SAME: %[[OUT:.*]]: memref<4xf32>) -> tensor<4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[IN]], %[[STATE]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[SUM]] in writable %[[OUT]]
// CHECK-NEXT: %[[NEW:.*]] = bufferization.materialize_in_destination %[[SUM]] in %[[STATE]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[NEW]] : tensor<4xf32>
func.func @accumulate(%x: tensor<4xf32>, %s: tensor<4xf32> {dtensor.name = "total", dtensor.state})
    -> (tensor<4xf32> {dtensor.updates = 1 : i64}, tensor<4xf32> {dtensor.name = "sum"}) {
  %r = arith.addf %x, %s : tensor<4xf32>
  return %r, %r : tensor<4xf32>, tensor<4xf32>
}

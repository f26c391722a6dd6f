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

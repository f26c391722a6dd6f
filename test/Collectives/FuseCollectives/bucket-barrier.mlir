// Bucketing never sinks an op below a dtensor.optimization_barrier: a
// recomputation (activation checkpointing) fenced by the barrier would then
// run before that part of the backward, and its values would live across
// it. Without the barrier the two all_reduces share a call and the tanh
// moves below it; with it they stay apart and the order is kept.
// RUN: dtensor-opt %s --dtensor-fuse-collectives='overlap=false' | FileCheck %s

dtensor.mesh @tp shape [2]

// CHECK-LABEL: func.func @no_barrier
// CHECK: %[[R:.*]]:2 = dtensor.all_reduce sum %{{.*}}, %{{.*}} on @tp
// CHECK-NEXT: math.tanh %[[R]]#0
func.func @no_barrier(%x: tensor<8xf32>, %y: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %ra = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  %u = math.tanh %ra : tensor<8xf32>
  %b = math.exp %y : tensor<4xf32>
  %rb = dtensor.all_reduce sum %b on @tp mesh_dims [0] : tensor<4xf32>
  return %u, %rb : tensor<8xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @barrier
// CHECK: %[[RA:.*]] = dtensor.all_reduce sum %{{.*}} on @tp mesh_dims [0] : tensor<8xf32>
// CHECK-NEXT: math.tanh %[[RA]]
// CHECK-NEXT: %[[K:.*]] = dtensor.optimization_barrier
// CHECK-NEXT: %[[B:.*]] = math.exp %[[K]]
// CHECK-NEXT: dtensor.all_reduce sum %[[B]] on @tp mesh_dims [0] : tensor<4xf32>
func.func @barrier(%x: tensor<8xf32>, %y: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %ra = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
  %u = math.tanh %ra : tensor<8xf32>
  %k = dtensor.optimization_barrier %y : tensor<4xf32>
  %b = math.exp %k : tensor<4xf32>
  %rb = dtensor.all_reduce sum %b on @tp mesh_dims [0] : tensor<4xf32>
  return %u, %rb : tensor<8xf32>, tensor<4xf32>
}

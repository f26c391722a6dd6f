// RUN: dtensor-opt %s --dtensor-strip-layouts | FileCheck %s

// The single-device form: no mesh, no layouts, no (re)distribution; names,
// weight marks and initializers stay. (Re)distribution includes
// dtensor.to_layout.

// CHECK-NOT: dtensor.mesh
dtensor.mesh @mesh shape [2, 2]

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:.*]]: tensor<8x16xf32> {dtensor.name = "x"},
// CHECK-SAME: %[[W:.*]]: tensor<16x32xf32> {dtensor.init = #dtensor.init<normal, mean = 0.000000e+00, std = 2.000000e-02>, dtensor.name = "w", dtensor.weight})
// CHECK-SAME: -> (tensor<8x32xf32> {dtensor.name = "y"})
func.func @mlp(%x: tensor<8x16xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>, replicate]>, dtensor.name = "x"},
               %w: tensor<16x32xf32> {dtensor.layout = #dtensor.layout<@mesh, [replicate, shard<1>]>, dtensor.name = "w", dtensor.weight, dtensor.init = #dtensor.init<normal, mean = 0.0, std = 0.02>})
    -> (tensor<8x32xf32> {dtensor.layout = #dtensor.layout<@mesh, [shard<0>, replicate]>, dtensor.name = "y"}) {
  // CHECK: %[[INIT:.*]] = tensor.empty
  %init = tensor.empty() : tensor<8x32xf32>
  %zero = arith.constant 0.0 : f32
  // CHECK: %[[FILL:.*]] = linalg.fill
  // CHECK-NOT: dtensor.layouts
  %fill = linalg.fill {dtensor.layouts = [#dtensor.layout<@mesh, [shard<0>, shard<1>]>]} ins(%zero : f32) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: %[[MM:.*]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[FILL]] : {{.*}})
  %mm = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK-NOT: dtensor.redistribute
  %r = dtensor.redistribute %mm from <@mesh, [shard<0>, shard<1>]> to <@mesh, [shard<0>, replicate]> : tensor<8x32xf32>
  %d = dtensor.distribute %r to <@mesh, [shard<0>, replicate]> : tensor<8x32xf32>
  %t = dtensor.to_layout %d to <@mesh, [shard<0>, replicate]> : tensor<8x32xf32>
  // CHECK: return %[[MM]]
  return %t : tensor<8x32xf32>
}

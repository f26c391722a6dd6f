// dtensor.shift: round trip (custom and generic form) and every verifier
// rule, one failing input each.
// RUN: rm -rf %t && split-file %s %t
// RUN: dtensor-opt %t/ok.mlir | dtensor-opt | FileCheck %s
// RUN: dtensor-opt %t/ok.mlir --mlir-print-op-generic | dtensor-opt | FileCheck %s
// RUN: dtensor-opt %t/errors.mlir -split-input-file -verify-diagnostics

//--- ok.mlir
dtensor.mesh @cp shape [4]
dtensor.mesh @mesh shape [2, 2]
// CHECK-LABEL: func.func @even
func.func @even(%k: tensor<1x4x2xf32>, %v: tensor<1x4x3xf32>)
    -> (tensor<1x4x2xf32>, tensor<1x4x3xf32>) {
  // 16 over 4: every piece 4, static.
  // CHECK: dtensor.shift %{{.*}}, %{{.*}} on @cp mesh_dims [0] dim 1 dim_size 16 step 2 : tensor<1x4x2xf32>, tensor<1x4x3xf32> -> tensor<1x4x2xf32>, tensor<1x4x3xf32>
  %a, %b = dtensor.shift %k, %v on @cp mesh_dims [0] dim 1 dim_size 16 step 2 : tensor<1x4x2xf32>, tensor<1x4x3xf32> -> tensor<1x4x2xf32>, tensor<1x4x3xf32>
  return %a, %b : tensor<1x4x2xf32>, tensor<1x4x3xf32>
}
// CHECK-LABEL: func.func @uneven
func.func @uneven(%k: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // 15 over the second mesh dim (2 ranks): pieces 8 and 7, dynamic.
  // CHECK: dtensor.shift %{{.*}} on @mesh mesh_dims [1] dim 0 dim_size 15 step 0 : tensor<?x8xf32> -> tensor<?x8xf32>
  %a = dtensor.shift %k on @mesh mesh_dims [1] dim 0 dim_size 15 step 0 : tensor<?x8xf32> -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

//--- errors.mlir
dtensor.mesh @cp shape [4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'dtensor.shift' op dim 2 is out of range for result #0, a rank-2 tensor}}
  %0 = dtensor.shift %x on @cp mesh_dims [0] dim 2 dim_size 16 step 0 : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

dtensor.mesh @mesh shape [2, 2]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'dtensor.shift' op shifts along one mesh dim, not 2}}
  %0 = dtensor.shift %x on @mesh mesh_dims [0, 1] dim 0 dim_size 16 step 0 : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

dtensor.mesh @cp shape [4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'dtensor.shift' op dim_size 16 and step -1 must not be negative}}
  %0 = dtensor.shift %x on @cp mesh_dims [0] dim 0 dim_size 16 step -1 : tensor<4x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

dtensor.mesh @cp shape [4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'dtensor.shift' op result #0 dim 1 differs from input #0; only the shifted dim may change}}
  %0 = dtensor.shift %x on @cp mesh_dims [0] dim 0 dim_size 16 step 0 : tensor<4x2xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

dtensor.mesh @cp shape [4]
func.func @f(%x: tensor<4x2xf32>, %y: tensor<4x2xf64>) -> (tensor<4x2xf32>, tensor<4x2xf64>) {
  // expected-error @+1 {{'dtensor.shift' op input #1 element type 'f64' differs from input #0 element type 'f32'; the inputs of one collective share an element type}}
  %0, %1 = dtensor.shift %x, %y on @cp mesh_dims [0] dim 0 dim_size 16 step 0 : tensor<4x2xf32>, tensor<4x2xf64> -> tensor<4x2xf32>, tensor<4x2xf64>
  return %0, %1 : tensor<4x2xf32>, tensor<4x2xf64>
}

// -----

dtensor.mesh @cp shape [4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<5x2xf32> {
  // expected-error @+1 {{'dtensor.shift' op result #0 dim 0 has size 5; expected 4 (16 split over 4 ranks)}}
  %0 = dtensor.shift %x on @cp mesh_dims [0] dim 0 dim_size 16 step 0 : tensor<4x2xf32> -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

dtensor.mesh @cp shape [4]
func.func @f(%x: tensor<4x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'dtensor.shift' op input #0 dim 0 is static, but 15 does not split evenly over 4 ranks; it must be dynamic}}
  %0 = dtensor.shift %x on @cp mesh_dims [0] dim 0 dim_size 15 step 0 : tensor<4x2xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

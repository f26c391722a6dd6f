// dtensor.scatter_add round-trips, with i32 and i64 indices, a 1-D table
// and dynamic sizes.
// RUN: dtensor-opt %s | dtensor-opt | FileCheck %s

// CHECK-LABEL: func.func @rows(
// CHECK: dtensor.scatter_add %{{.*}} into %{{.*}} at %{{.*}} : tensor<32x64xf32> into tensor<256x64xf32>, tensor<32xi64>
func.func @rows(%u: tensor<32x64xf32>, %t: tensor<256x64xf32>, %i: tensor<32xi64>) -> tensor<256x64xf32> {
  %r = dtensor.scatter_add %u into %t at %i : tensor<32x64xf32> into tensor<256x64xf32>, tensor<32xi64>
  return %r : tensor<256x64xf32>
}

// CHECK-LABEL: func.func @vector_i32(
// CHECK: dtensor.scatter_add %{{.*}} into %{{.*}} at %{{.*}} : tensor<5xf16> into tensor<9xf16>, tensor<5xi32>
func.func @vector_i32(%u: tensor<5xf16>, %t: tensor<9xf16>, %i: tensor<5xi32>) -> tensor<9xf16> {
  %r = dtensor.scatter_add %u into %t at %i : tensor<5xf16> into tensor<9xf16>, tensor<5xi32>
  return %r : tensor<9xf16>
}

// CHECK-LABEL: func.func @dynamic(
// CHECK: dtensor.scatter_add %{{.*}} into %{{.*}} at %{{.*}} : tensor<?x4x?xf32> into tensor<?x4x8xf32>, tensor<?xi64>
func.func @dynamic(%u: tensor<?x4x?xf32>, %t: tensor<?x4x8xf32>, %i: tensor<?xi64>) -> tensor<?x4x8xf32> {
  %r = dtensor.scatter_add %u into %t at %i : tensor<?x4x?xf32> into tensor<?x4x8xf32>, tensor<?xi64>
  return %r : tensor<?x4x8xf32>
}

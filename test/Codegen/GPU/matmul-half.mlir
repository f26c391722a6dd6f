// RUN: dtensor-opt %s --dtensor-matmul-to-runtime='half-precision=true' | FileCheck %s
// RUN: dtensor-opt %s --dtensor-matmul-to-runtime | FileCheck %s --check-prefix=CPU

// With half-precision (the CUDA target), f16 and bf16 products are runtime
// calls: of one dtype (f16 = 2), or accumulating bf16 (3) operands into f32
// (0). Other mixes stay loops. The CPU target keeps them all as loops.
// CHECK-LABEL: func.func @half(
// CHECK: %[[F16:.*]] = arith.constant 2 : i32
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: call @dtensor_rt_matmul(%[[F16]], %[[ONE]]) : (i32, i32) -> ()
// CHECK: %[[BF16:.*]] = arith.constant 3 : i32
// CHECK: %[[F32:.*]] = arith.constant 0 : i32
// CHECK: %[[ONE2:.*]] = arith.constant 1 : i32
// CHECK: call @dtensor_rt_matmul_mixed(%[[BF16]], %[[F32]], %[[ONE2]]) : (i32, i32, i32) -> ()
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf16>, memref<8x2xf16>) outs(%{{.*}} : memref<4x2xf64>)
// CHECK-NOT: linalg.matmul
// CPU-LABEL: func.func @half(
// CPU-NOT: call @dtensor_rt_matmul
// CPU-COUNT-3: linalg.matmul
func.func @half(%a: memref<4x8xf16>, %b: memref<8x2xf16>, %c: memref<4x2xf16>,
                %x: memref<4x8xbf16>, %y: memref<8x2xbf16>, %z: memref<4x2xf32>,
                %w: memref<4x2xf64>) {
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x2xf16>) outs(%c : memref<4x2xf16>)
  linalg.matmul ins(%x, %y : memref<4x8xbf16>, memref<8x2xbf16>) outs(%z : memref<4x2xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf16>, memref<8x2xf16>) outs(%w : memref<4x2xf64>)
  return
}

// A loop of f32 tanh is vectorised (--dtensor-cpu-approximate-tanh):
// glibc's libmvec has no tanh, so before each element called tanhf. The
// program calls no tanh at all; its loop divides eight lanes at a time
// (AVX2); the values stay within 5 ulp of numpy's tanh in f64.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtensor-compile %s -o %t/tanh.dtc --mesh 1 --no-reference --cpu x86-64-v3
// RUN: nm -D %t/tanh.dtc/program.so | FileCheck %s --check-prefix=SYMBOLS
// SYMBOLS-NOT: U {{.*}}tanh
// RUN: llvm-objdump -d --no-show-raw-insn %t/tanh.dtc/program.so | FileCheck %s --check-prefix=ASM
// ASM: vdivps {{.*}}%ymm
// RUN: %python %S/ulp-error.py inputs %t/x.npy 2097152
// RUN: dtensor-run %t/tanh.dtc --input x=%t/x.npy --output result0=%t/y.npy
// RUN: %python %S/ulp-error.py tanh %t/x.npy %t/y.npy | FileCheck %s
// CHECK: max error {{[0-5]}} ulp
// CHECK: non-finite arguments ok

dtensor.mesh @m shape [1] names ["d"]

func.func @tanh(%x: tensor<2097152xf32> {dtensor.layout = #dtensor.layout<@m, [replicate]>, dtensor.name = "x"})
    -> tensor<2097152xf32> {
  %y = math.tanh %x : tensor<2097152xf32>
  return %y : tensor<2097152xf32>
}

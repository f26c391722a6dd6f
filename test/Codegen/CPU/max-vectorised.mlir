// A float row max over the innermost loop is vectorised
// (--dtensor-cpu-native-min-max): the loop compares eight lanes at a time
// (AVX2) where it took one element after the other. The maxima equal
// numpy's exactly, a NaN in a row makes its max NaN (arith.maximumf), and
// -0 is below +0.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtensor-compile %s -o %t/max.dtc --mesh 1 --no-reference --cpu x86-64-v3
// RUN: llvm-objdump -d --no-show-raw-insn %t/max.dtc/program.so | FileCheck %s --check-prefix=ASM
// ASM: vmaxps {{.*}}%ymm
// RUN: %python -c "import numpy as np; x = np.random.default_rng(0).standard_normal((64, 1024), dtype=np.float32); \
// RUN:   x[3, 517] = np.nan; x[5, :] = -0.0; x[5, 700] = 0.0; x[6, :] = -np.inf; np.save('%t/x.npy', x)"
// RUN: dtensor-run %t/max.dtc --input x=%t/x.npy --output result0=%t/y.npy
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy'); y = np.load('%t/y.npy'); \
// RUN:   ref = x.max(1); same = (y == ref) | (np.isnan(y) & np.isnan(ref)); \
// RUN:   print('max', 'ok' if same.all() and np.isnan(y[3]) and not np.signbit(y[5]) else y[~same])" | FileCheck %s
// CHECK: max ok

dtensor.mesh @m shape [1] names ["d"]

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @max(%x: tensor<64x1024xf32> {dtensor.layout = #dtensor.layout<@m, [replicate]>, dtensor.name = "x"})
    -> tensor<64xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.maximumf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  return %m : tensor<64xf32>
}

// A float row sum over the innermost loop is vectorised
// (--dtensor-cpu-reassociate-sums): the loop adds eight lanes at a time
// (AVX2) where it added one element after the other. The sums stay those
// of numpy's within the rounding of a 1024-term sum.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtensor-compile %s -o %t/sum.dtc --mesh 1 --no-reference --cpu x86-64-v3
// RUN: llvm-objdump -d --no-show-raw-insn %t/sum.dtc/program.so | FileCheck %s --check-prefix=ASM
// ASM: vaddps {{.*}}%ymm
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(0).standard_normal((64, 1024), dtype=np.float32))"
// RUN: dtensor-run %t/sum.dtc --input x=%t/x.npy --output result0=%t/y.npy
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy').astype(np.float64); y = np.load('%t/y.npy'); \
// RUN:   err = np.abs(y - x.sum(1)).max() / np.abs(x).sum(1).max(); print('max error', 'ok' if err < 1e-6 else err)" | FileCheck %s
// CHECK: max error ok

dtensor.mesh @m shape [1] names ["d"]

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @sum(%x: tensor<64x1024xf32> {dtensor.layout = #dtensor.layout<@m, [replicate]>, dtensor.name = "x"})
    -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x1024xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>
}

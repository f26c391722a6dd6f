// On x86-64 glibc, loops of math functions are vectorised with calls into
// glibc's vector math library (libmvec, _ZGV<isa>N<lanes>v_<name>) instead
// of one libm call per element; the program links libmvec. The values stay
// those of libm's exp within a few ulp.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtensor-compile %s -o %t/exp.dtc --mesh 1 --no-reference
// RUN: nm -D %t/exp.dtc/program.so | FileCheck %s --check-prefix=SYMBOLS
// SYMBOLS: U _ZGV{{[bcde]}}N{{[0-9]+}}v_expf
// RUN: readelf -d %t/exp.dtc/program.so | FileCheck %s --check-prefix=NEEDED
// NEEDED: (NEEDED) {{.*}}[libmvec.so.1]
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.linspace(-80, 80, 4096, dtype=np.float32).reshape(4, 1024))"
// RUN: dtensor-run %t/exp.dtc --input x=%t/x.npy --output result0=%t/y.npy
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy').astype(np.float64); y = np.load('%t/y.npy').astype(np.float64); \
// RUN:   err = np.abs(y - np.exp(x)) / np.exp(x); print('max relative error', 'ok' if err.max() < 1e-6 else err.max())" | FileCheck %s
// CHECK: max relative error ok

dtensor.mesh @m shape [1] names ["d"]

func.func @exp(%x: tensor<4x1024xf32> {dtensor.layout = #dtensor.layout<@m, [replicate]>, dtensor.name = "x"})
    -> tensor<4x1024xf32> {
  %y = math.exp %x : tensor<4x1024xf32>
  return %y : tensor<4x1024xf32>
}

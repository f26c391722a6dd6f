// The clamp of --dtensor-cpu-clamp-exp survives LLVM: in the vectorised
// loop, the argument of glibc's vector exp is clamped (vmaxps, vminps)
// right before the call, so arguments such as a causal mask's -inf never
// reach exp's slow path. Results: exp, 0 below -87, +inf above 89, NaN kept.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: dtensor-compile %s -o %t/exp.dtc --mesh 1 --no-reference --cpu x86-64-v3
// RUN: llvm-objdump -d --no-show-raw-insn %t/exp.dtc/program.so | FileCheck %s --check-prefix=ASM
// ASM: vmaxps {{.*}}%ymm
// ASM-NEXT: vminps {{.*}}%ymm
// ASM-NEXT: call{{.*}}_ZGVdN8v_expf
// RUN: %python %S/exp-values.py inputs %t/x.npy
// RUN: dtensor-run %t/exp.dtc --input x=%t/x.npy --output result0=%t/y.npy
// RUN: %python %S/exp-values.py check %t/x.npy %t/y.npy | FileCheck %s
// CHECK: in range: max relative error {{.*}}e-0{{[7-9]}}
// CHECK: in range, overflowing: all +inf
// CHECK: below -87: all 0
// CHECK: above 89: all +inf
// CHECK: nan: all nan

dtensor.mesh @m shape [1] names ["d"]

func.func @exp(%x: tensor<65536xf32> {dtensor.layout = #dtensor.layout<@m, [replicate]>, dtensor.name = "x"})
    -> tensor<65536xf32> {
  %y = math.exp %x : tensor<65536xf32>
  return %y : tensor<65536xf32>
}

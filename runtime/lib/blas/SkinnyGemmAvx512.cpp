//===- SkinnyGemmAvx512.cpp - The skinny product with AVX-512 -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled with -mavx512f -mfma (runtime/lib/CMakeLists.txt); called only
// when the CPU has AVX-512 (skinny::detectIsa).
//
//===----------------------------------------------------------------------===//

#include "SkinnyGemmKernel.h"

namespace dtensor::rt::skinny {
namespace {

struct Avx512Ops {
  using Vec = __m512;
  static constexpr int64_t kLanes = 16;
  /// W rows per block for M rows of A: M x NB accumulators of the 32
  /// registers (four or more rows measured faster than two at M = 8, even
  /// with some spilled).
  template <int M> static constexpr int kColumns = M <= 3 ? 8 : 4;

  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec load(const float *p) { return _mm512_loadu_ps(p); }
  static Vec loadFirst(const float *p, int64_t count) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), p);
  }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  /// The sum of each quarter of v's lanes (__builtin_shufflevector: GCC
  /// 12's extract intrinsics warn of undefined values they do not use).
  static __m128 quarterSums(Vec v) {
    __m256 eight = _mm256_add_ps(
        __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7),
        __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
    return _mm_add_ps(__builtin_shufflevector(eight, eight, 0, 1, 2, 3),
                      __builtin_shufflevector(eight, eight, 4, 5, 6, 7));
  }
};

} // namespace

void computeColumnsAvx512(const Problem &problem, int64_t begin, int64_t end) {
  columns<Avx512Ops>(problem, begin, end);
}

} // namespace dtensor::rt::skinny

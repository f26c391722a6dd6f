//===- SkinnyGemmAvx2.cpp - The skinny product with AVX2 and FMA ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled with -mavx2 -mfma (runtime/lib/CMakeLists.txt); called only when
// the CPU has both (skinny::detectIsa).
//
//===----------------------------------------------------------------------===//

#include "SkinnyGemmKernel.h"

namespace dtensor::rt::skinny {
namespace {

struct Avx2Ops {
  using Vec = __m256;
  static constexpr int64_t kLanes = 8;
  /// W rows per block for M rows of A, within the 16 registers.
  template <int M> static constexpr int kColumns = M <= 2 ? 4 : 2;

  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec load(const float *p) { return _mm256_loadu_ps(p); }
  static Vec loadFirst(const float *p, int64_t count) {
    // Lanes below `count` get -1 (loaded), the others 0.
    __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i mask =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lanes);
    return _mm256_maskload_ps(p, mask);
  }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  /// The sum of each quarter of v's lanes.
  static __m128 quarterSums(Vec v) {
    return _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  }
};

} // namespace

void computeColumnsAvx2(const Problem &problem, int64_t begin, int64_t end) {
  columns<Avx2Ops>(problem, begin, end);
}

} // namespace dtensor::rt::skinny

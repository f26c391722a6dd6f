//===- SkinnyGemmAvx512.cpp - The skinny product with AVX-512 -------------===//
//
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
  static float sum(Vec v) {
    // Through memory, once per dot product: GCC 12's helpers of
    // _mm512_reduce_add_ps and of the 256-bit extracts warn of undefined
    // values they do not use.
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    __m256 eight =
        _mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8));
    __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight),
                             _mm256_extractf128_ps(eight, 1));
    four = _mm_add_ps(four, _mm_movehl_ps(four, four));
    four = _mm_add_ss(four, _mm_movehdup_ps(four));
    return _mm_cvtss_f32(four);
  }
};

} // namespace

void computeColumnsAvx512(const Problem &problem, int64_t begin, int64_t end) {
  columns<Avx512Ops>(problem, begin, end);
}

} // namespace dtensor::rt::skinny

//===- AttentionVectors.h - Vectors and exp of attention loops --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Included once per instruction set by the kernels of this folder (each
// build compiled with its own target flags), so everything is in an
// anonymous namespace. A vector is 64 bytes of GCC's vector extension
// whatever the build's ISA (one AVX-512 register, two AVX2 ones, four SSE
// ones); lane by lane the same arithmetic in every build. Multiply-adds
// that must give the same bits in every build are fused explicitly
// (fmaInto, std::fma): hardware FMA where the build has it, the library's
// exactly rounded fma elsewhere; files that rely on this are compiled with
// -ffp-contract=off so that the compiler fuses nothing on its own.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ATTENTION_ATTENTIONVECTORS_H
#define DTENSOR_RUNTIME_ATTENTION_ATTENTIONVECTORS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace dtensor::rt::attention {
namespace {

/// exp(x) in f32 without a library call, so that loops over it vectorise:
/// Cephes' expf (range reduction by ln 2, a degree-6 polynomial, relative
/// error below 2e-7), 0 below -87 (so exp(-inf) is 0).
inline float expApprox(float x) {
  float clamped = std::max(std::min(x, 88.0f), -88.0f);
  float n = clamped * 1.44269504088896341f;
  // Round to nearest by the 1.5 * 2^23 trick: vectorises on any ISA.
  n = (n + 12582912.0f) - 12582912.0f;
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return x < -87.0f ? 0.0f : y * scale;
}

inline float expOf(float x) { return expApprox(x); }
inline double expOf(double x) { return std::exp(x); }

template <typename T> struct VecOf;
template <> struct VecOf<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <> struct VecOf<double> {
  typedef double type __attribute__((vector_size(64)));
};
template <typename T> using Vec = typename VecOf<T>::type;
template <typename T> constexpr int64_t kVecLanes = 64 / sizeof(T);

// Vectors go by reference: GCC passes 64-byte vectors by value differently
// with and without AVX-512 (-Wpsabi), which these inlined helpers need not.
template <typename T> inline void loadVec(Vec<T> &v, const T *data) {
  std::memcpy(&v, data, sizeof(v));
}

template <typename T> inline void storeVec(T *data, const Vec<T> &v) {
  std::memcpy(data, &v, sizeof(v));
}

/// Every lane `value` (one broadcast instruction where the build has one:
/// a loop over the lanes compiles to masked inserts).
inline void broadcastVec(Vec<float> &v, float value) {
#if defined(__AVX512F__)
  v = (Vec<float>)_mm512_set1_ps(value);
#elif defined(__AVX__)
  __m256 half = _mm256_set1_ps(value), halves[2] = {half, half};
  std::memcpy(&v, halves, sizeof(v));
#else
  for (int64_t x = 0; x < kVecLanes<float>; ++x)
    v[x] = value;
#endif
}

inline void broadcastVec(Vec<double> &v, double value) {
#if defined(__AVX512F__)
  v = (Vec<double>)_mm512_set1_pd(value);
#elif defined(__AVX__)
  __m256d half = _mm256_set1_pd(value), halves[2] = {half, half};
  std::memcpy(&v, halves, sizeof(v));
#else
  for (int64_t x = 0; x < kVecLanes<double>; ++x)
    v[x] = value;
#endif
}

/// acc = a * b + acc, each lane rounded once.
inline void fmaInto(Vec<float> &acc, const Vec<float> &a, const Vec<float> &b) {
#if defined(__AVX512F__)
  acc = (Vec<float>)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)acc);
#elif defined(__FMA__)
  __m256 parts[3][2];
  std::memcpy(parts[0], &a, sizeof(a));
  std::memcpy(parts[1], &b, sizeof(b));
  std::memcpy(parts[2], &acc, sizeof(acc));
  for (int half = 0; half < 2; ++half)
    parts[2][half] =
        _mm256_fmadd_ps(parts[0][half], parts[1][half], parts[2][half]);
  std::memcpy(&acc, parts[2], sizeof(acc));
#else
  for (int64_t x = 0; x < kVecLanes<float>; ++x)
    acc[x] = std::fma(a[x], b[x], acc[x]);
#endif
}

inline void fmaInto(Vec<double> &acc, const Vec<double> &a,
                    const Vec<double> &b) {
#if defined(__AVX512F__)
  acc = (Vec<double>)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)acc);
#elif defined(__FMA__)
  __m256d parts[3][2];
  std::memcpy(parts[0], &a, sizeof(a));
  std::memcpy(parts[1], &b, sizeof(b));
  std::memcpy(parts[2], &acc, sizeof(acc));
  for (int half = 0; half < 2; ++half)
    parts[2][half] =
        _mm256_fmadd_pd(parts[0][half], parts[1][half], parts[2][half]);
  std::memcpy(&acc, parts[2], sizeof(acc));
#else
  for (int64_t x = 0; x < kVecLanes<double>; ++x)
    acc[x] = std::fma(a[x], b[x], acc[x]);
#endif
}

/// Rows of a tile of multiplyAccumulate: as many as the build's registers
/// hold with kTileVectors accumulators each (any choice gives the same sums).
#if defined(__AVX512F__)
constexpr int64_t kTileRows = 4;
#elif defined(__AVX2__)
constexpr int64_t kTileRows = 2;
#else
constexpr int64_t kTileRows = 1;
#endif
/// Vectors of a tile's row.
constexpr int64_t kTileVectors = 4;

/// The tile of multiplyAccumulate with `Rows` rows and `Vectors` vectors.
template <int64_t Rows, int64_t Vectors, typename T>
inline void multiplyAccumulateTile(T *out, int64_t outStride, const T *coef,
                                   int64_t coefRow, int64_t coefDepth,
                                   int64_t depth, const T *x, int64_t xStride,
                                   bool fromZero) {
  constexpr int64_t lanes = kVecLanes<T>;
  Vec<T> acc[Rows][Vectors];
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t v = 0; v < Vectors; ++v) {
      if (fromZero)
        acc[r][v] = Vec<T>{};
      else
        loadVec(acc[r][v], out + r * outStride + v * lanes);
    }
  for (int64_t k = 0; k < depth; ++k) {
    Vec<T> xs[Vectors];
    for (int64_t v = 0; v < Vectors; ++v)
      loadVec(xs[v], x + k * xStride + v * lanes);
    for (int64_t r = 0; r < Rows; ++r) {
      Vec<T> c;
      broadcastVec(c, coef[r * coefRow + k * coefDepth]);
      for (int64_t v = 0; v < Vectors; ++v)
        fmaInto(acc[r][v], c, xs[v]);
    }
  }
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t v = 0; v < Vectors; ++v)
      storeVec(out + r * outStride + v * lanes, acc[r][v]);
}

template <int64_t Rows, typename T>
inline void multiplyAccumulateRows(T *out, int64_t outStride, int64_t vectors,
                                   const T *coef, int64_t coefRow,
                                   int64_t coefDepth, int64_t depth, const T *x,
                                   int64_t xStride, bool fromZero) {
  constexpr int64_t lanes = kVecLanes<T>;
  int64_t v = 0;
  for (; v + kTileVectors <= vectors; v += kTileVectors)
    multiplyAccumulateTile<Rows, kTileVectors>(
        out + v * lanes, outStride, coef, coefRow, coefDepth, depth,
        x + v * lanes, xStride, fromZero);
  T *o = out + v * lanes;
  const T *xv = x + v * lanes;
  switch (vectors - v) {
  case 3:
    multiplyAccumulateTile<Rows, 3>(o, outStride, coef, coefRow, coefDepth,
                                    depth, xv, xStride, fromZero);
    break;
  case 2:
    multiplyAccumulateTile<Rows, 2>(o, outStride, coef, coefRow, coefDepth,
                                    depth, xv, xStride, fromZero);
    break;
  case 1:
    multiplyAccumulateTile<Rows, 1>(o, outStride, coef, coefRow, coefDepth,
                                    depth, xv, xStride, fromZero);
    break;
  default:
    break;
  }
}

/// out[a][w] += sum over k < depth of coef[a * coefRow + k * coefDepth] *
/// x[k * xStride + w], for a < rows and w < width (a multiple of
/// kVecLanes<T>): a small matrix product on packed operands, either operand
/// of the coefficients transposed by its strides. With `fromZero` out's
/// old contents are not read (as if 0). Every element is summed in k order
/// with fused multiply-adds, so every build and tiling gives the same bits.
template <typename T>
void multiplyAccumulate(T *out, int64_t outStride, int64_t rows, int64_t width,
                        const T *coef, int64_t coefRow, int64_t coefDepth,
                        int64_t depth, const T *x, int64_t xStride,
                        bool fromZero = false) {
  int64_t vectors = width / kVecLanes<T>;
  int64_t a = 0;
  for (; a + kTileRows <= rows; a += kTileRows)
    multiplyAccumulateRows<kTileRows>(out + a * outStride, outStride, vectors,
                                      coef + a * coefRow, coefRow, coefDepth,
                                      depth, x, xStride, fromZero);
  for (; a < rows; ++a)
    multiplyAccumulateRows<1>(out + a * outStride, outStride, vectors,
                              coef + a * coefRow, coefRow, coefDepth, depth, x,
                              xStride, fromZero);
}

/// `n` rounded up to whole vectors of T.
template <typename T> inline int64_t paddedToVectors(int64_t n) {
  return (n + kVecLanes<T> - 1) / kVecLanes<T> * kVecLanes<T>;
}

} // namespace
} // namespace dtensor::rt::attention

#endif // DTENSOR_RUNTIME_ATTENTION_ATTENTIONVECTORS_H

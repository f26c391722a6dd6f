//===- SkinnyGemmKernel.h - The skinny product, per vector ISA --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Included only by the translation units compiled for one instruction set
// (SkinnyGemmAvx2.cpp, SkinnyGemmAvx512.cpp), each with its `VectorOps`.
// Everything here has internal linkage, so that no code built for AVX-512
// can be picked by the linker for a caller on another CPU.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_BLAS_SKINNYGEMMKERNEL_H
#define DTENSOR_RUNTIME_BLAS_SKINNYGEMMKERNEL_H

#include "SkinnyGemm.h"

#include <immintrin.h>

namespace dtensor::rt::skinny {
namespace {

/// out[j] = sum of acc[j]'s lanes (+ out[j] when `accumulate`), for j < NB.
/// Four at a time: the quarter sums of four vectors, pairwise added twice.
template <typename Ops, int NB>
void storeSums(const typename Ops::Vec (&acc)[NB], float *out,
               bool accumulate) {
  int j = 0;
  for (; j + 4 <= NB; j += 4) {
    __m128 sums = _mm_hadd_ps(
        _mm_hadd_ps(Ops::quarterSums(acc[j]), Ops::quarterSums(acc[j + 1])),
        _mm_hadd_ps(Ops::quarterSums(acc[j + 2]),
                    Ops::quarterSums(acc[j + 3])));
    if (accumulate)
      sums = _mm_add_ps(sums, _mm_loadu_ps(out + j));
    _mm_storeu_ps(out + j, sums);
  }
  for (; j < NB; ++j) {
    __m128 four = Ops::quarterSums(acc[j]);
    four = _mm_hadd_ps(four, four);
    float sum = _mm_cvtss_f32(_mm_hadd_ps(four, four));
    out[j] = accumulate ? out[j] + sum : sum;
  }
}

/// C[0..M, n..n+NB) from NB rows of W streamed together: each W vector is
/// loaded once and multiplied with the M rows of A (in L1 or L2), M x NB
/// accumulators in registers. Several W rows at once keep enough memory
/// streams in flight: with two rows, eight-row products ran at a third of
/// the bandwidth.
template <typename Ops, int M, int NB>
void columnBlock(const Problem &p, int64_t n) {
  using Vec = typename Ops::Vec;
  constexpr int64_t kLanes = Ops::kLanes;
  // Software prefetch this far ahead in each W row (floats).
  constexpr int64_t kPrefetch = 128;
  Vec acc[M][NB];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < NB; ++j)
      acc[i][j] = Ops::zero();
  const float *w[NB];
  for (int j = 0; j < NB; ++j)
    w[j] = p.w + (n + j) * p.ldw;
  int64_t full = p.k / kLanes * kLanes;
  for (int64_t k = 0; k < full; k += kLanes) {
    Vec wv[NB];
    for (int j = 0; j < NB; ++j) {
      wv[j] = Ops::load(w[j] + k);
      _mm_prefetch(reinterpret_cast<const char *>(w[j] + k + kPrefetch),
                   _MM_HINT_T0);
    }
    for (int i = 0; i < M; ++i) {
      Vec av = Ops::load(p.a + i * p.lda + k);
      for (int j = 0; j < NB; ++j)
        acc[i][j] = Ops::fma(av, wv[j], acc[i][j]);
    }
  }
  if (int64_t rest = p.k - full) {
    Vec wv[NB];
    for (int j = 0; j < NB; ++j)
      wv[j] = Ops::loadFirst(w[j] + full, rest);
    for (int i = 0; i < M; ++i) {
      Vec av = Ops::loadFirst(p.a + i * p.lda + full, rest);
      for (int j = 0; j < NB; ++j)
        acc[i][j] = Ops::fma(av, wv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < M; ++i)
    storeSums<Ops, NB>(acc[i], p.c + i * p.ldc + n, p.beta != 0.0f);
}

/// Columns [begin, end): blocks of Ops::kColumns<M> W rows, then one at a
/// time.
template <typename Ops, int M>
void columnsForRows(const Problem &p, int64_t begin, int64_t end) {
  constexpr int NB = Ops::template kColumns<M>;
  int64_t n = begin;
  for (; n + NB <= end; n += NB)
    columnBlock<Ops, M, NB>(p, n);
  for (; n < end; ++n)
    columnBlock<Ops, M, 1>(p, n);
}

template <typename Ops>
void columns(const Problem &p, int64_t begin, int64_t end) {
  switch (p.m) {
  case 1:
    return columnsForRows<Ops, 1>(p, begin, end);
  case 2:
    return columnsForRows<Ops, 2>(p, begin, end);
  case 3:
    return columnsForRows<Ops, 3>(p, begin, end);
  case 4:
    return columnsForRows<Ops, 4>(p, begin, end);
  case 5:
    return columnsForRows<Ops, 5>(p, begin, end);
  case 6:
    return columnsForRows<Ops, 6>(p, begin, end);
  case 7:
    return columnsForRows<Ops, 7>(p, begin, end);
  case 8:
    return columnsForRows<Ops, 8>(p, begin, end);
  default:
    return;
  }
}

} // namespace
} // namespace dtensor::rt::skinny

#endif // DTENSOR_RUNTIME_BLAS_SKINNYGEMMKERNEL_H

//===- SkinnyGemm.h - Products of a few rows by a weight --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// C[m x n] = A[m x k] x W^T (+ C) with W stored n x k, for m <= 8: the
// linear layers of a decode step, W a weight in PyTorch's [out, in] layout.
// Such a product reads W once and is bound by memory. OpenBLAS's gemm first
// packs all of W into panels, so it moves W three times (3.3x the time of a
// single pass at 8 rows, measured); its gemv reads W once per row of A.
// These kernels read each row of W once, for all rows of A together, and
// reduce each dot product at the end.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_BLAS_SKINNYGEMM_H
#define DTENSOR_RUNTIME_BLAS_SKINNYGEMM_H

#include <cstdint>

namespace dtensor::rt {
class WorkerPool;
} // namespace dtensor::rt

namespace dtensor::rt::skinny {

/// The most rows of A (and C) the kernels take.
constexpr int64_t kMaxRows = 8;

/// One product: C = A x W^T + beta * C, row-major, A m x k (row stride lda),
/// W n x k (row stride ldw), C m x n (row stride ldc); beta 0 or 1 (0
/// ignores C's old contents, NaNs included).
struct Problem {
  int64_t m, n, k;
  const float *a;
  int64_t lda;
  const float *w;
  int64_t ldw;
  float beta;
  float *c;
  int64_t ldc;
};

/// The vector instruction sets the kernels are built for.
enum class Isa { None, Avx2, Avx512 };

/// What this CPU and OS support (cpuid and the saved vector state).
Isa detectIsa();

/// Computes columns [begin, end) of C with the `isa` kernels; 1 <= m <=
/// kMaxRows. Exposed for tests; products go through multiply().
void computeColumns(Isa isa, const Problem &problem, int64_t begin,
                    int64_t end);

/// The kernels of each instruction set, in their own translation units.
void computeColumnsAvx2(const Problem &problem, int64_t begin, int64_t end);
void computeColumnsAvx512(const Problem &problem, int64_t begin, int64_t end);

/// Computes `problem` when it fits (m <= kMaxRows, one row or more than
/// 2^18 multiply-adds, this CPU has AVX2 or AVX-512 and DTENSOR_SKINNY_GEMM
/// is not 0), spreading the columns over
/// `pool` when W is large enough to be worth it. False when it does not.
bool multiply(const Problem &problem, WorkerPool *pool);

} // namespace dtensor::rt::skinny

#endif // DTENSOR_RUNTIME_BLAS_SKINNYGEMM_H

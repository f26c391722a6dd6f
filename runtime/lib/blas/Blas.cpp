//===- Blas.cpp - Matrix products on OpenBLAS -----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Blas.h"
#include "OpenBlasLoader.h"
#include "SkinnyGemm.h"
#include "WorkerPool.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace dtensor::rt::blas {

namespace {

// The CBLAS enum values (cblas.h), which OpenBLAS takes as ints.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;

/// The fallback: C = A x B + beta * C over element strides, blocked so that
/// a panel of B stays in cache while rows of A stream by.
template <typename T>
void blockedGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                 const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
                 int64_t ldc) {
  int64_t aRow = transA ? 1 : lda, aCol = transA ? lda : 1;
  int64_t bRow = transB ? 1 : ldb, bCol = transB ? ldb : 1;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j];
  constexpr int64_t kBlock = 128, nBlock = 256;
  std::vector<T> panel;
  for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
    int64_t kb = std::min(kBlock, k - k0);
    for (int64_t j0 = 0; j0 < n; j0 += nBlock) {
      int64_t nb = std::min(nBlock, n - j0);
      panel.assign(kb * nb, T(0));
      for (int64_t p = 0; p < kb; ++p)
        for (int64_t j = 0; j < nb; ++j)
          panel[p * nb + j] = b[(k0 + p) * bRow + (j0 + j) * bCol];
      for (int64_t i = 0; i < m; ++i) {
        T *cRow = c + i * ldc + j0;
        for (int64_t p = 0; p < kb; ++p) {
          T scale = a[i * aRow + (k0 + p) * aCol];
          const T *bRowPtr = panel.data() + p * nb;
          for (int64_t j = 0; j < nb; ++j)
            cRow[j] += scale * bRowPtr[j];
        }
      }
    }
  }
}

/// BLAS wants leading dimensions of at least max(1, columns stored).
int leading(int64_t ld, bool trans, int64_t rows, int64_t cols) {
  int64_t stored = trans ? rows : cols;
  return static_cast<int>(std::max<int64_t>({ld, stored, 1}));
}

/// A product with one row or one column of C (a decode step's linear
/// layers) as a matrix-vector product: GEMM kernels first pack the whole
/// matrix into panels, which for a single vector doubles the memory traffic
/// of a memory-bound product. Returns false when it does not apply.
template <typename T, typename GemvFn>
bool gemvForm(GemvFn gemvFn, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb,
              T beta, T *c, int64_t ldc) {
  if (!gemvFn || (m != 1 && n != 1))
    return false;
  // BLAS may scale y by beta = 0, and 0 x NaN is NaN: clear C instead.
  if (beta == T(0))
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = T(0);
  if (m == 1) {
    // c[n] = B^T a, with B stored k x n (or n x k when transB).
    int64_t incA = transA ? lda : 1;
    int64_t rows = transB ? n : k, cols = transB ? k : n;
    gemvFn(kCblasRowMajor, transB ? kCblasNoTrans : kCblasTrans,
           static_cast<int>(rows), static_cast<int>(cols), T(1), b,
           static_cast<int>(std::max<int64_t>({ldb, cols, 1})), a,
           static_cast<int>(incA), T(1), c, 1);
    return true;
  }
  // c[m] = A b, with A stored m x k (or k x m when transA); C's column has
  // stride ldc.
  int64_t incB = transB ? 1 : ldb;
  int64_t rows = transA ? k : m, cols = transA ? m : k;
  gemvFn(kCblasRowMajor, transA ? kCblasTrans : kCblasNoTrans,
         static_cast<int>(rows), static_cast<int>(cols), T(1), a,
         static_cast<int>(std::max<int64_t>({lda, cols, 1})), b,
         static_cast<int>(incB), T(1), c, static_cast<int>(ldc));
  return true;
}

template <typename T, typename Fn, typename GemvFn>
void gemm(Fn blasFn, GemvFn gemvFn, bool transA, bool transB, int64_t m,
          int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
          int64_t ldb, T beta, T *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    if (beta == T(0))
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          c[i * ldc + j] = T(0);
    return;
  }
  constexpr int64_t kIntMax = 0x7fffffff;
  bool fits = m <= kIntMax && n <= kIntMax && k <= kIntMax && lda <= kIntMax &&
              ldb <= kIntMax && ldc <= kIntMax;
  if (!blasFn || !fits)
    return blockedGemm(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc);
  if (gemvForm<T>(gemvFn, transA, transB, m, n, k, a, lda, b, ldb, beta, c,
                  ldc))
    return;
  blasFn(kCblasRowMajor, transA ? kCblasTrans : kCblasNoTrans,
         transB ? kCblasTrans : kCblasNoTrans, static_cast<int>(m),
         static_cast<int>(n), static_cast<int>(k), T(1), a,
         leading(lda, transA, m, k), b, leading(ldb, transB, k, n), beta, c,
         leading(ldc, false, m, n));
}

/// The threads of the runtime's own kernels (setThreads); none until a
/// context sets them. Shared so that a product in flight keeps its pool
/// while another context replaces it.
std::shared_ptr<WorkerPool> &workerPoolSlot() {
  static std::shared_ptr<WorkerPool> pool;
  return pool;
}

} // namespace

void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
           float *c, int64_t ldc) {
  // A few rows of A by a weight stored [n, k]: one pass over the weight.
  if (!transA && transB && m <= skinny::kMaxRows) {
    std::shared_ptr<WorkerPool> pool = std::atomic_load(&workerPoolSlot());
    if (skinny::multiply({m, n, k, a, lda, b, ldb, beta, c, ldc}, pool.get()))
      return;
  }
  gemm<float>(openBlasLibrary().sgemm, openBlasLibrary().sgemv, transA, transB, m, n, k, a,
              lda, b, ldb, beta, c, ldc);
}

void dgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           const double *a, int64_t lda, const double *b, int64_t ldb,
           double beta, double *c, int64_t ldc) {
  gemm<double>(openBlasLibrary().dgemm, openBlasLibrary().dgemv, transA, transB, m, n, k, a,
               lda, b, ldb, beta, c, ldc);
}

void setThreads(int threads) {
  threads = std::max(threads, 1);
  if (openBlasLibrary().setThreads)
    openBlasLibrary().setThreads(threads);
  std::shared_ptr<WorkerPool> pool = std::atomic_load(&workerPoolSlot());
  if (!pool || pool->threads() != threads)
    std::atomic_store(&workerPoolSlot(), std::make_shared<WorkerPool>(threads));
}

bool usesOpenBlas() { return openBlasLibrary().sgemm != nullptr; }

std::string coreName() {
  const OpenBlasLibrary &library = openBlasLibrary();
  if (!library.sgemm)
    return "fallback";
  return library.coreName ? library.coreName() : "unknown";
}

} // namespace dtensor::rt::blas

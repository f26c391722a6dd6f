//===- Blas.h - Matrix products on OpenBLAS ---------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// General matrix products for the runtime's matmul. OpenBLAS is loaded at
// first use, as a private copy with the kernel family the runtime picks
// (OpenBlasLoader.h). Without OpenBLAS a blocked C++ product is used
// (correct, slower; said once on stderr).
//
// All matrices are row-major in the CBLAS sense (ld is the stride between
// rows of the stored matrix); transA/transB mean the stored matrix is the
// transpose of the operand. Sizes may be zero. Products of up to
// skinny::kMaxRows rows by a transposed B (a weight stored [n, k]) use the
// runtime's own kernels (SkinnyGemm.h) on CPUs with AVX2 or AVX-512.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_BLAS_BLAS_H
#define DTENSOR_RUNTIME_BLAS_BLAS_H

#include <cstdint>
#include <string>

namespace dtensor::rt::blas {

/// C = A x B + beta * C with A m x k, B k x n, C m x n; beta is 0 or 1 (0
/// ignores C's old contents, NaNs included).
void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
           float *c, int64_t ldc);
void dgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
           const double *a, int64_t lda, const double *b, int64_t ldb,
           double beta, double *c, int64_t ldc);

/// Sets the threads OpenBLAS and the runtime's own kernels use (OpenBLAS's
/// setting has no effect on the fallback).
void setThreads(int threads);

/// True when OpenBLAS was loaded (loads it on first call).
bool usesOpenBlas();

/// The core OpenBLAS runs ("SkylakeX"), or "fallback".
std::string coreName();

/// One line on the kernels in use (OpenBlasLoader.h's describeKernels).
std::string describeKernels();

} // namespace dtensor::rt::blas

#endif // DTENSOR_RUNTIME_BLAS_BLAS_H

//===- MatrixLayout.cpp - Strided matrices as cuBLASLt reads them ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "MatrixLayout.h"

#include <algorithm>

namespace dtensor::rt::cuda {

std::optional<ColumnMajor> columnMajorOf(int64_t rows, int64_t cols,
                                         int64_t rowStride, int64_t colStride) {
  // Column-major: consecutive rows adjacent, columns `colStride` apart.
  if ((rowStride == 1 || rows <= 1) &&
      (cols <= 1 || colStride >= std::max<int64_t>(rows, 1)))
    return ColumnMajor{false, rows, cols,
                       cols <= 1 ? std::max<int64_t>(rows, 1) : colStride};
  // Row-major: the transpose of a column-major cols x rows matrix.
  if ((colStride == 1 || cols <= 1) &&
      (rows <= 1 || rowStride >= std::max<int64_t>(cols, 1)))
    return ColumnMajor{true, cols, rows,
                       rows <= 1 ? std::max<int64_t>(cols, 1) : rowStride};
  return std::nullopt;
}

ColumnMajor packedRowMajor(int64_t rows, int64_t cols) {
  return ColumnMajor{true, cols, rows, std::max<int64_t>(cols, 1)};
}

ColumnMajorGemm columnMajorGemm(int64_t m, int64_t n, int64_t k,
                                const ColumnMajor &a, const ColumnMajor &b,
                                const ColumnMajor &c) {
  ColumnMajorGemm gemm;
  if (!c.trans) {
    gemm.m = m;
    gemm.n = n;
    gemm.k = k;
    gemm.a = a;
    gemm.b = b;
    gemm.c = c;
    return gemm;
  }
  // C^T (n x m, stored column-major as it is) = B^T x A^T: each operand's
  // transpose is its stored matrix with the other op.
  gemm.swapped = true;
  gemm.m = n;
  gemm.n = m;
  gemm.k = k;
  gemm.a = b;
  gemm.a.trans = !b.trans;
  gemm.b = a;
  gemm.b.trans = !a.trans;
  gemm.c = c;
  gemm.c.trans = false;
  return gemm;
}

} // namespace dtensor::rt::cuda

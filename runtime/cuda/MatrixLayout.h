//===- MatrixLayout.h - Strided matrices as cuBLASLt reads them -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuBLASLt multiplies column-major matrices, each operand optionally
// transposed, with a leading dimension; the result must not be transposed.
// A strided view is such a matrix when one of its dims has unit stride (a
// size-1 dim's stride does not matter): column-major as it is, or row-major,
// which is the transpose of a column-major matrix. A row-major C is computed
// as C^T = B^T x A^T. Anything else is packed into contiguous scratch first.
// Pure C++ (no CUDA), so that it is tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CUDA_MATRIXLAYOUT_H
#define DTENSOR_RUNTIME_CUDA_MATRIXLAYOUT_H

#include <cstdint>
#include <optional>

namespace dtensor::rt::cuda {

/// A column-major stored matrix of `rows` x `cols` with leading dimension
/// `ld`; the operand is the stored matrix, or its transpose when `trans`.
struct ColumnMajor {
  bool trans = false;
  int64_t rows = 0, cols = 0, ld = 1;
};

/// The stored matrix whose (optionally transposed) value is a matrix of
/// `rows` x `cols` with these element strides, or none when it has no unit
/// stride and must be packed.
std::optional<ColumnMajor> columnMajorOf(int64_t rows, int64_t cols,
                                         int64_t rowStride, int64_t colStride);

/// A row-major contiguous matrix, as packed scratch is.
ColumnMajor packedRowMajor(int64_t rows, int64_t cols);

/// One cuBLASLt product D = op(A) op(B) + beta C, with C = D not transposed:
/// `swapped` when it computes C^T = op(B)^T op(A)^T (A and B exchanged).
struct ColumnMajorGemm {
  bool swapped = false;
  int64_t m = 0, n = 0, k = 0;
  ColumnMajor a, b, c;
};

/// The product computing C (m x n) = A (m x k) x B (k x n) from their
/// stored forms.
ColumnMajorGemm columnMajorGemm(int64_t m, int64_t n, int64_t k,
                                const ColumnMajor &a, const ColumnMajor &b,
                                const ColumnMajor &c);

} // namespace dtensor::rt::cuda

#endif // DTENSOR_RUNTIME_CUDA_MATRIXLAYOUT_H

//===- CpuMatmul.cpp - Matrix products of the CPU backend -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BLAS on strided views. A matrix with a unit stride in one of its dims (a
// size-1 dim's stride does not matter) goes to BLAS as it is, row-major or
// transposed, its leading dimension the other stride; any other matrix is
// packed into contiguous scratch first.
//
//===----------------------------------------------------------------------===//

#include "Blas.h"
#include "CpuBackend.h"

#include <algorithm>
#include <array>
#include <type_traits>

namespace dtensor::rt {

namespace {

/// A matrix as BLAS takes it: `trans` when the stored row-major matrix is
/// its transpose, `ld` the stride between stored rows.
struct BlasMatrix {
  char *data = nullptr;
  bool trans = false;
  int64_t ld = 1;
};

/// Whether `view` (rank 2) can be passed to BLAS without packing.
bool describeDirectly(const StridedView &view, BlasMatrix &matrix) {
  int64_t rows = view.sizes[0], cols = view.sizes[1];
  int64_t rowStride = view.strides[0], colStride = view.strides[1];
  matrix.data = view.data;
  if ((colStride == 1 || cols <= 1) &&
      (rows <= 1 || rowStride >= std::max<int64_t>(cols, 1))) {
    matrix.trans = false;
    matrix.ld = rows <= 1 ? std::max<int64_t>(cols, 1) : rowStride;
    return true;
  }
  if ((rowStride == 1 || rows <= 1) &&
      (cols <= 1 || colStride >= std::max<int64_t>(rows, 1))) {
    matrix.trans = true;
    matrix.ld = cols <= 1 ? std::max<int64_t>(rows, 1) : colStride;
    return true;
  }
  return false;
}

/// A read-only operand, packed row-major into `scratch` when BLAS cannot
/// take it as is.
void prepareOperand(const StridedView &view, BlasMatrix &matrix,
                    std::vector<char> &scratch) {
  if (describeDirectly(view, matrix))
    return;
  scratch.resize(static_cast<size_t>(view.numElements()) * view.elemSize);
  packView(view, scratch.data());
  matrix.data = scratch.data();
  matrix.trans = false;
  matrix.ld = std::max<int64_t>(view.sizes[1], 1);
}

/// Matrix `batch` of a rank-3 view, or the rank-2 view itself.
StridedView matrixAt(const StridedView &view, int64_t batch) {
  if (view.rank() == 2)
    return view;
  StridedView matrix;
  matrix.elemSize = view.elemSize;
  matrix.data =
      view.data + batch * view.strides[0] * static_cast<int64_t>(view.elemSize);
  matrix.sizes = {view.sizes[1], view.sizes[2]};
  matrix.strides = {view.strides[1], view.strides[2]};
  return matrix;
}

template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const BlasMatrix &a, const BlasMatrix &b, T beta, char *c,
          int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    blas::sgemm(transA, transB, m, n, k, reinterpret_cast<const T *>(a.data),
                a.ld, reinterpret_cast<const T *>(b.data), b.ld, beta,
                reinterpret_cast<T *>(c), ldc);
  else
    blas::dgemm(transA, transB, m, n, k, reinterpret_cast<const T *>(a.data),
                a.ld, reinterpret_cast<const T *>(b.data), b.ld, beta,
                reinterpret_cast<T *>(c), ldc);
}

/// `scratch` holds the packed copies of operands BLAS cannot take as they
/// are (A, B, C), kept by the backend from call to call.
template <typename T>
void multiply(const StridedView &aView, const StridedView &bView,
              const StridedView &cView, T beta,
              std::array<std::vector<char>, 3> &scratch) {
  int64_t m = cView.sizes[0], n = cView.sizes[1], k = aView.sizes[1];
  if (m == 0 || n == 0)
    return;
  BlasMatrix a, b, c;
  prepareOperand(aView, a, scratch[0]);
  prepareOperand(bView, b, scratch[1]);
  if (!describeDirectly(cView, c)) {
    std::vector<char> &packed = scratch[2];
    packed.resize(static_cast<size_t>(cView.numElements()) * sizeof(T));
    if (beta != T(0))
      packView(cView, packed.data());
    gemm<T>(a.trans, b.trans, m, n, k, a, b, beta, packed.data(), n);
    unpackView(packed.data(), cView);
    return;
  }
  if (!c.trans)
    return gemm<T>(a.trans, b.trans, m, n, k, a, b, beta, c.data, c.ld);
  // C is stored transposed: compute C^T = B^T x A^T into it.
  gemm<T>(!b.trans, !a.trans, n, m, k, b, a, beta, c.data, c.ld);
}

} // namespace

Status CpuBackend::matmul(const StridedView &a, const StridedView &b,
                          const StridedView &c, DType dtype, DType resultDtype,
                          int32_t beta) {
  if (dtype != DType::F32 && dtype != DType::F64)
    return runtimeError(std::string("matmul: dtype ") + dtypeName(dtype) +
                        " is not f32 or f64");
  if (resultDtype != dtype)
    return runtimeError(std::string("matmul: ") + dtypeName(dtype) +
                        " operands with a " + dtypeName(resultDtype) +
                        " result: the CPU backend computes products of one "
                        "dtype");
  int64_t batch = a.rank() == 3 ? a.sizes[0] : 1;
  for (int64_t i = 0; i < batch; ++i) {
    if (dtype == DType::F32)
      multiply<float>(matrixAt(a, i), matrixAt(b, i), matrixAt(c, i),
                      static_cast<float>(beta), matmulScratch);
    else
      multiply<double>(matrixAt(a, i), matrixAt(b, i), matrixAt(c, i),
                       static_cast<double>(beta), matmulScratch);
  }
  return Status::success();
}

} // namespace dtensor::rt

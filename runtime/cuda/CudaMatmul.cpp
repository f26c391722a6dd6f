//===- CudaMatmul.cpp - Matrix products of the CUDA backend on cuBLASLt ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One cuBLASLt call per dtensor_rt_matmul, batched with strided batch
// offsets. Operands are passed as they are stored when MatrixLayout maps
// them to column-major matrices, else packed row-major into step buffers
// (and C unpacked after).
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "MatrixLayout.h"
#include "PackedBlocks.h"

namespace dtensor::rt::cuda {

namespace {

#define DTENSOR_CUBLAS_TRY(call)                                               \
  if (cublasStatus_t code_ = (call); code_ != CUBLAS_STATUS_SUCCESS)           \
    return cublasFailure(#call, code_);

/// A matrix operand: its stored form, its memory and its batch stride.
struct Operand {
  ColumnMajor form;
  char *data = nullptr;
  int64_t batchStride = 0;
  /// The step buffer it was packed into, if any.
  char *packed = nullptr;
};

/// The matrix dims of a rank-2 or rank-3 view.
int64_t rowsOf(const StridedView &v) { return v.sizes[v.rank() - 2]; }
int64_t colsOf(const StridedView &v) { return v.sizes[v.rank() - 1]; }

/// Descriptors of one product, destroyed with it.
struct LtObjects {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~LtObjects() {
    if (preference)
      cublasLtMatmulPreferenceDestroy(preference);
    for (cublasLtMatrixLayout_t layout : {a, b, c})
      if (layout)
        cublasLtMatrixLayoutDestroy(layout);
    if (desc)
      cublasLtMatmulDescDestroy(desc);
  }
};

Status layoutOf(const ColumnMajor &form, cudaDataType_t type, int64_t batch,
                int64_t batchStride, cublasLtMatrixLayout_t &layout) {
  DTENSOR_CUBLAS_TRY(
      cublasLtMatrixLayoutCreate(&layout, type, form.rows, form.cols, form.ld));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    DTENSOR_CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
    DTENSOR_CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batchStride,
        sizeof batchStride));
  }
  return Status::success();
}

} // namespace

Status CudaBackend::matmul(const StridedView &a, const StridedView &b,
                           const StridedView &c, DType dtype,
                           DType resultDtype, int32_t beta) {
  cudaDataType_t type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scaleType = CUDA_R_32F;
  switch (dtype) {
  case DType::F32:
    type = CUDA_R_32F;
    compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    break;
  case DType::F64:
    type = CUDA_R_64F;
    compute = CUBLAS_COMPUTE_64F;
    scaleType = CUDA_R_64F;
    break;
  case DType::F16:
    type = CUDA_R_16F;
    break;
  case DType::BF16:
    type = CUDA_R_16BF;
    break;
  default:
    return runtimeError(std::string("matmul: dtype ") + dtypeName(dtype) +
                        " is not f32, f64, f16 or bf16");
  }
  // C's type: the operands', or f32 accumulating f16/bf16 operands.
  cudaDataType_t resultType = type;
  if (resultDtype != dtype) {
    if (resultDtype != DType::F32 ||
        (dtype != DType::F16 && dtype != DType::BF16))
      return runtimeError(std::string("matmul: ") + dtypeName(dtype) +
                          " operands with a " + dtypeName(resultDtype) +
                          " result (only f16 or bf16 into f32)");
    resultType = CUDA_R_32F;
  }
  int64_t batch = a.rank() == 3 ? a.sizes[0] : 1;
  int64_t m = rowsOf(c), n = colsOf(c), k = colsOf(a);
  if (batch == 0 || m == 0 || n == 0)
    return Status::success();

  // Each operand as stored, or packed row-major.
  Operand ops[3];
  const StridedView *views[3] = {&a, &b, &c};
  Status status;
  for (int i = 0; i < 3 && status.ok(); ++i) {
    const StridedView &view = *views[i];
    int64_t r = view.rank();
    std::optional<ColumnMajor> form = columnMajorOf(
        rowsOf(view), colsOf(view), view.strides[r - 2], view.strides[r - 1]);
    if (form) {
      ops[i].form = *form;
      ops[i].data = view.data;
      ops[i].batchStride = r == 3 ? view.strides[0] : 0;
      continue;
    }
    ops[i].form = packedRowMajor(rowsOf(view), colsOf(view));
    ops[i].batchStride = rowsOf(view) * colsOf(view);
    status = scratch(bytesOf(view), ops[i].packed);
    ops[i].data = ops[i].packed;
    // C's old contents matter only with beta = 1.
    if (status.ok() && (i < 2 || beta != 0))
      status = pack({view}, ops[i].packed);
  }

  if (status.ok() && k == 0) {
    // No products: C = beta C, which for beta = 0 is zeros.
    if (beta == 0) {
      if (ops[2].packed)
        status =
            cudaMemsetAsync(ops[2].packed, 0, bytesOf(c), stream) == cudaSuccess
                ? unpack(ops[2].packed, {c})
                : runtimeError("matmul: cudaMemsetAsync failed");
      else if (c.isContiguous())
        status = cudaMemsetAsync(c.data, 0, bytesOf(c), stream) == cudaSuccess
                     ? Status::success()
                     : runtimeError("matmul: cudaMemsetAsync failed");
      else
        status = runtimeError("matmul: k = 0 on a strided C");
    }
  } else if (status.ok()) {
    ColumnMajorGemm gemm =
        columnMajorGemm(m, n, k, ops[0].form, ops[1].form, ops[2].form);
    const Operand &first = gemm.swapped ? ops[1] : ops[0];
    const Operand &second = gemm.swapped ? ops[0] : ops[1];
    LtObjects lt_;
    auto run = [&]() -> Status {
      DTENSOR_CUBLAS_TRY(
          cublasLtMatmulDescCreate(&lt_.desc, compute, scaleType));
      cublasOperation_t transA = gemm.a.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
      cublasOperation_t transB = gemm.b.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
      DTENSOR_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(
          lt_.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof transA));
      DTENSOR_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(
          lt_.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof transB));
      if (Status s = layoutOf(gemm.a, type, batch, first.batchStride, lt_.a))
        return s;
      if (Status s = layoutOf(gemm.b, type, batch, second.batchStride, lt_.b))
        return s;
      if (Status s =
              layoutOf(gemm.c, resultType, batch, ops[2].batchStride, lt_.c))
        return s;
      DTENSOR_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&lt_.preference));
      DTENSOR_CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(
          lt_.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
          &workspaceBytes, sizeof workspaceBytes));
      cublasLtMatmulHeuristicResult_t heuristic{};
      int found = 0;
      DTENSOR_CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(
          this->lt, lt_.desc, lt_.a, lt_.b, lt_.c, lt_.c, lt_.preference, 1,
          &heuristic, &found));
      if (found == 0)
        return runtimeError("matmul: cuBLASLt has no algorithm for " +
                            a.shapeString() + " x " + b.shapeString());
      float alpha32 = 1, beta32 = static_cast<float>(beta);
      double alpha64 = 1, beta64 = beta;
      const void *alpha = scaleType == CUDA_R_64F
                              ? static_cast<const void *>(&alpha64)
                              : static_cast<const void *>(&alpha32);
      const void *betaValue = scaleType == CUDA_R_64F
                                  ? static_cast<const void *>(&beta64)
                                  : static_cast<const void *>(&beta32);
      DTENSOR_CUBLAS_TRY(cublasLtMatmul(
          this->lt, lt_.desc, alpha, first.data, lt_.a, second.data, lt_.b,
          betaValue, ops[2].data, lt_.c, ops[2].data, lt_.c, &heuristic.algo,
          workspace, workspaceBytes, stream));
      return Status::success();
    };
    status = run();
    if (status.ok() && ops[2].packed)
      status = unpack(ops[2].packed, {c});
  }
  for (Operand &op : ops)
    if (op.packed)
      release(op.packed);
  return status;
}

} // namespace dtensor::rt::cuda

//===- Matmul.cpp - The matrix product compiled programs call -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor_rt_matmul: checks the queued views form a (batched) product and
// hands them to the program's backend, which says which dtypes it computes.
//
//===----------------------------------------------------------------------===//

#include "AbiCall.h"
#include "Backend.h"
#include "Export.h"

#include "dtensor/rt_abi.h"

namespace dtensor::rt {

namespace {

Status matmul(AbiCall &call, DType resultDtype, int32_t beta) {
  if (call.dtype != DType::F32 && call.dtype != DType::F64 &&
      call.dtype != DType::F16 && call.dtype != DType::BF16)
    return runtimeError(std::string("matmul: dtype ") + dtypeName(call.dtype) +
                        " is not a floating-point type");
  if (beta != 0 && beta != 1)
    return runtimeError("matmul: beta " + std::to_string(beta) +
                        " is not 0 or 1");
  std::vector<StridedView> &views = call.program.callViews;
  if (Status s = call.takeViews("matmul", 3, views))
    return s;
  if (resultDtype != call.dtype)
    views[2] = call.viewAs(2, dtypeSize(resultDtype));
  const StridedView &a = views[0], &b = views[1], &c = views[2];
  int64_t rank = a.rank();
  bool shapesMatch =
      (rank == 2 || rank == 3) && b.rank() == rank && c.rank() == rank;
  int64_t batch = rank == 3 ? a.sizes[0] : 1;
  if (shapesMatch && rank == 3)
    shapesMatch = b.sizes[0] == batch && c.sizes[0] == batch;
  int64_t first = rank - 2;
  if (shapesMatch)
    shapesMatch = a.sizes[first] == c.sizes[first] &&
                  a.sizes[first + 1] == b.sizes[first] &&
                  b.sizes[first + 1] == c.sizes[first + 1];
  if (!shapesMatch)
    return runtimeError("matmul: shapes " + a.shapeString() + " x " +
                        b.shapeString() + " -> " + c.shapeString() +
                        " do not form a (batched) matrix product");
  return call.program.backend->matmul(a, b, c, call.dtype, resultDtype, beta);
}

} // namespace

} // namespace dtensor::rt

extern "C" DTENSOR_EXPORT void dtensor_rt_matmul(int32_t dtype, int32_t beta) {
  dtensor::rt::AbiCall::run("matmul", dtype, [&](dtensor::rt::AbiCall &call) {
    return dtensor::rt::matmul(call, call.dtype, beta);
  });
}

extern "C" DTENSOR_EXPORT void
dtensor_rt_matmul_mixed(int32_t dtype, int32_t result_dtype, int32_t beta) {
  dtensor::rt::AbiCall::run(
      "matmul_mixed", dtype, [&](dtensor::rt::AbiCall &call) {
        std::optional<dtensor::rt::DType> result =
            dtensor::rt::dtypeFromInt(result_dtype);
        if (!result)
          return dtensor::rt::runtimeError("unknown result dtype " +
                                           std::to_string(result_dtype));
        return dtensor::rt::matmul(call, *result, beta);
      });
}

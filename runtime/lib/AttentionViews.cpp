//===- AttentionViews.cpp - Checks of the attention calls' views ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "AttentionViews.h"

#include <cstring>

namespace dtensor::rt {

std::string shapeText(std::initializer_list<int64_t> sizes) {
  std::string text = "[";
  for (int64_t size : sizes)
    text += (text.size() > 1 ? ", " : "") + std::to_string(size);
  return text + "]";
}

std::string shapeError(const char *op, const char *what,
                       const StridedView &view, const std::string &expected) {
  return std::string(op) + ": " + what + " has shape " + view.shapeString() +
         ", expected " + expected;
}

Status readMaskStrides(const char *op, const StridedView &mask,
                       const int64_t (&logical)[4], int64_t (&strides)[4]) {
  for (int dim = 0; dim < 4; ++dim) {
    if (mask.sizes[dim] != logical[dim] && mask.sizes[dim] != 1)
      return runtimeError(shapeError(
          op, "mask", mask,
          "one that broadcasts to " +
              shapeText({logical[0], logical[1], logical[2], logical[3]})));
    strides[dim] = mask.sizes[dim] == 1 ? 0 : mask.strides[dim];
  }
  return Status::success();
}

Status readBatchIndices(const AbiCall &call, const char *op, const char *what,
                        size_t index, int64_t batch,
                        std::vector<int64_t> &into) {
  StridedView view = call.viewAs(index, sizeof(int64_t));
  if (view.sizes[0] != batch)
    return runtimeError(shapeError(op, what, view, shapeText({batch})));
  into.resize(batch);
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(&into[b], view.data + b * view.strides[0] * 8, 8);
  return Status::success();
}

} // namespace dtensor::rt

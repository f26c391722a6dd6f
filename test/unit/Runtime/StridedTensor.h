//===- StridedTensor.h - 4-D test tensors with chosen strides ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tensors the attention kernels' tests hand to the kernels: logical
// [a, b, c, d] sizes, stored with dims 1 and 2 swapped when `transposed`
// (a [B, S, H, E] layout read as [B, H, S, E]) and `pad` unused elements at
// the end of each innermost row, so that no kernel can assume contiguity.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TEST_UNIT_RUNTIME_STRIDEDTENSOR_H
#define DTENSOR_TEST_UNIT_RUNTIME_STRIDEDTENSOR_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace dtensor::test {

template <typename T> struct StridedTensor {
  std::vector<T> data;
  std::array<int64_t, 4> sizes{}, strides{};

  StridedTensor(std::array<int64_t, 4> sizes, bool transposed, int64_t pad)
      : sizes(sizes) {
    const int64_t plain[4] = {0, 1, 2, 3}, swapped[4] = {0, 2, 1, 3};
    const int64_t *order = transposed ? swapped : plain;
    int64_t stride = 1;
    for (int dim = 3; dim >= 0; --dim) {
      strides[order[dim]] = stride;
      stride *= sizes[order[dim]] + (dim == 3 ? pad : 0);
    }
    data.assign(static_cast<size_t>(std::max<int64_t>(stride, 1)), T(0));
  }
  T &at(int64_t a, int64_t b, int64_t c, int64_t d) {
    return data[a * strides[0] + b * strides[1] + c * strides[2] +
                d * strides[3]];
  }
  void copyStrides(int64_t *into) const {
    for (int dim = 0; dim < 4; ++dim)
      into[dim] = strides[dim];
  }
};

} // namespace dtensor::test

#endif // DTENSOR_TEST_UNIT_RUNTIME_STRIDEDTENSOR_H

//===- StridedView.h - Strided buffers of compiled programs -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A StridedView is an element buffer with sizes and strides (in elements):
// what an MLIR memref descriptor describes. Collectives pack views into
// contiguous messages and unpack messages into views; MemRef descriptors
// are read into views and built for the entry call.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_STRIDEDVIEW_H
#define DTENSOR_RUNTIME_STRIDEDVIEW_H

#include "Dims.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::rt {

/// Elements data[sum_k i_k * strides[k]] for 0 <= i_k < sizes[k].
struct StridedView {
  char *data = nullptr;
  size_t elemSize = 1;
  Dims sizes;
  Dims strides;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  /// Product of the sizes (1 for rank 0).
  int64_t numElements() const;
  /// True when the elements are row-major and dense (size-1 dims ignored).
  bool isContiguous() const;
  /// The sub-view of indices [begin, begin + size) along `dim`.
  StridedView slice(int64_t dim, int64_t begin, int64_t size) const;
  /// "[4, 8]"-style rendering of the sizes, for messages.
  std::string shapeString() const;
};

/// Row-major strides of `sizes`.
Dims rowMajorStrides(const Dims &sizes);

/// Reads the ranked memref descriptor of rank `rank` at `descriptor` (layout
/// in dtensor/rt_abi.h) into a view of `elemSize`-byte elements.
StridedView viewOfDescriptor(int64_t rank, const void *descriptor,
                             size_t elemSize);

/// Writes the ranked memref descriptor of a contiguous row-major buffer
/// into `words` (3 + 2 * rank of them), which it resizes; reused from step
/// to step, it keeps its storage.
void writeMemRefDescriptor(void *data, const std::vector<int64_t> &sizes,
                           std::vector<int64_t> &words);

/// Copies the view's elements, row-major, into contiguous `dst`.
void packView(const StridedView &view, void *dst);
/// Copies contiguous row-major `src` into the view's elements.
void unpackView(const void *src, const StridedView &view);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_STRIDEDVIEW_H

//===- StridedView.cpp - Strided buffers of compiled programs -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "StridedView.h"

#include <cassert>
#include <cstring>

namespace dtensor::rt {

int64_t StridedView::numElements() const {
  int64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  return count;
}

bool StridedView::isContiguous() const {
  int64_t expected = 1;
  for (int64_t dim = rank() - 1; dim >= 0; --dim) {
    if (sizes[dim] != 1 && strides[dim] != expected)
      return false;
    expected *= sizes[dim];
  }
  return true;
}

StridedView StridedView::slice(int64_t dim, int64_t begin, int64_t size) const {
  assert(dim >= 0 && dim < rank() && begin >= 0 && begin + size <= sizes[dim]);
  StridedView result = *this;
  if (size > 0)
    result.data += begin * strides[dim] * static_cast<int64_t>(elemSize);
  result.sizes[dim] = size;
  return result;
}

std::string StridedView::shapeString() const {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

Dims rowMajorStrides(const Dims &sizes) {
  Dims strides(sizes.size(), 1);
  for (int64_t dim = static_cast<int64_t>(sizes.size()) - 2; dim >= 0; --dim)
    strides[dim] = strides[dim + 1] * sizes[dim + 1];
  return strides;
}

StridedView viewOfDescriptor(int64_t rank, const void *descriptor,
                             size_t elemSize) {
  // { T *allocated; T *aligned; int64_t offset; sizes[rank]; strides[rank] }
  const char *bytes = static_cast<const char *>(descriptor);
  char *aligned;
  int64_t offset;
  std::memcpy(&aligned, bytes + sizeof(void *), sizeof(void *));
  std::memcpy(&offset, bytes + 2 * sizeof(void *), sizeof(int64_t));
  StridedView view;
  view.elemSize = elemSize;
  view.sizes.resize(rank);
  view.strides.resize(rank);
  const char *arrays = bytes + 2 * sizeof(void *) + sizeof(int64_t);
  if (rank > 0) {
    std::memcpy(view.sizes.data(), arrays, rank * sizeof(int64_t));
    std::memcpy(view.strides.data(), arrays + rank * sizeof(int64_t),
                rank * sizeof(int64_t));
  }
  view.data = aligned + offset * static_cast<int64_t>(elemSize);
  return view;
}

void writeMemRefDescriptor(void *data, const std::vector<int64_t> &sizes,
                           std::vector<int64_t> &words) {
  static_assert(sizeof(void *) == sizeof(int64_t),
                "memref descriptors are laid out for 64-bit pointers");
  size_t rank = sizes.size();
  words.resize(3 + 2 * rank);
  std::memcpy(&words[0], &data, sizeof(void *));
  std::memcpy(&words[1], &data, sizeof(void *));
  words[2] = 0;
  std::copy(sizes.begin(), sizes.end(), words.begin() + 3);
  // Row-major strides.
  int64_t stride = 1;
  for (size_t dim = rank; dim-- > 0;) {
    words[3 + rank + dim] = stride;
    stride *= sizes[dim];
  }
}

namespace {
/// Walks the view's elements row-major, handing each innermost run to
/// `copyRun(viewElement, innerStride, count)`.
template <typename CopyRun>
void forEachRun(const StridedView &view, CopyRun copyRun) {
  if (view.numElements() == 0)
    return;
  int64_t rank = view.rank();
  if (rank == 0) {
    copyRun(view.data, 1, 1);
    return;
  }
  int64_t inner = view.sizes[rank - 1];
  int64_t innerStride = view.strides[rank - 1];
  Dims index(rank - 1, 0);
  int64_t elemSize = static_cast<int64_t>(view.elemSize);
  while (true) {
    int64_t offset = 0;
    for (int64_t dim = 0; dim < rank - 1; ++dim)
      offset += index[dim] * view.strides[dim];
    copyRun(view.data + offset * elemSize, innerStride, inner);
    int64_t dim = rank - 2;
    for (; dim >= 0; --dim) {
      if (++index[dim] < view.sizes[dim])
        break;
      index[dim] = 0;
    }
    if (dim < 0)
      return;
  }
}
} // namespace

void packView(const StridedView &view, void *dst) {
  if (view.isContiguous()) {
    if (view.numElements() > 0)
      std::memcpy(dst, view.data, view.numElements() * view.elemSize);
    return;
  }
  char *out = static_cast<char *>(dst);
  size_t elemSize = view.elemSize;
  forEachRun(view, [&](const char *run, int64_t stride, int64_t count) {
    if (stride == 1 || count == 1) {
      std::memcpy(out, run, count * elemSize);
      out += count * elemSize;
      return;
    }
    for (int64_t i = 0; i < count; ++i, out += elemSize)
      std::memcpy(out, run + i * stride * static_cast<int64_t>(elemSize),
                  elemSize);
  });
}

void unpackView(const void *src, const StridedView &view) {
  if (view.isContiguous()) {
    if (view.numElements() > 0)
      std::memcpy(view.data, src, view.numElements() * view.elemSize);
    return;
  }
  const char *in = static_cast<const char *>(src);
  size_t elemSize = view.elemSize;
  forEachRun(view, [&](char *run, int64_t stride, int64_t count) {
    if (stride == 1 || count == 1) {
      std::memcpy(run, in, count * elemSize);
      in += count * elemSize;
      return;
    }
    for (int64_t i = 0; i < count; ++i, in += elemSize)
      std::memcpy(run + i * stride * static_cast<int64_t>(elemSize), in,
                  elemSize);
  });
}

} // namespace dtensor::rt

//===- Box.h - Copying rectangular blocks of row-major tensors --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A box is the block [offset, offset + shape) of a row-major tensor: the
// local shard of a global tensor. These copies move a box between the global
// tensor and a contiguous row-major buffer of the box's own shape, memcpy'ing
// the longest contiguous runs (the innermost dims that the box spans fully
// are merged into one run).
//
// Preconditions (checked with assert): all vectors have the rank of
// globalShape and 0 <= offset[d], offset[d] + shape[d] <= globalShape[d].
// A box with a zero extent copies nothing; a rank-0 box copies one element.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FORMATS_BOX_H
#define DTENSOR_FORMATS_BOX_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace dtensor::rt {

/// Copies the box [offset, offset + shape) of `global` into `local`.
void copyBoxOut(const void *global, const std::vector<int64_t> &globalShape,
                const std::vector<int64_t> &offset,
                const std::vector<int64_t> &shape, size_t elemSize,
                void *local);

/// Copies `local` into the box [offset, offset + shape) of `global`.
void copyBoxIn(const void *local, const std::vector<int64_t> &globalShape,
               const std::vector<int64_t> &offset,
               const std::vector<int64_t> &shape, size_t elemSize,
               void *global);

/// Number of elements of `shape` (1 for rank 0), or -1 when a dim is negative
/// or the product overflows int64_t.
int64_t numElements(const std::vector<int64_t> &shape);

/// Calls `run(globalElem, localElem, elems)` for every maximal contiguous run
/// of the box in row-major order: the `elems` elements from global linear
/// index `globalElem` are the box's elements from local linear index
/// `localElem`. Stops early, returning false, when `run` returns false; true
/// otherwise. Same preconditions as copyBoxOut; nothing is called for an
/// empty box.
bool forEachBoxRun(
    const std::vector<int64_t> &globalShape, const std::vector<int64_t> &offset,
    const std::vector<int64_t> &shape,
    const std::function<bool(int64_t globalElem, int64_t localElem,
                             int64_t elems)> &run);

} // namespace dtensor::rt

#endif // DTENSOR_FORMATS_BOX_H

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

#include "dtensor/Layout/LayoutMath.h"

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

/// One box of a block held in pieces: a rank holding a dim as two pieces of
/// the global dim (a head-tail shard, layout::Placement::headTail) holds its
/// block as one box per combination of pieces, one after the other in its
/// local buffer.
struct BoxPiece {
  /// Where the box lies in the global tensor.
  std::vector<int64_t> globalOffset;
  /// Where it lies in the local block.
  std::vector<int64_t> localOffset;
  /// Its extent.
  std::vector<int64_t> shape;
};

/// The boxes of a block given per dim as the global ranges it holds, in
/// local order (layout::Shard::pieces); boxes with a zero extent are left
/// out unless every box has one (then the single, empty, first box).
std::vector<BoxPiece>
boxPieces(const std::vector<std::vector<layout::Range>> &pieces);

/// copyBoxOut for a block held in pieces: the global tensor's elements of
/// every box of `pieces` into `local` (row-major, of the block's shape).
void copyPiecesOut(const void *global, const std::vector<int64_t> &globalShape,
                   const std::vector<std::vector<layout::Range>> &pieces,
                   size_t elemSize, void *local);

/// copyBoxIn for a block held in pieces: `local` (row-major, of the block's
/// shape) into the boxes of `pieces` of `global`.
void copyPiecesIn(const void *local, const std::vector<int64_t> &globalShape,
                  const std::vector<std::vector<layout::Range>> &pieces,
                  size_t elemSize, void *global);

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

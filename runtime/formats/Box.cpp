//===- Box.cpp - Copying rectangular blocks of row-major tensors ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Formats/Box.h"

#include <cassert>
#include <cstring>
#include <limits>

namespace dtensor::rt {

namespace {
/// Visits the maximal contiguous runs of a box (see forEachBoxRun); a
/// template so that the copies inline their memcpy.
template <typename RunFn>
bool visitRuns(const std::vector<int64_t> &globalShape,
               const std::vector<int64_t> &offset,
               const std::vector<int64_t> &shape, RunFn &&run) {
  const size_t rank = globalShape.size();
  assert(offset.size() == rank && shape.size() == rank && "rank mismatch");
  for (size_t d = 0; d < rank; ++d) {
    assert(offset[d] >= 0 && shape[d] >= 0 &&
           offset[d] + shape[d] <= globalShape[d] && "box out of bounds");
    if (shape[d] == 0)
      return true;
  }
  if (rank == 0)
    return run(int64_t(0), int64_t(0), int64_t(1));

  // The innermost dims the box spans fully merge into the run: the run is
  // dim `runDim` (partly spanned) times everything inside it.
  size_t runDim = rank - 1;
  int64_t inner = 1; // Global elements per index step of runDim.
  while (runDim > 0 && offset[runDim] == 0 &&
         shape[runDim] == globalShape[runDim]) {
    inner *= globalShape[runDim];
    --runDim;
  }
  const int64_t runElems = shape[runDim] * inner;

  // Global strides of the outer dims [0, runDim).
  std::vector<int64_t> strides(runDim + 1);
  strides[runDim] = inner;
  for (size_t d = runDim; d-- > 0;)
    strides[d] = strides[d + 1] * globalShape[d + 1];

  // Odometer over the outer dims.
  std::vector<int64_t> index(runDim, 0);
  int64_t globalStart = offset[runDim] * strides[runDim];
  for (size_t d = 0; d < runDim; ++d)
    globalStart += offset[d] * strides[d];
  int64_t localStart = 0;
  while (true) {
    if (!run(globalStart, localStart, runElems))
      return false;
    localStart += runElems;
    size_t d = runDim;
    while (d > 0) {
      --d;
      if (++index[d] < shape[d]) {
        globalStart += strides[d];
        break;
      }
      globalStart -= (shape[d] - 1) * strides[d];
      index[d] = 0;
      if (d == 0)
        return true;
    }
    if (runDim == 0)
      return true;
  }
}
} // namespace

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return -1;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return -1;
    count *= dim;
  }
  return count;
}

bool forEachBoxRun(
    const std::vector<int64_t> &globalShape, const std::vector<int64_t> &offset,
    const std::vector<int64_t> &shape,
    const std::function<bool(int64_t globalElem, int64_t localElem,
                             int64_t elems)> &run) {
  return visitRuns(globalShape, offset, shape, run);
}

void copyBoxOut(const void *global, const std::vector<int64_t> &globalShape,
                const std::vector<int64_t> &offset,
                const std::vector<int64_t> &shape, size_t elemSize,
                void *local) {
  const char *src = static_cast<const char *>(global);
  char *dst = static_cast<char *>(local);
  visitRuns(globalShape, offset, shape,
            [&](int64_t globalElem, int64_t localElem, int64_t elems) {
              std::memcpy(dst + localElem * elemSize,
                          src + globalElem * elemSize, elems * elemSize);
              return true;
            });
}

void copyBoxIn(const void *local, const std::vector<int64_t> &globalShape,
               const std::vector<int64_t> &offset,
               const std::vector<int64_t> &shape, size_t elemSize,
               void *global) {
  const char *src = static_cast<const char *>(local);
  char *dst = static_cast<char *>(global);
  visitRuns(globalShape, offset, shape,
            [&](int64_t globalElem, int64_t localElem, int64_t elems) {
              std::memcpy(dst + globalElem * elemSize,
                          src + localElem * elemSize, elems * elemSize);
              return true;
            });
}

std::vector<BoxPiece>
boxPieces(const std::vector<std::vector<layout::Range>> &pieces) {
  size_t rank = pieces.size();
  // Per dim, each piece's local start.
  std::vector<std::vector<int64_t>> starts(rank);
  std::vector<int64_t> localShape(rank, 0);
  for (size_t d = 0; d < rank; ++d)
    for (const layout::Range &range : pieces[d]) {
      starts[d].push_back(localShape[d]);
      localShape[d] += range.size();
    }
  std::vector<BoxPiece> boxes;
  std::vector<size_t> index(rank, 0);
  while (true) {
    BoxPiece box;
    bool empty = false;
    for (size_t d = 0; d < rank; ++d) {
      const layout::Range &range = pieces[d][index[d]];
      box.globalOffset.push_back(range.begin);
      box.localOffset.push_back(starts[d][index[d]]);
      box.shape.push_back(range.size());
      empty = empty || range.size() == 0;
    }
    if (!empty || boxes.empty())
      boxes.push_back(std::move(box));
    size_t d = rank;
    while (d > 0 && ++index[d - 1] == pieces[d - 1].size())
      index[--d] = 0;
    if (d == 0)
      break;
  }
  // An empty first box stays only when no box has elements.
  if (boxes.size() > 1 && numElements(boxes.front().shape) == 0)
    boxes.erase(boxes.begin());
  return boxes;
}

/// The local shape of a block given as pieces.
static std::vector<int64_t>
piecesShape(const std::vector<std::vector<layout::Range>> &pieces) {
  std::vector<int64_t> shape;
  for (const std::vector<layout::Range> &dim : pieces) {
    int64_t size = 0;
    for (const layout::Range &range : dim)
      size += range.size();
    shape.push_back(size);
  }
  return shape;
}

void copyPiecesOut(const void *global, const std::vector<int64_t> &globalShape,
                   const std::vector<std::vector<layout::Range>> &pieces,
                   size_t elemSize, void *local) {
  std::vector<int64_t> localShape = piecesShape(pieces);
  std::vector<char> box;
  // Through a buffer of the box: the box's runs differ between the global
  // tensor and the local block.
  for (const BoxPiece &piece : boxPieces(pieces)) {
    box.resize(static_cast<size_t>(numElements(piece.shape)) * elemSize);
    copyBoxOut(global, globalShape, piece.globalOffset, piece.shape, elemSize,
               box.data());
    copyBoxIn(box.data(), localShape, piece.localOffset, piece.shape, elemSize,
              local);
  }
}

void copyPiecesIn(const void *local, const std::vector<int64_t> &globalShape,
                  const std::vector<std::vector<layout::Range>> &pieces,
                  size_t elemSize, void *global) {
  std::vector<int64_t> localShape = piecesShape(pieces);
  std::vector<char> box;
  for (const BoxPiece &piece : boxPieces(pieces)) {
    box.resize(static_cast<size_t>(numElements(piece.shape)) * elemSize);
    copyBoxOut(local, localShape, piece.localOffset, piece.shape, elemSize,
               box.data());
    copyBoxIn(box.data(), globalShape, piece.globalOffset, piece.shape,
              elemSize, global);
  }
}

} // namespace dtensor::rt

//===- ChunkOracles.h - reference torch.chunk arithmetic --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Oracles written independently of the layout library (search instead of
// ceil division, prefix sums, an odometer), shared by the layout unit tests
// so that a bug in the library cannot also hide in the expected values.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TEST_UNIT_LAYOUT_CHUNKORACLES_H
#define DTENSOR_TEST_UNIT_LAYOUT_CHUNKORACLES_H

#include "dtensor/Layout/LayoutMath.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace dtensor::layout::oracle {

/// Piece sizes of torch.chunk(N, parts), padded with empty pieces to `parts`:
/// find the chunk size by search, then hand out chunks until exhausted.
inline std::vector<int64_t> torchChunkSizes(int64_t n, int64_t parts) {
  int64_t chunk = 0;
  while (chunk * parts < n)
    ++chunk;
  std::vector<int64_t> sizes;
  int64_t remaining = n;
  for (int64_t i = 0; i < parts; ++i) {
    int64_t take = std::min(chunk, remaining);
    sizes.push_back(take);
    remaining -= take;
  }
  return sizes;
}

/// Range of piece `index` built from torchChunkSizes (prefix sums).
inline Range torchChunkRange(int64_t n, int64_t parts, int64_t index) {
  std::vector<int64_t> sizes = torchChunkSizes(n, parts);
  int64_t begin =
      std::accumulate(sizes.begin(), sizes.begin() + index, int64_t{0});
  return {begin, begin + sizes[index]};
}

/// Piece of [0,n) held at position `index` of nested splits of `sizes`
/// pieces each, outermost first.
inline Range nestedPiece(int64_t n, const std::vector<int64_t> &sizes,
                         const std::vector<int64_t> &index) {
  Range r{0, n};
  for (size_t i = 0; i < sizes.size(); ++i) {
    Range sub = torchChunkRange(r.size(), sizes[i], index[i]);
    r = {r.begin + sub.begin, r.begin + sub.end};
  }
  return r;
}

/// All coords of `shape` in row-major order via an odometer (last dim
/// fastest); independent of Mesh::coordOfIndex.
inline std::vector<std::vector<int64_t>>
allCoords(const std::vector<int64_t> &shape) {
  std::vector<std::vector<int64_t>> coords;
  std::vector<int64_t> c(shape.size(), 0);
  while (true) {
    coords.push_back(c);
    size_t i = shape.size();
    while (i > 0 && ++c[i - 1] == shape[i - 1])
      c[--i] = 0;
    if (i == 0)
      return coords;
  }
}

} // namespace dtensor::layout::oracle

#endif // DTENSOR_TEST_UNIT_LAYOUT_CHUNKORACLES_H

//===- PackedBlocks.cpp - Per-member blocks of a packed message -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "PackedBlocks.h"

namespace dtensor::rt::cuda {

size_t bytesOf(const StridedView &view) {
  return static_cast<size_t>(view.numElements()) * view.elemSize;
}

PackedBlocks packedBlocks(const MemberPieces &pieces) {
  PackedBlocks blocks;
  bool single = true;
  for (const std::vector<StridedView> &member : pieces) {
    size_t bytes = 0;
    for (const StridedView &view : member)
      bytes += bytesOf(view);
    single = single && member.size() == 1;
    blocks.offsets.push_back(blocks.total);
    blocks.bytes.push_back(bytes);
    blocks.total += bytes;
    blocks.uniform = blocks.uniform && bytes == blocks.bytes.front();
  }
  if (!single || pieces.empty())
    return blocks;
  // One tensor: its pieces are the message when each is contiguous and
  // follows the previous one (a split along the outermost non-unit dim).
  blocks.base = pieces.front().front().data;
  blocks.inPlace = true;
  for (size_t j = 0; j < pieces.size() && blocks.inPlace; ++j) {
    const StridedView &view = pieces[j].front();
    blocks.inPlace =
        (view.isContiguous() || blocks.bytes[j] == 0) &&
        (blocks.bytes[j] == 0 || view.data == blocks.base + blocks.offsets[j]);
  }
  if (!blocks.inPlace)
    blocks.base = nullptr;
  return blocks;
}

PackedBlocks packedBlocks(const std::vector<StridedView> &views) {
  MemberPieces pieces;
  for (const StridedView &view : views)
    pieces.push_back({view});
  return packedBlocks(pieces);
}

} // namespace dtensor::rt::cuda

//===- PackedBlocks.h - Per-member blocks of a packed message ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NCCL moves contiguous buffers. A collective's pieces (member j's piece of
// each tensor, MemberPieces) travel as one block per member, the pieces in
// tensor order: these are the blocks' sizes and offsets, whether they are
// all equal (one ncclAllGather / ncclReduceScatter serves; otherwise one
// ncclBroadcast / ncclReduce per member in a group), and whether the views
// already are that message (no packing). Pure C++, tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_CUDA_PACKEDBLOCKS_H
#define DTENSOR_RUNTIME_CUDA_PACKEDBLOCKS_H

#include "Backend.h"

namespace dtensor::rt::cuda {

struct PackedBlocks {
  /// Bytes of member j's block, and where it starts in the message.
  std::vector<size_t> bytes, offsets;
  size_t total = 0;
  /// Every block has the same size.
  bool uniform = true;
  /// The views are the message: one contiguous view per member, each
  /// starting where the previous one ends. `base` is its start.
  bool inPlace = false;
  char *base = nullptr;
};

/// The blocks of one member per entry of `pieces`.
PackedBlocks packedBlocks(const MemberPieces &pieces);
/// The blocks of one view per member.
PackedBlocks packedBlocks(const std::vector<StridedView> &views);

/// Bytes of a view's elements.
size_t bytesOf(const StridedView &view);

} // namespace dtensor::rt::cuda

#endif // DTENSOR_RUNTIME_CUDA_PACKEDBLOCKS_H

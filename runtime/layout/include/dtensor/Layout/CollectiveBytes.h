//===- CollectiveBytes.h - bytes a rank sends in a collective ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The byte model of docs/comm-report.md, shared by the compile-time report
// (static shapes, some unknown) and the runtime's trace (the buffers of the
// call): each collective as a ring of messages of the largest torch.chunk
// piece, which is what implementations pad uneven pieces to.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_LAYOUT_COLLECTIVEBYTES_H
#define DTENSOR_LAYOUT_COLLECTIVEBYTES_H

#include "dtensor/Layout/LayoutMath.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace dtensor::layout {

/// The six collectives of the dialect and the runtime.
enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  Shift
};

/// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
/// "shift": the op names of the dialect and of the runtime's ABI.
const char *collectiveKindName(CollectiveKind kind);

/// The kind named `name` (as collectiveKindName), or nullopt.
std::optional<CollectiveKind> collectiveKindNamed(std::string_view name);

/// Bytes one rank sends to turn one `input` into its `result` (shapes of
/// one operand/result pair; a size may be kDynamic) over a group of
/// `groupSize` ranks, for elements of `elementBytes`:
///  - all_reduce: a reduce-scatter then an all-gather of the flattened
///    input cut into groupSize pieces, 2 (n - 1) messages;
///  - all_gather, reduce_scatter, all_to_all: n - 1 messages of the input
///    with `dim` (gather, scatter, split dim) and, for all_to_all,
///    `concatDim` cut to their largest piece;
///  - broadcast: the whole input once (a pipelined chain);
///  - shift: the input once, to the next rank; its `dim` is a piece of a
///    dim of `wholeSize` split over the group, counted at its largest size
///    (ceil(wholeSize / n)) when it is kDynamic.
/// A piece's size is the smaller side's size along the dim when it is
/// static, else ceil(larger side / n). 0 for a group of one; nullopt when a
/// size the model needs is kDynamic, or the shapes do not fit the kind.
std::optional<int64_t> ringBytesSent(CollectiveKind kind,
                                     const std::vector<int64_t> &input,
                                     const std::vector<int64_t> &result,
                                     int64_t dim, int64_t concatDim,
                                     int64_t groupSize, int64_t elementBytes,
                                     int64_t wholeSize = kDynamic);

} // namespace dtensor::layout

#endif // DTENSOR_LAYOUT_COLLECTIVEBYTES_H

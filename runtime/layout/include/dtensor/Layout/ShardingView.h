//===- ShardingView.h - which device holds which block ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DTensor's visualize_sharding for any tensor rank: the global tensor cut
// into the blocks that the devices' shards delimit, each block listing the
// devices that hold it, as a text table or an SVG picture. Tensors of rank
// 3 and more are shown as the 2-D slices (over their last two dims) whose
// holders differ.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_LAYOUT_SHARDINGVIEW_H
#define DTENSOR_LAYOUT_SHARDINGVIEW_H

#include "dtensor/Layout/LayoutMath.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::layout {

/// One block of the global tensor: an index range per tensor dim, and who
/// holds it. Each entry of `copies` is one copy of the block's value; a
/// copy held by several devices is a Partial value split over them (their
/// contributions reduce to it).
struct ShardingBlock {
  std::vector<Range> ranges;
  std::vector<std::vector<int64_t>> copies;
};

/// The blocks of a `globalShape` tensor laid out as `placements` on `mesh`,
/// row-major over the grid that every device's shard boundaries cut. Blocks
/// no device holds do not occur (every block of a valid layout is held).
std::vector<ShardingBlock>
shardingBlocks(const std::vector<int64_t> &globalShape,
               const std::vector<Placement> &placements, const Mesh &mesh);

/// The table of the blocks as text: one table per 2-D slice (rank >= 3: a
/// heading names the slice's ranges over the leading dims), "Row a-b" and
/// "Col a-b" index ranges (inclusive), and per block its copies, `,`
/// between copies and `+` between the devices of a Partial copy. A legend
/// ends it. Ends with a newline.
std::string formatShardingTable(const std::vector<int64_t> &globalShape,
                                const std::vector<Placement> &placements,
                                const Mesh &mesh);

/// The same as a standalone SVG document titled `title`: per slice, blocks
/// drawn in proportion to their sizes (at least a few pixels each),
/// coloured by their first device and labelled like the table.
std::string renderShardingSvg(const std::vector<int64_t> &globalShape,
                              const std::vector<Placement> &placements,
                              const Mesh &mesh, const std::string &title);

} // namespace dtensor::layout

#endif // DTENSOR_LAYOUT_SHARDINGVIEW_H

//===- ShardingViewTest.cpp - Tests for the sharding view -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The blocks are checked against a brute-force oracle (which device holds
// each element, grouped by holder set); the text against whole tables.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Layout/ShardingView.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using namespace dtensor::layout;

Placement S(int64_t dim) { return Placement::shard(dim); }
Placement R() { return Placement::replicate(); }
Placement P(ReduceKind kind = ReduceKind::Sum) {
  return Placement::partial(kind);
}

/// Per element of a 2-D tensor, the devices holding it (brute force over
/// every device's shard).
std::map<std::pair<int64_t, int64_t>, std::set<int64_t>>
holdersByElement(const std::vector<int64_t> &shape,
                 const std::vector<Placement> &placements, const Mesh &mesh) {
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> holders;
  for (int64_t device = 0; device < mesh.size(); ++device) {
    Shard shard =
        localShard(shape, placements, mesh, *mesh.coordOfDevice(device));
    for (int64_t r = 0; r < shard.shape[0]; ++r)
      for (int64_t c = 0; c < shard.shape[1]; ++c)
        holders[{globalIndexOf(shard.pieces[0], r),
                 globalIndexOf(shard.pieces[1], c)}]
            .insert(device);
  }
  return holders;
}

TEST(ShardingView, BlocksCoverEveryElementWithItsHolders) {
  struct Case {
    std::vector<int64_t> shape;
    std::vector<Placement> placements;
    Mesh mesh;
  };
  std::vector<Case> cases = {
      {{8, 6}, {S(0)}, Mesh({2})},
      {{7, 5}, {S(0), S(1)}, Mesh({3, 2})},
      {{5, 6}, {S(0), S(0)}, Mesh({2, 2})},
      {{4, 6}, {R(), S(1)}, Mesh({2, 2})},
      {{3, 2}, {S(1)}, Mesh({4})},
      {{6, 6}, {S(1), S(0)}, Mesh({2, 3}, {5, 4, 3, 2, 1, 0})},
      {{13, 4}, {Placement::shardHeadTail(0)}, Mesh({2})},
      {{3, 10}, {S(0), Placement::shardHeadTail(1)}, Mesh({2, 3})},
  };
  for (const Case &c : cases) {
    auto expected = holdersByElement(c.shape, c.placements, c.mesh);
    std::vector<ShardingBlock> blocks =
        shardingBlocks(c.shape, c.placements, c.mesh);
    std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> seen;
    for (const ShardingBlock &block : blocks) {
      std::set<int64_t> devices;
      for (const auto &copy : block.copies) {
        EXPECT_EQ(copy.size(), 1u) << "no Partial: one device per copy";
        devices.insert(copy.begin(), copy.end());
      }
      for (int64_t r = block.ranges[0].begin; r < block.ranges[0].end; ++r)
        for (int64_t col = block.ranges[1].begin; col < block.ranges[1].end;
             ++col)
          EXPECT_TRUE(seen.insert({{r, col}, devices}).second)
              << "element in two blocks";
    }
    EXPECT_EQ(seen, expected) << str(c.placements);
  }
}

TEST(ShardingView, PartialCopiesGroupTheirContributors) {
  // [R, P(sum)] on 2x2: two copies, each split over a mesh dim 1 pair.
  std::vector<ShardingBlock> blocks =
      shardingBlocks({4, 4}, {R(), P()}, Mesh({2, 2}));
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].copies,
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
}

TEST(ShardingView, TableOf2DShards) {
  EXPECT_EQ(formatShardingTable({8, 6}, {S(0), S(1)}, Mesh({2, 2})),
            "         Col 0-2  Col 3-5\n"
            "Row 0-3  0        1\n"
            "Row 4-7  2        3\n"
            "cells: the devices holding each block, copies separated by "
            "','\n");
}

TEST(ShardingView, TableOfUnevenAndEmptyShards) {
  // 5 rows over 4 devices: 2, 2, 1, 0 (torch.chunk).
  EXPECT_EQ(formatShardingTable({5, 3}, {S(0)}, Mesh({4})),
            "         Col 0-2\n"
            "Row 0-1  0\n"
            "Row 2-3  1\n"
            "Row 4    2\n"
            "cells: the devices holding each block, copies separated by "
            "','\n"
            "empty shard on device 3\n");
}

TEST(ShardingView, TableOfHeadTailShards) {
  // 10 rows head-tail over 2 devices: pieces of 3, 3, 3, 1; device 0 holds
  // the first and the last.
  EXPECT_EQ(
      formatShardingTable({10, 2}, {Placement::shardHeadTail(0)}, Mesh({2})),
      "         Col 0-1\n"
      "Row 0-2  0\n"
      "Row 3-5  1\n"
      "Row 6-8  1\n"
      "Row 9    0\n"
      "cells: the devices holding each block, copies separated by "
      "','\n");
}

TEST(ShardingView, TableOf1DReplicatedAndPartial) {
  EXPECT_EQ(formatShardingTable({6}, {S(0), R()}, Mesh({2, 2})),
            "Col 0-2  Col 3-5\n"
            "0, 1     2, 3\n"
            "cells: the devices holding each block, copies separated by "
            "','\n");
  EXPECT_EQ(formatShardingTable({4}, {P(ReduceKind::Max)}, Mesh({3})),
            "Col 0-3\n"
            "0+1+2\n"
            "cells: the devices holding each block, copies separated by "
            "','; a+b: one copy held as Partial(max) contributions of a and "
            "b\n");
}

TEST(ShardingView, TableOf3DShowsTheSlicesThatDiffer) {
  EXPECT_EQ(formatShardingTable({4, 2, 3}, {S(0)}, Mesh({2})),
            "slice [0-1, :, :]\n"
            "         Col 0-2\n"
            "Row 0-1  0\n"
            "slice [2-3, :, :]\n"
            "         Col 0-2\n"
            "Row 0-1  1\n"
            "cells: the devices holding each block, copies separated by "
            "','\n");
}

TEST(ShardingView, ScalarAndEmptyTensors) {
  EXPECT_EQ(formatShardingTable({}, {R()}, Mesh({2})),
            "scalar  0, 1\n"
            "cells: the devices holding each block, copies separated by "
            "','\n");
  EXPECT_EQ(formatShardingTable({0, 4}, {S(0)}, Mesh({2})),
            "(no elements)\n");
}

TEST(ShardingView, SvgDrawsOneRectanglePerBlock) {
  std::string svg = renderShardingSvg({8, 6}, {S(0), S(1)}, Mesh({2, 2}),
                                      "x <f32>");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("<title>x &lt;f32&gt;</title>"), std::string::npos);
  size_t rects = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos;
       at = svg.find("<rect", at + 1))
    ++rects;
  EXPECT_EQ(rects, 4u);
  EXPECT_NE(svg.find(">Row 4-7</text>"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

} // namespace

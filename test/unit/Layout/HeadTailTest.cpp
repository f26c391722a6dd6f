//===- HeadTailTest.cpp - the head-tail split of context parallelism ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Expected pieces come from a simulated torch.chunk of the global indices
// (ChunkOracles.h), cut into 2W pieces of which rank r takes r and 2W-1-r.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Layout/LayoutMath.h"

#include "ChunkOracles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using namespace dtensor::layout;

/// The global indices rank `rank` of `parts` holds, in local order.
std::vector<int64_t> oracleIndices(int64_t n, int64_t parts, int64_t rank) {
  std::vector<int64_t> indices;
  for (int64_t piece : {rank, 2 * parts - 1 - rank}) {
    Range r = oracle::torchChunkRange(n, 2 * parts, piece);
    for (int64_t i = r.begin; i < r.end; ++i)
      indices.push_back(i);
  }
  return indices;
}

TEST(HeadTail, PlacementNotationAndEquality) {
  Placement ht = Placement::shardHeadTail(1);
  EXPECT_TRUE(ht.isShard());
  EXPECT_TRUE(ht.isHeadTail());
  EXPECT_FALSE(Placement::shard(1).isHeadTail());
  EXPECT_EQ(ht.str(), "S(1,head_tail)");
  EXPECT_NE(ht, Placement::shard(1));
  EXPECT_EQ(ht, Placement::shardHeadTail(1));
  EXPECT_NE(ht, Placement::shardHeadTail(0));
  for (const char *text : {"S(1,head_tail)", "S(1, head_tail)",
                           "Shard(dim=1, head_tail)", " Shard( 1 ,head_tail) "})
    EXPECT_EQ(parsePlacement(text), ht) << text;
  EXPECT_EQ(parsePlacement(ht.str()), ht);
  for (const char *text : {"S(1,tail)", "S(1,)", "S(,head_tail)",
                           "S(1,head_tail,head_tail)", "R(head_tail)"})
    EXPECT_FALSE(parsePlacement(text)) << text;
}

TEST(HeadTail, RangesMatchTorchChunkEvenAndUneven) {
  for (int64_t parts = 1; parts <= 4; ++parts)
    for (int64_t n = 0; n <= 40; ++n)
      for (int64_t rank = 0; rank < parts; ++rank) {
        std::vector<Range> held = headTailRanges(n, parts, rank);
        ASSERT_EQ(held.size(), 2u);
        EXPECT_EQ(held[0], oracle::torchChunkRange(n, 2 * parts, rank));
        EXPECT_EQ(held[1],
                  oracle::torchChunkRange(n, 2 * parts, 2 * parts - 1 - rank));
      }
}

TEST(HeadTail, GlobalIndexOfWalksThePiecesInOrder) {
  for (int64_t parts = 1; parts <= 4; ++parts)
    for (int64_t n = 0; n <= 40; ++n)
      for (int64_t rank = 0; rank < parts; ++rank) {
        std::vector<int64_t> expected = oracleIndices(n, parts, rank);
        std::vector<Range> held = headTailRanges(n, parts, rank);
        for (size_t i = 0; i < expected.size(); ++i)
          EXPECT_EQ(globalIndexOf(held, static_cast<int64_t>(i)), expected[i])
              << "n " << n << " parts " << parts << " rank " << rank;
      }
}

TEST(HeadTail, RanksCoverTheDimOnce) {
  for (int64_t parts = 1; parts <= 4; ++parts)
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<int> seen(n, 0);
      for (int64_t rank = 0; rank < parts; ++rank)
        for (int64_t i : oracleIndices(n, parts, rank))
          ++seen[i];
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(),
                              [](int count) { return count == 1; }));
    }
}

TEST(HeadTail, SizesOfEvenAndUnevenLengths) {
  // 16 over 2 ranks: pieces of 4, every rank 8. 13 over 2: pieces 4 4 4 1,
  // ranks 5 and 8. 10 over 4: pieces of 2 (the last three empty).
  EXPECT_EQ(uniformHeadTailSize(16, 2), 8);
  EXPECT_EQ(maxHeadTailSize(16, 2), 8);
  EXPECT_EQ(uniformHeadTailSize(13, 2), std::nullopt);
  EXPECT_EQ(maxHeadTailSize(13, 2), 8);
  EXPECT_EQ(maxHeadTailSize(10, 4), 4);
  EXPECT_EQ(uniformHeadTailSize(kDynamic, 2), std::nullopt);
  for (int64_t parts = 1; parts <= 4; ++parts)
    for (int64_t n = 0; n <= 40; ++n) {
      int64_t most = 0;
      bool same = true;
      for (int64_t rank = 0; rank < parts; ++rank) {
        int64_t size =
            static_cast<int64_t>(oracleIndices(n, parts, rank).size());
        same = same &&
               size == static_cast<int64_t>(oracleIndices(n, parts, 0).size());
        most = std::max(most, size);
      }
      EXPECT_EQ(maxHeadTailSize(n, parts), most);
      EXPECT_EQ(uniformHeadTailSize(n, parts).has_value(), same);
      if (n % (2 * parts) == 0) {
        EXPECT_EQ(uniformHeadTailSize(n, parts), n / parts);
      }
    }
}

TEST(HeadTail, LocalShardOnATwoDimMesh) {
  // [B, S, D] = [2, 13, 6] with S head-tail over mesh dim 0 (cp, 2) and D
  // sharded over mesh dim 1 (tp, 3).
  Mesh mesh({2, 3});
  std::vector<Placement> placements{Placement::shardHeadTail(1),
                                    Placement::shard(2)};
  std::vector<int64_t> shape{2, 13, 6};
  Shard first = localShard(shape, placements, mesh, {0, 1});
  EXPECT_EQ(first.shape, (std::vector<int64_t>{2, 5, 2}));
  EXPECT_EQ(first.offset, (std::vector<int64_t>{0, 0, 2}));
  ASSERT_EQ(first.pieces.size(), 3u);
  EXPECT_EQ(first.pieces[1], (std::vector<Range>{{0, 4}, {12, 13}}));
  EXPECT_EQ(first.pieces[2], (std::vector<Range>{{2, 4}}));
  EXPECT_TRUE(first.isSplit());
  Shard second = localShard(shape, placements, mesh, {1, 2});
  EXPECT_EQ(second.shape, (std::vector<int64_t>{2, 8, 2}));
  EXPECT_EQ(second.pieces[1], (std::vector<Range>{{4, 8}, {8, 12}}));
  EXPECT_EQ(localShapeType(shape, placements, mesh),
            (std::vector<int64_t>{2, kDynamic, 2}));
  EXPECT_EQ(localShapeType({2, 16, 6}, placements, mesh),
            (std::vector<int64_t>{2, 8, 2}));
  EXPECT_FALSE(localShard(shape, {Placement::shard(1), Placement::shard(2)},
                          mesh, {0, 0})
                   .isSplit());
  EXPECT_EQ(headTailMeshDim(placements, 1), 0);
  EXPECT_EQ(headTailMeshDim(placements, 2), std::nullopt);
}

TEST(HeadTail, ValidationRefusesNesting) {
  Mesh mesh({2, 2});
  std::vector<Placement> nested{Placement::shardHeadTail(-2),
                                Placement::shard(1)};
  std::string error = normalizeAndValidate(nested, mesh, 3);
  EXPECT_EQ(
      error,
      "head-tail shard dim 1 on mesh dim 0 is also sharded over mesh dim 1");
  EXPECT_EQ(nested[0].dim, -2); // untouched on error
  std::vector<Placement> fine{Placement::shardHeadTail(-2),
                              Placement::shard(2)};
  EXPECT_EQ(normalizeAndValidate(fine, mesh, 3), "");
  EXPECT_EQ(fine[0], Placement::shardHeadTail(1));
}

} // namespace

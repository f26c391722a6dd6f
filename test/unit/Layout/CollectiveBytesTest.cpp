//===- CollectiveBytesTest.cpp - the bytes a rank sends -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Layout/CollectiveBytes.h"
#include "dtensor/Layout/LayoutMath.h"

#include <gtest/gtest.h>

using namespace dtensor::layout;

namespace {
constexpr int64_t D = kDynamic;
} // namespace

TEST(CollectiveBytes, NamesRoundTrip) {
  for (CollectiveKind kind :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter, CollectiveKind::AllToAll,
        CollectiveKind::Broadcast, CollectiveKind::Shift})
    EXPECT_EQ(collectiveKindNamed(collectiveKindName(kind)), kind);
  EXPECT_STREQ(collectiveKindName(CollectiveKind::ReduceScatter),
               "reduce_scatter");
  EXPECT_EQ(collectiveKindNamed("gather"), std::nullopt);
  EXPECT_STREQ(collectiveKindName(CollectiveKind::Shift), "shift");
}

TEST(CollectiveBytes, ShiftSendsItsPieceOnce) {
  // A piece [4, 3] of f32 to the next rank: one message, whatever the group.
  EXPECT_EQ(ringBytesSent(CollectiveKind::Shift, {4, 3}, {4, 3}, 0, -1, 4, 4,
                          16),
            4 * 3 * 4);
  // Uneven pieces of 10 over 4 (3, 3, 2, 2): counted at the largest, 3.
  EXPECT_EQ(ringBytesSent(CollectiveKind::Shift, {D, 3}, {D, 3}, 0, -1, 4, 4,
                          10),
            3 * 3 * 4);
  // Without the whole size a dynamic piece has no figure.
  EXPECT_EQ(ringBytesSent(CollectiveKind::Shift, {D, 3}, {D, 3}, 0, -1, 4, 4),
            std::nullopt);
  EXPECT_EQ(ringBytesSent(CollectiveKind::Shift, {4, 3}, {4, 3}, 0, -1, 1, 4,
                          4),
            0);
}

TEST(CollectiveBytes, AllReduceIsTwoRingsOfChunks) {
  // 16 f32 over 4 ranks: 2 * 3 messages of 4 elements.
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllReduce, {16}, {16}, -1, -1, 4, 4),
            96);
  // 10 elements over 4: chunks of ceil(10/4) = 3.
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllReduce, {2, 5}, {2, 5}, -1, -1,
                          4, 2),
            2 * 3 * 3 * 2);
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllReduce, {D}, {D}, -1, -1, 4, 4),
            std::nullopt);
}

TEST(CollectiveBytes, GatherScatterAndAllToAllSendTheLargestPiece) {
  // 4 -> 16 along dim 0 over 4 ranks, rows of 3 f32.
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllGather, {4, 3}, {16, 3}, 0, -1, 4,
                          4),
            3 * 4 * 3 * 4);
  // Uneven: a rank's own piece unknown, the whole 10 over 4: pieces of 3.
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllGather, {D, 3}, {10, 3}, 0, -1, 4,
                          4),
            3 * 3 * 3 * 4);
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllGather, {D, 3}, {D, 3}, 0, -1, 4,
                          4),
            std::nullopt);
  EXPECT_EQ(ringBytesSent(CollectiveKind::ReduceScatter, {10, 3}, {D, 3}, 0,
                          -1, 4, 4),
            3 * 3 * 3 * 4);
  // all_to_all of [8, 2] split dim 0 concat dim 1 over 2: [4, 4] out.
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllToAll, {8, 2}, {4, 4}, 0, 1, 2,
                          4),
            1 * 4 * 2 * 4);
  // A dim out of range: no figure.
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllGather, {4}, {16}, 1, -1, 4, 4),
            std::nullopt);
}

TEST(CollectiveBytes, BroadcastAndGroupsOfOne) {
  EXPECT_EQ(ringBytesSent(CollectiveKind::Broadcast, {8}, {8}, -1, -1, 4, 4),
            32);
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllReduce, {D}, {D}, -1, -1, 1, 4),
            0);
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllReduce, {4}, {4, 1}, -1, -1, 2,
                          4),
            std::nullopt);
  EXPECT_EQ(ringBytesSent(CollectiveKind::AllReduce, {4}, {4}, -1, -1, 0, 4),
            std::nullopt);
}

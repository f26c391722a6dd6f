//===- CommCostTest.cpp - Tests for the communication cost model ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Expected times are worked out by hand from the alpha-beta formulas in
// CommCost.h with a 1 us call overhead, latency 5 us, 10 GB/s links (1e4
// bytes/us) and 20 GB/s memory (2e4 bytes/us).
//
//===----------------------------------------------------------------------===//

#include "dtensor/Planner/CommCost.h"

#include <gtest/gtest.h>

namespace {

using namespace dtensor::layout;

const Placement R = Placement::replicate();
const Placement P = Placement::partial(ReduceKind::Sum);
Placement S(int64_t dim) { return Placement::shard(dim); }

TEST(CommCostTest, CollectivesOverOneRankAreFree) {
  CostParams params;
  for (Collective c : {Collective::AllGather, Collective::AllReduce,
                       Collective::ReduceScatter, Collective::AllToAll})
    EXPECT_EQ(collectiveTimeUs(c, 1, 1e6, params), 0.0);
}

TEST(CommCostTest, RingFormulas) {
  CostParams params;
  // all_gather over 2: one step, receive the other rank's 1000 bytes.
  EXPECT_DOUBLE_EQ(collectiveTimeUs(Collective::AllGather, 2, 1000, params),
                   1.0 + 5.0 + 1000 / 1e4);
  // all_reduce over 4: 2*log2(4) rounds, 2*(3/4) of the buffer sent.
  EXPECT_DOUBLE_EQ(collectiveTimeUs(Collective::AllReduce, 4, 8000, params),
                   1.0 + 20.0 + 2 * 0.75 * 8000 / 1e4);
  EXPECT_DOUBLE_EQ(collectiveTimeUs(Collective::ReduceScatter, 4, 8000, params),
                   1.0 + 10.0 + 0.75 * 8000 / 1e4);
  // all_to_all over 4: a personalised exchange takes 3 rounds.
  EXPECT_DOUBLE_EQ(collectiveTimeUs(Collective::AllToAll, 4, 8000, params),
                   1.0 + 15.0 + 0.75 * 8000 / 1e4);
  // all_gather over 3: ceil(log2 3) = 2 rounds, two shards received.
  EXPECT_DOUBLE_EQ(collectiveTimeUs(Collective::AllGather, 3, 1000, params),
                   1.0 + 10.0 + 2 * 1000 / 1e4);
}

TEST(CommCostTest, LocalBytesUseTheLargestShard) {
  CostParams params;
  Mesh mesh({4});
  // 10 rows over 4 ranks: 3,3,3,1 -> the bound is 3 rows.
  EXPECT_DOUBLE_EQ(localBytes({10, 8}, 4, {S(0)}, mesh, params), 3 * 8 * 4);
  EXPECT_DOUBLE_EQ(localBytes({10, 8}, 4, {R}, mesh, params), 10 * 8 * 4);
  EXPECT_DOUBLE_EQ(localBytes({10, 8}, 2, {P}, mesh, params), 10 * 8 * 2);
  // A dynamic dim counts as the estimate.
  EXPECT_DOUBLE_EQ(localBytes({kDynamic, 2}, 4, {S(1)}, mesh, params),
                   1024 * 1 * 4);
}

TEST(CommCostTest, OneDimensionalTransitions) {
  CostParams params;
  Mesh mesh({2});
  std::vector<int64_t> shape{8, 64}; // 2048 bytes of f32
  EXPECT_EQ(redistributeTimeUs(shape, 4, {S(0)}, {S(0)}, mesh, params), 0.0);
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {P}, {R}, mesh, params),
                   1.0 + 10.0 + 2048 / 1e4);
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {S(0)}, {R}, mesh, params),
                   1.0 + 5.0 + 1024 / 1e4);
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {P}, {S(1)}, mesh, params),
                   1.0 + 5.0 + 0.5 * 2048 / 1e4);
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {S(0)}, {S(1)}, mesh, params),
                   1.0 + 5.0 + 0.5 * 1024 / 1e4);
  // Local steps: keep a chunk, zero a replica.
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {R}, {S(0)}, mesh, params),
                   1024 / 2e4);
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {R}, {P}, mesh, params),
                   2048 / 2e4);
  // S -> P goes through R.
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {S(0)}, {P}, mesh, params),
                   1.0 + 5.0 + 1024 / 1e4 + 2048 / 2e4);
}

TEST(CommCostTest, TwoDimensionalGatherOfANestedShard) {
  CostParams params;
  Mesh mesh({2, 2});
  std::vector<int64_t> shape{8, 64};
  // [S0, S0] holds 2 rows (512 bytes); gathering mesh dim 0 first doubles
  // it to 1024, then mesh dim 1 gathers that.
  EXPECT_DOUBLE_EQ(
      redistributeTimeUs(shape, 4, {S(0), S(0)}, {R, R}, mesh, params),
      (1.0 + 5.0 + 512 / 1e4) + (1.0 + 5.0 + 1024 / 1e4));
}

TEST(CommCostTest, ShrinkingStepsComeFirst) {
  CostParams params;
  Mesh mesh({2, 2});
  std::vector<int64_t> shape{8, 64};
  // (P, S0) -> (S0, R): reduce_scatter on mesh dim 0 while holding 4 rows
  // (1024 bytes), then all_gather mesh dim 1 holding 2 rows (512 bytes).
  EXPECT_DOUBLE_EQ(
      redistributeTimeUs(shape, 4, {P, S(0)}, {S(0), R}, mesh, params),
      (1.0 + 5.0 + 0.5 * 1024 / 1e4) + (1.0 + 5.0 + 512 / 1e4));
}

TEST(CommCostTest, ParametersScaleTheTerms) {
  CostParams params;
  params.callUs = 0.0;
  params.latencyUs = 0.0;
  params.bandwidthGBps = 1.0; // 1e3 bytes/us
  Mesh mesh({2});
  EXPECT_DOUBLE_EQ(redistributeTimeUs({1000}, 1, {P}, {R}, mesh, params),
                   2 * 0.5 * 1000 / 1e3);
}

/// A topology of a 2 x 2 mesh: mesh dim 0 crosses a slow link (50 us,
/// 1 GB/s = 1e3 bytes/us), mesh dim 1 a fast one (1 us, 100 GB/s).
CostParams slowDimZero() {
  CostParams params;
  params.meshDimLinks = {{"slow", 50.0, 1.0}, {"fast", 1.0, 100.0}};
  return params;
}

TEST(CommCostTest, WithoutLinksMeshDimsChangeNothing) {
  CostParams params;
  for (Collective c : {Collective::AllGather, Collective::AllReduce,
                       Collective::ReduceScatter, Collective::AllToAll}) {
    EXPECT_DOUBLE_EQ(collectiveTimeUs(c, {0, 1}, 4, 8000, params),
                     collectiveTimeUs(c, 4, 8000, params));
    EXPECT_EQ(slowestLink(c, {0}, 2, 8000, params), nullptr);
  }
}

TEST(CommCostTest, ACollectiveIsPricedByItsSlowestLink) {
  CostParams params = slowDimZero();
  EXPECT_DOUBLE_EQ(
      collectiveTimeUs(Collective::AllReduce, {1}, 2, 8000, params),
      1.0 + 2 * 1.0 + 2 * 0.5 * 8000 / 1e5);
  EXPECT_DOUBLE_EQ(
      collectiveTimeUs(Collective::AllReduce, {0}, 2, 8000, params),
      1.0 + 2 * 50.0 + 2 * 0.5 * 8000 / 1e3);
  // A group over both dims waits for the slow one.
  EXPECT_DOUBLE_EQ(
      collectiveTimeUs(Collective::AllGather, {0, 1}, 4, 8000, params),
      1.0 + 2 * 50.0 + 3 * 8000 / 1e3);
  EXPECT_EQ(slowestLink(Collective::AllGather, {0, 1}, 4, 8000, params)->name,
            "slow");
  EXPECT_EQ(slowestLink(Collective::AllGather, {1}, 2, 8000, params)->name,
            "fast");
}

TEST(CommCostTest, SlowestLinkWeighsLatencyAgainstBandwidth) {
  // A high-latency wide link and a low-latency narrow one: small messages
  // wait for the latency, large ones for the bandwidth.
  CostParams params;
  params.meshDimLinks = {{"far", 100.0, 100.0}, {"thin", 1.0, 1.0}};
  EXPECT_EQ(slowestLink(Collective::AllReduce, {0, 1}, 4, 8, params)->name,
            "far");
  EXPECT_EQ(slowestLink(Collective::AllReduce, {0, 1}, 4, 1e6, params)->name,
            "thin");
}

TEST(CommCostTest, RedistributePricesEachMeshDimWithItsLink) {
  CostParams params = slowDimZero();
  Mesh mesh({2, 2});
  std::vector<int64_t> shape{8, 64}; // 2048 bytes of f32
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {P, R}, {R, R}, mesh, params),
                   1.0 + 2 * 50.0 + 2048 / 1e3);
  EXPECT_DOUBLE_EQ(redistributeTimeUs(shape, 4, {R, P}, {R, R}, mesh, params),
                   1.0 + 2 * 1.0 + 2048 / 1e5);
}

} // namespace

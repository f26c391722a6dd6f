//===- SolverTest.cpp - Tests for the strategy-choice solver --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The solver's answers are checked against brute force over every choice on
// small problems: its total must be a local optimum (no single node can
// improve), it must match the exhaustive optimum where that is reachable by
// single moves, and it must be deterministic.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Propagation/Solver.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace {

using namespace dtensor;
using namespace dtensor::propagation;

const layout::Placement R = layout::Placement::replicate();
const layout::Placement P = layout::Placement::partial();
layout::Placement S(int64_t dim) { return layout::Placement::shard(dim); }

ValueInfo tensor(std::vector<int64_t> shape, bool remat = false) {
  ValueInfo info;
  info.shape = std::move(shape);
  info.rematerializable = remat;
  return info;
}

/// The exhaustive minimum of the total cost.
double bruteForce(Problem &problem, const std::vector<int> &counts) {
  std::vector<int> choice(counts.size(), 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    best = std::min(best, problem.totalCost(choice));
    size_t i = 0;
    while (i < counts.size() && ++choice[i] == counts[i])
      choice[i++] = 0;
    if (i == counts.size())
      return best;
  }
}

TEST(SolverTest, ASharedFixedCostPaysOnlyItsShare) {
  // An all_reduce of 4 KiB over 2 ranks: call + 2 latency rounds + bytes.
  // A weight's gradient, one of 4 bucketed together, pays a quarter of the
  // call and the rounds, and all of its bytes.
  layout::CostParams params;
  Problem problem(layout::Mesh({2}), params);
  int alone = problem.addValue(tensor({1024}));
  ValueInfo bucketed = tensor({1024});
  bucketed.fixedCostShare = 0.25;
  int shared = problem.addValue(bucketed);
  double fixedUs = params.callUs + 2 * params.latencyUs;
  double aloneUs = problem.redistributeTimeUs(alone, {P}, {R});
  double sharedUs = problem.redistributeTimeUs(shared, {P}, {R});
  EXPECT_NEAR(aloneUs - sharedUs, 0.75 * fixedUs, 1e-9);
  EXPECT_GT(sharedUs, 0.25 * fixedUs);

  // With a topology the link's latency is shared likewise.
  params.meshDimLinks = {layout::LinkCost{"ib", 20.0, 10.0}};
  Problem linked(layout::Mesh({2}), params);
  alone = linked.addValue(tensor({1024}));
  shared = linked.addValue(bucketed);
  EXPECT_NEAR(linked.redistributeTimeUs(alone, {P}, {R}) -
                  linked.redistributeTimeUs(shared, {P}, {R}),
              0.75 * (params.callUs + 2 * 20.0), 1e-9);
}

TEST(SolverTest, FollowsTheFixedSource) {
  // arg (S0) -> op {needs R | needs S0} -> result (R).
  Problem problem(layout::Mesh({2}), layout::CostParams());
  int x = problem.addValue(tensor({1024, 1024}));
  int y = problem.addValue(tensor({1024, 1024}));
  problem.addNode({}, {x}, {Strategy{{}, {{S(0)}}, 0.0}});
  problem.addNode({x}, {y},
                  {Strategy{{{R}}, {{R}}, 10.0}, Strategy{{{S(0)}}, {{S(0)}}, 5.0}});
  problem.addNode({y}, {}, {Strategy{{{R}}, {}, 0.0}});
  std::vector<int> choice = problem.solve(8);
  // Sharded: half the compute, and the gather happens once either way.
  EXPECT_EQ(choice[1], 1);
  EXPECT_DOUBLE_EQ(problem.totalCost(choice), bruteForce(problem, {1, 2, 1}));
}

TEST(SolverTest, OneRedistributeServesUsersThatNeedTheSameLayout) {
  Problem problem(layout::Mesh({2}), layout::CostParams());
  int x = problem.addValue(tensor({64, 64}));
  problem.addNode({}, {x}, {Strategy{{}, {{P}}, 0.0}});
  problem.addNode({x}, {}, {Strategy{{{R}}, {}, 0.0}});
  problem.addNode({x}, {}, {Strategy{{{R}}, {}, 0.0}});
  double once = problem.redistributeTimeUs(x, {P}, {R});
  EXPECT_GT(once, 0.0);
  EXPECT_DOUBLE_EQ(problem.totalCost({0, 0, 0}), once);
}

TEST(SolverTest, RematerializableValuesAreFree) {
  Problem problem(layout::Mesh({2}), layout::CostParams());
  int x = problem.addValue(tensor({64, 64}, /*remat=*/true));
  problem.addNode({}, {x}, {Strategy{{}, {{R}}, 0.0}});
  problem.addNode({x}, {}, {Strategy{{{S(0)}}, {}, 0.0}});
  problem.addNode({x}, {}, {Strategy{{{S(1)}}, {}, 0.0}});
  EXPECT_DOUBLE_EQ(problem.totalCost({0, 0, 0}), 0.0);
}

TEST(SolverTest, BackwardSweepFixesGreedyStart) {
  // A producer with no inputs picks by its own cost first (S0 is cheaper),
  // but its only user needs S1 and cannot change: the backward sweep moves
  // the producer.
  Problem problem(layout::Mesh({2}), layout::CostParams());
  int x = problem.addValue(tensor({512, 512}));
  problem.addNode({}, {x},
                  {Strategy{{}, {{S(0)}}, 1.0}, Strategy{{}, {{S(1)}}, 2.0}});
  problem.addNode({x}, {}, {Strategy{{{S(1)}}, {}, 0.0}});
  std::vector<int> choice = problem.solve(8);
  EXPECT_EQ(choice[0], 1);
  EXPECT_DOUBLE_EQ(problem.totalCost(choice), 2.0);
}

TEST(SolverTest, ReportsTheSweepsItRan) {
  // The problem of BackwardSweepFixesGreedyStart. Both greedy starts already
  // reach the optimum (the user's move lets its producer respond), so each
  // of the two searches runs one sweep, which changes nothing, and stops.
  auto build = [](Problem &problem) {
    int x = problem.addValue(tensor({512, 512}));
    problem.addNode({}, {x},
                    {Strategy{{}, {{S(0)}}, 1.0}, Strategy{{}, {{S(1)}}, 2.0}});
    problem.addNode({x}, {}, {Strategy{{{S(1)}}, {}, 0.0}});
  };
  Problem problem(layout::Mesh({2}), layout::CostParams());
  build(problem);
  unsigned sweeps = 99;
  std::vector<int> choice = problem.solve(8, &sweeps);
  EXPECT_EQ(choice[0], 1);
  EXPECT_EQ(sweeps, 2u);
  // No sweep allowed: none run, and the greedy starts stand.
  Problem greedy(layout::Mesh({2}), layout::CostParams());
  build(greedy);
  greedy.solve(0, &sweeps);
  EXPECT_EQ(sweeps, 0u);
}

/// Random layered problems: layouts from a small menu, random costs.
TEST(SolverTest, RandomProblemsReachLocalOptimaDeterministically) {
  std::vector<Layout> menu{{R}, {S(0)}, {S(1)}, {P}};
  for (unsigned seed = 0; seed < 40; ++seed) {
    auto build = [&](Problem &problem, std::vector<int> &counts) {
      std::mt19937 local(seed * 7919 + 1);
      auto draw = [&](int n) {
        return static_cast<int>(
            std::uniform_int_distribution<int>(0, n - 1)(local));
      };
      std::vector<int> live;
      int numNodes = 5;
      for (int node = 0; node < numNodes; ++node) {
        std::vector<int> operands;
        if (!live.empty())
          operands.push_back(live[draw(static_cast<int>(live.size()))]);
        if (live.size() > 1 && draw(2))
          operands.push_back(live[draw(static_cast<int>(live.size()))]);
        int result = problem.addValue(tensor({64 << draw(4), 64}));
        std::vector<Strategy> strategies;
        int count = 1 + draw(3);
        for (int s = 0; s < count; ++s) {
          Strategy strategy;
          for (size_t o = 0; o < operands.size(); ++o)
            strategy.operands.push_back(menu[draw(4)]);
          strategy.results.push_back(menu[draw(4)]);
          strategy.costUs = draw(20);
          strategies.push_back(strategy);
        }
        counts.push_back(count);
        problem.addNode(operands, {result}, strategies);
        live.push_back(result);
      }
    };
    Problem first(layout::Mesh({4}), layout::CostParams());
    Problem second(layout::Mesh({4}), layout::CostParams());
    std::vector<int> counts, unused;
    build(first, counts);
    build(second, unused);
    std::vector<int> choice = first.solve(16);
    EXPECT_EQ(choice, second.solve(16)) << "seed " << seed;
    double total = first.totalCost(choice);
    EXPECT_GE(total, bruteForce(first, counts) - 1e-9) << "seed " << seed;
    // No single move improves the answer.
    for (size_t node = 0; node < counts.size(); ++node) {
      std::vector<int> moved = choice;
      for (int s = 0; s < counts[node]; ++s) {
        moved[node] = s;
        EXPECT_GE(first.totalCost(moved), total - 1e-9)
            << "seed " << seed << " node " << node;
      }
    }
  }
}

} // namespace

//===- Solver.h - global choice of op sharding strategies -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sharding propagation as a discrete optimisation problem, free of MLIR: a
// graph of nodes (ops, function arguments, returned values) joined by
// values. Each node offers strategies; a strategy fixes the layout it needs
// for each operand and the layout it produces for each result, and has a
// local cost (compute time). Choosing one strategy per node prices the
// whole function:
//
//   total = sum of chosen strategy costs
//         + for every value, for every distinct layout its users need that
//           differs from the layout its producer gives, the time of that
//           redistribute (zero when the producer is rematerializable: it is
//           recreated in the needed layout instead).
//
// The solver runs twice, from a greedy pass over the nodes in program order
// and from one in reverse order, then sweeps backward and forward over the
// nodes; the cheaper end point wins. A move tries each strategy of one node while the
// producers of its operands respond with their best strategy, and keeps the
// cheapest combination; a sweep that changes nothing ends the search. Every
// move lowers the total, so it terminates; ties keep the current (then the
// lowest-numbered) strategy, so it is deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PROPAGATION_SOLVER_H
#define DTENSOR_PROPAGATION_SOLVER_H

#include "dtensor/Planner/CommCost.h"
#include "dtensor/Layout/LayoutMath.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace dtensor::propagation {

/// One placement per mesh dim, normalised.
using Layout = std::vector<layout::Placement>;

/// One way to run a node.
struct Strategy {
  /// Layout needed for each operand slot of the node.
  std::vector<Layout> operands;
  /// Layout produced for each result of the node.
  std::vector<Layout> results;
  /// Local cost of the node under this strategy, microseconds.
  double costUs = 0.0;
};

/// A tensor flowing between nodes.
struct ValueInfo {
  /// Global shape; layout::kDynamic for dynamic dims.
  std::vector<int64_t> shape;
  int64_t elementBytes = 4;
  /// The producer can be recreated in any layout for free (an empty tensor,
  /// a constant), so differing users cost nothing.
  bool rematerializable = false;
  /// The share of each collective's fixed cost (its call and its latency
  /// rounds) that a redistribute of this value pays: 1, or 1/N for one of N
  /// weight gradients, whose independent reductions collective fusion
  /// buckets into one collective (as DDP does), so that they share it.
  double fixedCostShare = 1.0;
};

class Problem {
public:
  Problem(layout::Mesh mesh, layout::CostParams params);

  /// The cost model's parameters (with a topology: each mesh dim's link).
  const layout::CostParams &getParams() const { return params; }

  /// Adds a value; returns its id.
  int addValue(ValueInfo info);
  /// Adds a node reading `operands` and producing `results` (value ids; a
  /// value is produced by exactly one node). Nodes must be added in an order
  /// where producers come before users. Every strategy must have one layout
  /// per operand and per result; at least one strategy is required.
  int addNode(std::vector<int> operands, std::vector<int> results,
              std::vector<Strategy> strategies);

  /// Chooses a strategy per node (indices into each node's strategies).
  /// `sweeps`, when given, receives the number of improvement sweeps the
  /// two searches ran together (each at most `maxSweeps`).
  std::vector<int> solve(unsigned maxSweeps, unsigned *sweeps = nullptr);

  /// The total cost of a complete choice.
  double totalCost(const std::vector<int> &choice);

  /// The time to redistribute value `value` from `source` to `target`.
  double redistributeTimeUs(int value, const Layout &source,
                            const Layout &target);

  int getNumNodes() const { return static_cast<int>(nodes.size()); }
  int getNumStrategies(int node) const {
    return static_cast<int>(nodes[node].strategies.size());
  }
  const Strategy &getStrategy(int node, int index) const {
    return nodes[node].strategies[index];
  }

private:
  /// A strategy with its layouts replaced by interned ids.
  struct Choice {
    std::vector<int> operands;
    std::vector<int> results;
    double costUs;
  };
  struct Node {
    std::vector<int> operands;
    std::vector<int> results;
    std::vector<Strategy> strategies;
    std::vector<Choice> choices;
  };
  struct Use {
    int node;
    int slot;
  };
  struct Value {
    ValueInfo info;
    int producer = -1;
    int producerResult = -1;
    std::vector<Use> uses;
  };

  /// Cost of value `value` under `choice`, counting only decided nodes.
  double valueCost(int value, const std::vector<int> &choice);
  /// scopeCost of `node` alone with its strategy set to `strategy`.
  double localCost(int node, std::vector<int> &choice, int strategy);
  /// Strategy costs of `scope` plus the costs of the values they touch.
  double scopeCost(const std::vector<int> &scope,
                   const std::vector<int> &choice);
  /// The cheapest strategy of a decided `node` given all other choices;
  /// its current one on ties.
  int bestResponse(int node, std::vector<int> &choice);
  /// One local search from a greedy start in program order (or reverse).
  /// Adds the sweeps it ran to `sweeps`.
  std::vector<int> search(bool forwardStart, unsigned maxSweeps,
                          unsigned &sweeps);
  /// Moves `node` to its cheapest strategy, letting the producers of its
  /// operands respond; true when any choice changed.
  bool improve(int node, std::vector<int> &choice);

  layout::Mesh mesh;
  layout::CostParams params;
  std::vector<Node> nodes;
  std::vector<Value> values;
  /// The id of `layout`, interning it on first sight.
  int intern(const Layout &layout);
  /// The time to redistribute `value` between interned layouts.
  double redistributeTimeUs(int value, int source, int target);
  /// `params` with each collective's fixed cost scaled by `share`
  /// (ValueInfo::fixedCostShare).
  const layout::CostParams &getSharedFixedCost(double share);

  /// Interned layouts: ids index `layouts`.
  std::vector<Layout> layouts;
  std::map<std::string, int> layoutIds;
  /// Reused by valueCost for the distinct layouts users need.
  std::vector<int> scratch;
  /// Memoised redistribute times keyed by value and both layout ids.
  std::unordered_map<uint64_t, double> redistributeCache;
  /// getSharedFixedCost's parameters, by share.
  std::map<double, layout::CostParams> sharedFixedCostParams;
};

} // namespace dtensor::propagation

#endif // DTENSOR_PROPAGATION_SOLVER_H

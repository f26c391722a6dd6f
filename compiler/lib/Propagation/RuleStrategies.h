//===- RuleStrategies.h - strategies of an op from its rule -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Turns an op's sharding rule into the strategies propagation chooses from:
// for every mesh dim, one action — replicate, shard one factor, or let
// Partial values flow through — and the operand/result layouts and local
// compute cost that follow.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_PROPAGATION_RULESTRATEGIES_H
#define DTENSOR_COMPILER_PROPAGATION_RULESTRATEGIES_H

#include "dtensor/Analysis/ShardingRule.h"
#include "dtensor/Propagation/Solver.h"

#include <vector>

namespace dtensor {

/// Prices of local work used when enumerating strategies.
struct ComputeParams {
  /// Microseconds per point of an op's iteration space (the pass scales it
  /// by the op's arithmetic per point).
  double usPerPoint = 1e-5;
  /// Added once per mesh dim on which Partial values flow through the op:
  /// among plans of equal price, reduce as early as possible (closest to
  /// single-device rounding).
  double partialFlowPenaltyUs = 1e-3;
  /// Iteration count assumed for a dynamic factor.
  int64_t dynamicSizeEstimate = 1024;
  /// Mesh dims on which a factor may also be sharded head-tail (context
  /// parallelism's load balancing, layout::Placement::headTail): those that
  /// some layout claim of the function shards head-tail. A head-tail factor
  /// is a parallel one that is no reshape group's major dim, sharded over
  /// no other mesh dim.
  std::vector<bool> headTailMeshDims;
};

/// Every valid strategy of an op with `rule` on `mesh`, in a fixed order
/// (all-replicated first). Operand slots follow `rule.operands`, results
/// follow `rule.results`. An op without operands (a constant, an empty
/// tensor) costs nothing.
std::vector<propagation::Strategy>
enumerateStrategies(const ShardingRule &rule, const layout::Mesh &mesh,
                    const ComputeParams &params);

/// Every layout without Partial of a tensor of `shape` on `mesh`
/// (all-replicated first; unit dims are never sharded).
std::vector<propagation::Layout>
enumerateShardLayouts(const std::vector<int64_t> &shape,
                      const layout::Mesh &mesh);

} // namespace dtensor

#endif // DTENSOR_COMPILER_PROPAGATION_RULESTRATEGIES_H

//===- RuleStrategies.cpp - strategies of an op from its rule -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "RuleStrategies.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

using namespace dtensor;
using llvm::ArrayRef;
using propagation::Layout;
using propagation::Strategy;

namespace {
/// What an op does along one mesh dim.
struct Action {
  enum class Kind { Replicate, Shard, Flow };
  Kind kind = Kind::Replicate;
  /// The sharded factor (Shard).
  unsigned factor = 0;
  /// Index into ShardingRule::partialFlows and the kind (Flow).
  unsigned flow = 0;
  ReductionKind reduction = ReductionKind::Sum;
  /// Shard only: the factor is split head-tail.
  bool headTail = false;
};

/// The actions allowed along any one mesh dim, in a fixed order; with
/// `headTail`, head-tail shards of the factors that allow one too.
std::vector<Action> getActions(const ShardingRule &rule, bool headTail) {
  std::vector<Action> actions{Action{}};
  for (auto [index, factor] : llvm::enumerate(rule.factors)) {
    // A unit factor has nothing to split.
    if (!factor.isShardable() || factor.size == 1)
      continue;
    actions.push_back(
        Action{Action::Kind::Shard, static_cast<unsigned>(index), 0, {}});
    if (headTail && !factor.isReduction() && !factor.needsEvenSplit)
      actions.push_back(Action{
          Action::Kind::Shard, static_cast<unsigned>(index), 0, {}, true});
  }
  for (auto [index, flow] : llvm::enumerate(rule.partialFlows))
    for (ReductionKind kind : flow.kinds)
      actions.push_back(
          Action{Action::Kind::Flow, 0, static_cast<unsigned>(index), kind});
  return actions;
}

/// The tensor dim of `factors` indexed by `factor`: -1 when none, -2 when
/// several (the factor then cannot be sharded).
int64_t findDim(const TensorFactors &factors, unsigned factor) {
  int64_t found = -1;
  for (auto [dim, indexing] : llvm::enumerate(factors)) {
    if (indexing != factor)
      continue;
    if (found >= 0)
      return -2;
    found = static_cast<int64_t>(dim);
  }
  return found;
}

/// Calls `visit` with every way to pick one of `choices` options for each
/// of `slots` positions, the last position changing fastest.
void forEachCombination(size_t choices, int64_t slots,
                        llvm::function_ref<void(ArrayRef<size_t>)> visit) {
  std::vector<size_t> counter(slots, 0);
  while (true) {
    visit(counter);
    int64_t slot = slots - 1;
    while (slot >= 0 && ++counter[slot] == choices)
      counter[slot--] = 0;
    if (slot < 0)
      return;
  }
}

layout::Placement partial(ReductionKind kind) {
  return layout::Placement::partial(toLayoutReduceKind(kind));
}

/// Builds the strategy for one action per mesh dim; false when invalid.
bool buildStrategy(const ShardingRule &rule, const layout::Mesh &mesh,
                   const std::vector<Action> &perMeshDim,
                   const ComputeParams &params, Strategy &strategy) {
  int64_t meshRank = mesh.rank();
  strategy.operands.assign(rule.operands.size(),
                           Layout(meshRank, layout::Placement::replicate()));
  strategy.results.assign(rule.results.size(),
                          Layout(meshRank, layout::Placement::replicate()));
  std::vector<int64_t> shards(rule.factors.size(), 1);
  // The mesh dim splitting each factor head-tail, or -1.
  std::vector<int64_t> headTailOf(rule.factors.size(), -1);
  double penalty = 0.0;
  for (int64_t meshDim = 0; meshDim < meshRank; ++meshDim) {
    const Action &action = perMeshDim[meshDim];
    if (action.kind == Action::Kind::Replicate)
      continue;
    if (action.kind == Action::Kind::Flow) {
      const PartialFlow &flow = rule.partialFlows[action.flow];
      for (unsigned operand : flow.operands)
        strategy.operands[operand][meshDim] = partial(action.reduction);
      for (Layout &result : strategy.results)
        result[meshDim] = partial(action.reduction);
      if (!flow.operands.empty())
        penalty += params.partialFlowPenaltyUs;
      continue;
    }
    unsigned factor = action.factor;
    const ShardingFactor &info = rule.factors[factor];
    // A head-tail factor is split over its one mesh dim only.
    if (headTailOf[factor] >= 0 || (action.headTail && shards[factor] != 1))
      return false;
    if (action.headTail)
      headTailOf[factor] = meshDim;
    shards[factor] *= mesh.dimSize(meshDim);
    auto shard = [&](int64_t dim) {
      return action.headTail ? layout::Placement::shardHeadTail(dim)
                             : layout::Placement::shard(dim);
    };
    for (auto [index, factors] : llvm::enumerate(rule.operands)) {
      int64_t dim = findDim(factors, factor);
      if (dim == -2)
        return false;
      if (dim >= 0)
        strategy.operands[index][meshDim] = shard(dim);
      else if (info.isReduction() &&
               llvm::is_contained(rule.initOperands, index))
        strategy.operands[index][meshDim] = partial(*info.combiner);
    }
    for (auto [index, factors] : llvm::enumerate(rule.results)) {
      int64_t dim = findDim(factors, factor);
      if (dim == -2)
        return false;
      if (dim >= 0)
        strategy.results[index][meshDim] = shard(dim);
      else if (info.isReduction())
        strategy.results[index][meshDim] = partial(*info.combiner);
      else
        // A parallel factor missing from a result would leave each rank
        // with only part of that result.
        return false;
    }
  }
  double points = 1.0;
  for (auto [index, factor] : llvm::enumerate(rule.factors)) {
    int64_t count = shards[index];
    bool headTail = headTailOf[index] >= 0;
    // Head-tail shards need a static size (their pieces are placed at
    // compile time); torch.chunk's uneven pieces are fine.
    if (headTail ? mlir::ShapedType::isDynamic(factor.size)
                 : !factor.canSplit(count))
      return false;
    int64_t size = mlir::ShapedType::isDynamic(factor.size)
                       ? params.dynamicSizeEstimate
                       : factor.size;
    // The largest local piece bounds the step.
    points *=
        static_cast<double>(headTail ? layout::maxHeadTailSize(size, count)
                                     : layout::ceilDiv(size, count));
  }
  strategy.costUs =
      (rule.operands.empty() ? 0.0 : points * params.usPerPoint) + penalty;
  return true;
}
} // namespace

std::vector<Strategy> dtensor::enumerateStrategies(const ShardingRule &rule,
                                                   const layout::Mesh &mesh,
                                                   const ComputeParams &params) {
  std::vector<Action> actions = getActions(rule, /*headTail=*/false);
  std::vector<Action> headTailActions = getActions(rule, /*headTail=*/true);
  // Mesh dims allowing head-tail shards choose from the longer list; the
  // combinations run over the longest list and skip picks past a shorter
  // one.
  auto actionsOf = [&](int64_t meshDim) -> const std::vector<Action> & {
    bool allowed =
        meshDim < static_cast<int64_t>(params.headTailMeshDims.size()) &&
        params.headTailMeshDims[meshDim];
    return allowed ? headTailActions : actions;
  };
  size_t most = 0;
  for (int64_t meshDim = 0; meshDim < mesh.rank(); ++meshDim)
    most = std::max(most, actionsOf(meshDim).size());
  std::vector<Strategy> strategies;
  forEachCombination(most, mesh.rank(), [&](ArrayRef<size_t> pick) {
    std::vector<Action> perMeshDim;
    for (auto [meshDim, index] : llvm::enumerate(pick)) {
      const std::vector<Action> &choices = actionsOf(meshDim);
      if (index >= choices.size())
        return;
      perMeshDim.push_back(choices[index]);
    }
    Strategy strategy;
    if (buildStrategy(rule, mesh, perMeshDim, params, strategy))
      strategies.push_back(std::move(strategy));
  });
  return strategies;
}

std::vector<Layout>
dtensor::enumerateShardLayouts(const std::vector<int64_t> &shape,
                               const layout::Mesh &mesh) {
  // Per mesh dim: replicate, or shard one non-unit tensor dim.
  std::vector<layout::Placement> choices{layout::Placement::replicate()};
  for (auto [dim, size] : llvm::enumerate(shape))
    if (size != 1)
      choices.push_back(layout::Placement::shard(static_cast<int64_t>(dim)));
  std::vector<Layout> layouts;
  forEachCombination(choices.size(), mesh.rank(), [&](ArrayRef<size_t> pick) {
    Layout layout;
    for (size_t index : pick)
      layout.push_back(choices[index]);
    layouts.push_back(std::move(layout));
  });
  return layouts;
}

//===- RedistributePlan.cpp - Planning redistribute steps -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Planner/RedistributePlan.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <map>

namespace dtensor::layout {

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

namespace {
/// A step with the fields its kind uses; the others keep their defaults.
RedistributeStep makeStep(RedistributeStep::Kind kind,
                          std::vector<int64_t> meshDims, int64_t dim = 0,
                          int64_t toDim = 0,
                          ReduceKind reduce = ReduceKind::Sum) {
  RedistributeStep step;
  step.kind = kind;
  step.meshDims = std::move(meshDims);
  step.dim = dim;
  step.toDim = toDim;
  step.reduce = reduce;
  return step;
}
} // namespace

RedistributeStep RedistributeStep::allGather(std::vector<int64_t> meshDims,
                                             int64_t dim) {
  return makeStep(Kind::AllGather, std::move(meshDims), dim);
}

RedistributeStep RedistributeStep::allReduce(std::vector<int64_t> meshDims,
                                             ReduceKind reduce) {
  return makeStep(Kind::AllReduce, std::move(meshDims), 0, 0, reduce);
}

RedistributeStep RedistributeStep::reduceScatter(std::vector<int64_t> meshDims,
                                                 ReduceKind reduce,
                                                 int64_t dim) {
  return makeStep(Kind::ReduceScatter, std::move(meshDims), dim, 0, reduce);
}

RedistributeStep RedistributeStep::allToAll(std::vector<int64_t> meshDims,
                                            int64_t fromDim, int64_t toDim) {
  return makeStep(Kind::AllToAll, std::move(meshDims), fromDim, toDim);
}

RedistributeStep RedistributeStep::chunk(std::vector<int64_t> meshDims,
                                         int64_t dim) {
  return makeStep(Kind::Chunk, std::move(meshDims), dim);
}

RedistributeStep RedistributeStep::allGatherHeadTail(int64_t meshDim,
                                                     int64_t dim) {
  RedistributeStep step = makeStep(Kind::AllGather, {meshDim}, dim);
  step.headTail = true;
  return step;
}

RedistributeStep RedistributeStep::chunkHeadTail(int64_t meshDim, int64_t dim) {
  RedistributeStep step = makeStep(Kind::Chunk, {meshDim}, dim);
  step.headTail = true;
  return step;
}

RedistributeStep RedistributeStep::markPartial(std::vector<int64_t> meshDims,
                                               ReduceKind reduce) {
  return makeStep(Kind::MarkPartial, std::move(meshDims), 0, 0, reduce);
}

RedistributeStep RedistributeStep::padPartial(std::vector<int64_t> meshDims,
                                              int64_t dim) {
  return makeStep(Kind::PadPartial, std::move(meshDims), dim, 0,
                  ReduceKind::Sum);
}

namespace {
using Kind = RedistributeStep::Kind;

bool usesDim(Kind kind) {
  return kind == Kind::AllGather || kind == Kind::ReduceScatter ||
         kind == Kind::AllToAll || kind == Kind::Chunk ||
         kind == Kind::PadPartial;
}

bool usesReduce(Kind kind) {
  return kind == Kind::AllReduce || kind == Kind::ReduceScatter ||
         kind == Kind::MarkPartial || kind == Kind::PadPartial;
}

std::string strMeshDims(const std::vector<int64_t> &meshDims) {
  std::string out = "mesh_dims=[";
  for (size_t i = 0; i < meshDims.size(); ++i) {
    if (i)
      out += ",";
    out += std::to_string(meshDims[i]);
  }
  return out + "]";
}
} // namespace

bool operator==(const RedistributeStep &lhs, const RedistributeStep &rhs) {
  if (lhs.kind != rhs.kind || lhs.meshDims != rhs.meshDims)
    return false;
  if (usesDim(lhs.kind) && lhs.dim != rhs.dim)
    return false;
  if (lhs.kind == Kind::AllToAll && lhs.toDim != rhs.toDim)
    return false;
  if ((lhs.kind == Kind::AllGather || lhs.kind == Kind::Chunk) &&
      lhs.headTail != rhs.headTail)
    return false;
  return !usesReduce(lhs.kind) || lhs.reduce == rhs.reduce;
}

std::string str(const RedistributeStep &step) {
  std::string dims = strMeshDims(step.meshDims);
  std::string reduce = stringifyReduceKind(step.reduce);
  std::string dim = std::to_string(step.dim);
  if (step.headTail &&
      (step.kind == Kind::AllGather || step.kind == Kind::Chunk))
    dim += ", head_tail";
  switch (step.kind) {
  case Kind::AllGather:
    return "all_gather(" + dims + ", dim=" + dim + ")";
  case Kind::AllReduce:
    return "all_reduce(" + reduce + ", " + dims + ")";
  case Kind::ReduceScatter:
    return "reduce_scatter(" + reduce + ", " + dims + ", dim=" + dim + ")";
  case Kind::AllToAll:
    return "all_to_all(" + dims + ", from_dim=" + dim +
           ", to_dim=" + std::to_string(step.toDim) + ")";
  case Kind::Chunk:
    return "chunk(" + dims + ", dim=" + dim + ")";
  case Kind::MarkPartial:
    return "mark_partial(" + reduce + ", " + dims + ")";
  case Kind::PadPartial:
    return "pad_partial(" + dims + ", dim=" + dim + ")";
  }
  return ""; // Unreachable.
}

//===----------------------------------------------------------------------===//
// Validity, effect and cost of one step
//===----------------------------------------------------------------------===//

namespace {

/// Whether reducing with `a` and then `b` over two mesh dims gives the same
/// value as the other order. avg is a scaled sum, so it commutes with sum.
bool commute(ReduceKind a, ReduceKind b) {
  auto linear = [](ReduceKind k) {
    return k == ReduceKind::Sum || k == ReduceKind::Avg;
  };
  return a == b || (linear(a) && linear(b));
}

/// True when `suffix` is a non-empty tail of `dims`.
bool isSuffix(const std::vector<int64_t> &dims,
              const std::vector<int64_t> &suffix) {
  return !suffix.empty() && suffix.size() <= dims.size() &&
         std::equal(suffix.begin(), suffix.end(),
                    dims.end() - static_cast<std::ptrdiff_t>(suffix.size()));
}

/// True when every dim of `outer` precedes `first`, so that mesh dims
/// starting at `first` can be nested inside them.
bool allBefore(const std::vector<int64_t> &outer, int64_t first) {
  return std::all_of(outer.begin(), outer.end(),
                     [&](int64_t d) { return d < first; });
}

/// True when every listed mesh dim holds exactly `placement`.
bool allAre(const std::vector<Placement> &layout,
            const std::vector<int64_t> &meshDims, const Placement &placement) {
  return std::all_of(meshDims.begin(), meshDims.end(),
                     [&](int64_t d) { return layout[d] == placement; });
}

/// Reducing `meshDims` with `kind` now keeps the global value only if every
/// other pending Partial that the ascending-order convention applies
/// earlier commutes with `kind`.
bool reductionReady(const std::vector<Placement> &layout,
                    const std::vector<int64_t> &meshDims, ReduceKind kind) {
  int64_t last = meshDims.back();
  for (int64_t d = 0; d < last; ++d) {
    if (!layout[d].isPartial() ||
        std::find(meshDims.begin(), meshDims.end(), d) != meshDims.end())
      continue;
    if (!commute(layout[d].reduce, kind))
      return false;
  }
  return true;
}

} // namespace

bool canApplyStep(const std::vector<Placement> &layout,
                  const RedistributeStep &step, const Mesh &mesh,
                  int64_t tensorRank) {
  assert(static_cast<int64_t>(layout.size()) == mesh.rank() &&
         "one placement per mesh dim");
  const std::vector<int64_t> &dims = step.meshDims;
  if (dims.empty())
    return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0 || dims[i] >= mesh.rank() || (i && dims[i - 1] >= dims[i]))
      return false;
  auto validDim = [&](int64_t d) { return d >= 0 && d < tensorRank; };
  if (usesDim(step.kind) && !validDim(step.dim))
    return false;
  if (step.headTail && step.kind != Kind::AllGather && step.kind != Kind::Chunk)
    return false;
  // Head-tail shards are made and consumed by the head-tail steps only, and
  // nest with no other mesh dim.
  if (step.headTail)
    return dims.size() == 1 &&
           (step.kind == Kind::AllGather
                ? layout[dims[0]] == Placement::shardHeadTail(step.dim)
                : layout[dims[0]].isReplicate() &&
                      shardingMeshDims(layout, step.dim).empty());
  bool consumesHeadTail = std::any_of(dims.begin(), dims.end(), [&](int64_t d) {
    return layout[d].isHeadTail();
  });
  if (consumesHeadTail ||
      (usesDim(step.kind) && headTailMeshDim(layout, step.dim)) ||
      (step.kind == Kind::AllToAll && validDim(step.toDim) &&
       headTailMeshDim(layout, step.toDim)))
    return false;

  switch (step.kind) {
  case Kind::AllGather:
    return isSuffix(shardingMeshDims(layout, step.dim), dims);
  case Kind::AllReduce:
    return allAre(layout, dims, Placement::partial(step.reduce)) &&
           reductionReady(layout, dims, step.reduce);
  case Kind::ReduceScatter:
    return allAre(layout, dims, Placement::partial(step.reduce)) &&
           reductionReady(layout, dims, step.reduce) &&
           allBefore(shardingMeshDims(layout, step.dim), dims.front());
  case Kind::AllToAll:
    return validDim(step.toDim) && step.toDim != step.dim &&
           isSuffix(shardingMeshDims(layout, step.dim), dims) &&
           allBefore(shardingMeshDims(layout, step.toDim), dims.front());
  case Kind::Chunk:
    return allAre(layout, dims, Placement::replicate()) &&
           allBefore(shardingMeshDims(layout, step.dim), dims.front());
  case Kind::MarkPartial:
    return allAre(layout, dims, Placement::replicate());
  case Kind::PadPartial:
    return step.reduce == ReduceKind::Sum &&
           isSuffix(shardingMeshDims(layout, step.dim), dims);
  }
  return false; // Unreachable.
}

std::vector<Placement> applyStep(const std::vector<Placement> &layout,
                                 const RedistributeStep &step, const Mesh &mesh,
                                 int64_t tensorRank) {
  assert(canApplyStep(layout, step, mesh, tensorRank) &&
         "step not valid on this layout");
  (void)mesh;
  (void)tensorRank;
  Placement after;
  switch (step.kind) {
  case Kind::AllGather:
  case Kind::AllReduce:
    after = Placement::replicate();
    break;
  case Kind::ReduceScatter:
  case Kind::Chunk:
    after = step.headTail ? Placement::shardHeadTail(step.dim)
                          : Placement::shard(step.dim);
    break;
  case Kind::AllToAll:
    after = Placement::shard(step.toDim);
    break;
  case Kind::MarkPartial:
  case Kind::PadPartial:
    after = Placement::partial(step.reduce);
    break;
  }
  std::vector<Placement> result = layout;
  for (int64_t d : step.meshDims)
    result[d] = after;
  return result;
}

double stepTimeUs(const std::vector<int64_t> &globalShape, int64_t elementBytes,
                  const std::vector<Placement> &layout,
                  const RedistributeStep &step, const Mesh &mesh,
                  const CostParams &params) {
  int64_t tensorRank = static_cast<int64_t>(globalShape.size());
  assert(canApplyStep(layout, step, mesh, tensorRank) &&
         "step not valid on this layout");
  int64_t groupSize = mesh.groupSize(step.meshDims);
  // A group of one changes no data: like collectiveTimeUs, price it at 0.
  if (groupSize == 1)
    return 0.0;
  double bytes = localBytes(globalShape, elementBytes, layout, mesh, params);
  switch (step.kind) {
  case Kind::AllGather:
    return collectiveTimeUs(Collective::AllGather, step.meshDims, groupSize,
                            bytes, params);
  case Kind::AllReduce:
    return collectiveTimeUs(Collective::AllReduce, step.meshDims, groupSize,
                            bytes, params);
  case Kind::ReduceScatter:
    return collectiveTimeUs(Collective::ReduceScatter, step.meshDims, groupSize,
                            bytes, params);
  case Kind::AllToAll:
    return collectiveTimeUs(Collective::AllToAll, step.meshDims, groupSize,
                            bytes, params);
  case Kind::Chunk: {
    // Copying out the kept piece; its largest instance bounds the time.
    std::vector<Placement> after = applyStep(layout, step, mesh, tensorRank);
    return localTimeUs(
        localBytes(globalShape, elementBytes, after, mesh, params), params);
  }
  case Kind::MarkPartial:
    // Only sum rewrites data (zeroing on all members but one).
    return step.reduce == ReduceKind::Sum ? localTimeUs(bytes, params) : 0.0;
  case Kind::PadPartial: {
    // Filling the joined buffer (zeros and this member's piece).
    std::vector<Placement> after = applyStep(layout, step, mesh, tensorRank);
    return localTimeUs(
        localBytes(globalShape, elementBytes, after, mesh, params), params);
  }
  }
  return 0.0; // Unreachable.
}

std::string stepLinkName(const std::vector<int64_t> &globalShape,
                         int64_t elementBytes,
                         const std::vector<Placement> &layout,
                         const RedistributeStep &step, const Mesh &mesh,
                         const CostParams &params) {
  if (step.isLocal() || params.meshDimLinks.empty())
    return "";
  Collective collective = Collective::AllGather;
  switch (step.kind) {
  case Kind::AllReduce:
    collective = Collective::AllReduce;
    break;
  case Kind::ReduceScatter:
    collective = Collective::ReduceScatter;
    break;
  case Kind::AllToAll:
    collective = Collective::AllToAll;
    break;
  default:
    break;
  }
  const LinkCost *link = slowestLink(
      collective, step.meshDims, mesh.groupSize(step.meshDims),
      localBytes(globalShape, elementBytes, layout, mesh, params), params);
  return link ? link->name : "";
}

//===----------------------------------------------------------------------===//
// Search
//===----------------------------------------------------------------------===//

namespace {

constexpr ReduceKind kAllReduceKinds[] = {ReduceKind::Sum, ReduceKind::Avg,
                                          ReduceKind::Max, ReduceKind::Min};

/// Cost comparison that treats values within rounding noise as equal, so
/// that paths summing the same steps in another order tie.
bool lessCost(double a, double b) {
  double scale = std::max({1.0, std::fabs(a), std::fabs(b)});
  return a < b - 1e-9 * scale;
}

/// Lexicographic (cost, step count) order of search labels.
bool betterLabel(double costA, int64_t stepsA, double costB, int64_t stepsB) {
  if (lessCost(costA, costB))
    return true;
  if (lessCost(costB, costA))
    return false;
  return stepsA < stepsB;
}

/// Map key of a layout: one small integer per mesh dim.
std::vector<int64_t> layoutKey(const std::vector<Placement> &layout) {
  std::vector<int64_t> key;
  key.reserve(layout.size());
  for (const Placement &p : layout) {
    if (p.isReplicate())
      key.push_back(0);
    else if (p.isPartial())
      key.push_back(1 + static_cast<int64_t>(p.reduce));
    else if (p.isHeadTail())
      key.push_back(-1 - p.dim);
    else
      key.push_back(1 + static_cast<int64_t>(std::size(kAllReduceKinds)) +
                    p.dim);
  }
  return key;
}

/// Every step valid on `layout`, in a fixed order (mesh dim subsets by
/// increasing bit mask; within one, the step kinds in declaration order).
/// Partial kinds outside `kinds` are never introduced: a Partial that
/// neither endpoint has must be reduced away again, by a collective doing
/// what a local Chunk (or no step at all) does.
/// A head-tail Chunk is tried only where `target` is head-tail: nothing else
/// needs one.
std::vector<RedistributeStep> validSteps(const std::vector<Placement> &layout,
                                         const Mesh &mesh, int64_t tensorRank,
                                         const std::vector<ReduceKind> &kinds,
                                         const std::vector<Placement> &target) {
  std::vector<RedistributeStep> steps;
  int64_t meshRank = mesh.rank();
  auto consider = [&](RedistributeStep step) {
    if (canApplyStep(layout, step, mesh, tensorRank))
      steps.push_back(std::move(step));
  };
  for (int64_t mask = 1; mask < (int64_t{1} << meshRank); ++mask) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < meshRank; ++d)
      if (mask & (int64_t{1} << d))
        dims.push_back(d);
    // A step consumes one placement on all its mesh dims; skip the rest.
    const Placement &first = layout[dims.front()];
    if (!allAre(layout, dims, first))
      continue;
    if (first.isHeadTail()) {
      if (dims.size() == 1)
        consider(RedistributeStep::allGatherHeadTail(dims[0], first.dim));
    } else if (first.isShard()) {
      consider(RedistributeStep::allGather(dims, first.dim));
      if (std::find(kinds.begin(), kinds.end(), ReduceKind::Sum) != kinds.end())
        consider(RedistributeStep::padPartial(dims, first.dim));
      for (int64_t to = 0; to < tensorRank; ++to)
        if (to != first.dim)
          consider(RedistributeStep::allToAll(dims, first.dim, to));
    } else if (first.isPartial()) {
      consider(RedistributeStep::allReduce(dims, first.reduce));
      for (int64_t d = 0; d < tensorRank; ++d)
        consider(RedistributeStep::reduceScatter(dims, first.reduce, d));
    } else {
      for (int64_t d = 0; d < tensorRank; ++d)
        consider(RedistributeStep::chunk(dims, d));
      if (dims.size() == 1 && target[dims[0]].isHeadTail())
        consider(RedistributeStep::chunkHeadTail(dims[0], target[dims[0]].dim));
      for (ReduceKind kind : kinds)
        consider(RedistributeStep::markPartial(dims, kind));
    }
  }
  return steps;
}

/// A layout reached by the search and its best known path.
struct SearchNode {
  explicit SearchNode(std::vector<Placement> layout)
      : layout(std::move(layout)) {}

  std::vector<Placement> layout;
  double costUs = 0.0;
  int64_t steps = 0;
  /// Index of the predecessor node; -1 for the source.
  int64_t parent = -1;
  RedistributeStep via;
  double viaUs = 0.0;
  bool settled = false;
};

} // namespace

RedistributePlan planRedistribute(const std::vector<int64_t> &globalShape,
                                  int64_t elementBytes,
                                  const std::vector<Placement> &source,
                                  const std::vector<Placement> &target,
                                  const Mesh &mesh, const CostParams &params) {
  int64_t tensorRank = static_cast<int64_t>(globalShape.size());
  assert(mesh.validate().empty() && "invalid mesh");
  assert(elementBytes > 0 && "element size must be positive");
  assert(static_cast<int64_t>(source.size()) == mesh.rank() &&
         static_cast<int64_t>(target.size()) == mesh.rank() &&
         "one placement per mesh dim");
#ifndef NDEBUG
  for (const auto *layout : {&source, &target})
    for (const Placement &p : *layout)
      assert((!p.isShard() || (p.dim >= 0 && p.dim < tensorRank)) &&
             "placements must be normalised shards of the tensor's dims");
#endif

  RedistributePlan plan;
  if (source == target)
    return plan;

  std::vector<ReduceKind> kinds;
  for (ReduceKind kind : kAllReduceKinds) {
    auto has = [&](const std::vector<Placement> &layout) {
      return std::find(layout.begin(), layout.end(),
                       Placement::partial(kind)) != layout.end();
    };
    if (has(source) || has(target))
      kinds.push_back(kind);
  }

  // Uniform-cost search. The graph has at most (5 + rank)^meshRank nodes,
  // so a linear scan for the next node is simpler than a heap and makes the
  // tie-breaking (discovery order) explicit.
  std::vector<SearchNode> nodes;
  std::map<std::vector<int64_t>, int64_t> indexOf;
  nodes.emplace_back(source);
  indexOf[layoutKey(source)] = 0;
  int64_t reached = -1;
  while (true) {
    int64_t best = -1;
    for (int64_t i = 0; i < static_cast<int64_t>(nodes.size()); ++i) {
      const SearchNode &n = nodes[i];
      if (!n.settled &&
          (best < 0 || betterLabel(n.costUs, n.steps, nodes[best].costUs,
                                   nodes[best].steps)))
        best = i;
    }
    // Every layout is reachable (reduce, gather, then chunk and mark).
    assert(best >= 0 && "target unreachable");
    nodes[best].settled = true;
    if (nodes[best].layout == target) {
      reached = best;
      break;
    }
    std::vector<Placement> layout = nodes[best].layout;
    for (RedistributeStep &step :
         validSteps(layout, mesh, tensorRank, kinds, target)) {
      double us =
          stepTimeUs(globalShape, elementBytes, layout, step, mesh, params);
      double cost = nodes[best].costUs + us;
      int64_t steps = nodes[best].steps + 1;
      std::vector<Placement> next = applyStep(layout, step, mesh, tensorRank);
      auto [it, inserted] = indexOf.try_emplace(
          layoutKey(next), static_cast<int64_t>(nodes.size()));
      if (inserted) {
        nodes.emplace_back(std::move(next));
      } else {
        const SearchNode &old = nodes[it->second];
        if (old.settled || !betterLabel(cost, steps, old.costUs, old.steps))
          continue;
      }
      SearchNode &node = nodes[it->second];
      node.costUs = cost;
      node.steps = steps;
      node.parent = best;
      node.via = std::move(step);
      node.viaUs = us;
    }
  }

  for (int64_t i = reached; nodes[i].parent >= 0; i = nodes[i].parent) {
    plan.steps.push_back(nodes[i].via);
    plan.layouts.push_back(nodes[i].layout);
    plan.stepUs.push_back(nodes[i].viaUs);
  }
  std::reverse(plan.steps.begin(), plan.steps.end());
  std::reverse(plan.layouts.begin(), plan.layouts.end());
  std::reverse(plan.stepUs.begin(), plan.stepUs.end());
  for (double us : plan.stepUs)
    plan.totalUs += us;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    plan.stepLinks.push_back(stepLinkName(globalShape, elementBytes,
                                          i ? plan.layouts[i - 1] : source,
                                          plan.steps[i], mesh, params));
  return plan;
}

std::string str(const RedistributePlan &plan) {
  std::string out;
  char buffer[64];
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    std::snprintf(buffer, sizeof(buffer), "%.4g us", plan.stepUs[i]);
    out += str(plan.steps[i]) + " -> " + str(plan.layouts[i]) + "  " + buffer;
    if (i < plan.stepLinks.size() && !plan.stepLinks[i].empty())
      out += " over " + plan.stepLinks[i];
    out += "\n";
  }
  std::snprintf(buffer, sizeof(buffer), "%.4g us", plan.totalUs);
  return out + "total " + buffer + "\n";
}

} // namespace dtensor::layout

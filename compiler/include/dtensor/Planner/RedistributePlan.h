//===- RedistributePlan.h - Planning redistribute steps ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Plans how to turn a tensor laid out one way (one placement per mesh dim)
// into another: a sequence of collectives and local steps, each valid on the
// layout it is applied to, priced with the CommCost model, and cheapest
// overall. The search is a uniform-cost (Dijkstra) search over layouts.
//
// Step semantics. Every step acts over an ordered list of mesh dims (always
// ascending here). A group is the set of ranks whose coordinates differ only
// on those dims, ordered row-major over them (first listed most
// significant), exactly like the local collectives of the IR. Several mesh
// dims sharding one tensor dim nest in ascending mesh-dim order (outermost
// first); a step over several mesh dims splits or joins along the same
// nesting, i.e. member i of a group holds the nested torch.chunk piece given
// by its coordinates, which is not the flat torch.chunk piece i of
// groupSize pieces when the split is uneven.
//
// Mixed Partial placements. When several mesh dims are Partial with
// reductions that do not commute (sum/avg versus max, max versus min), the
// global value is defined as the reductions applied in ascending mesh-dim
// order: mesh dim 0 first. Reductions are only planned in orders that give
// that value.
//
// Pure C++17; preconditions are checked with assert().
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PLANNER_REDISTRIBUTEPLAN_H
#define DTENSOR_PLANNER_REDISTRIBUTEPLAN_H

#include "dtensor/Layout/LayoutMath.h"
#include "dtensor/Planner/CommCost.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::layout {

/// One step of a redistribute, acting over `meshDims` (ascending, non-empty).
struct RedistributeStep {
  /// What the step does to the placements of `meshDims`.
  enum class Kind {
    /// Shard(dim) -> Replicate: concatenate the group's pieces in group
    /// order. `meshDims` must be the innermost mesh dims sharding `dim`.
    AllGather,
    /// Partial(reduce) -> Replicate: reduce elementwise over the group
    /// (avg divides the sum by the group size).
    AllReduce,
    /// Partial(reduce) -> Shard(dim): reduce, keep this member's piece.
    /// Every mesh dim already sharding `dim` must precede `meshDims`.
    ReduceScatter,
    /// Shard(dim) -> Shard(toDim): split along `toDim`, exchange, join along
    /// `dim`. `meshDims` must be the innermost mesh dims sharding `dim`, and
    /// every mesh dim already sharding `toDim` must precede them.
    AllToAll,
    /// Replicate -> Shard(dim) without communication: keep this member's
    /// piece. Nesting rule as for ReduceScatter.
    Chunk,
    /// Replicate -> Partial(reduce) without communication: for sum, group
    /// member 0 keeps the data and the others zero it; for avg, max and min
    /// the data is left as it is.
    MarkPartial,
    /// Shard(dim) -> Partial(sum) without communication: each member puts
    /// its piece at its place in zeros of the joined size (what
    /// DTensor's Shard -> Partial does). `meshDims` must be the innermost
    /// mesh dims sharding `dim`, as for AllGather; `reduce` is Sum.
    PadPartial,
  };

  /// Which step this is.
  Kind kind = Kind::AllGather;
  /// The mesh dims the step acts over, ascending.
  std::vector<int64_t> meshDims;
  /// The tensor dim gathered, scattered, chunked or padded; for AllToAll the
  /// dim sharded before the step (the concat dim). Unused otherwise.
  int64_t dim = 0;
  /// AllToAll only: the dim sharded after the step (the split dim).
  int64_t toDim = 0;
  /// The reduction of AllReduce, ReduceScatter, MarkPartial and PadPartial
  /// (always Sum).
  ReduceKind reduce = ReduceKind::Sum;
  /// AllGather and Chunk only, over one mesh dim: the head-tail split
  /// (Placement::headTail). A head-tail AllGather turns Shard(dim,
  /// head_tail) into Replicate: the group's pieces, gathered in group order,
  /// reordered into the dim's global order. A head-tail Chunk turns
  /// Replicate into Shard(dim, head_tail) when no mesh dim shards `dim`.
  /// No other step consumes or produces a head-tail shard.
  bool headTail = false;

  /// Shard(dim) -> Replicate over `meshDims`.
  static RedistributeStep allGather(std::vector<int64_t> meshDims, int64_t dim);
  /// Partial(reduce) -> Replicate over `meshDims`.
  static RedistributeStep allReduce(std::vector<int64_t> meshDims,
                                    ReduceKind reduce);
  /// Partial(reduce) -> Shard(dim) over `meshDims`.
  static RedistributeStep reduceScatter(std::vector<int64_t> meshDims,
                                        ReduceKind reduce, int64_t dim);
  /// Shard(fromDim) -> Shard(toDim) over `meshDims`.
  static RedistributeStep allToAll(std::vector<int64_t> meshDims,
                                   int64_t fromDim, int64_t toDim);
  /// Replicate -> Shard(dim) over `meshDims`, locally.
  static RedistributeStep chunk(std::vector<int64_t> meshDims, int64_t dim);
  /// Shard(dim, head_tail) -> Replicate over `meshDim`.
  static RedistributeStep allGatherHeadTail(int64_t meshDim, int64_t dim);
  /// Replicate -> Shard(dim, head_tail) over `meshDim`, locally.
  static RedistributeStep chunkHeadTail(int64_t meshDim, int64_t dim);
  /// Replicate -> Partial(reduce) over `meshDims`, locally.
  static RedistributeStep markPartial(std::vector<int64_t> meshDims,
                                      ReduceKind reduce);
  /// Shard(dim) -> Partial(sum) over `meshDims`, locally.
  static RedistributeStep padPartial(std::vector<int64_t> meshDims,
                                     int64_t dim);

  /// True for the steps that need no communication (Chunk, MarkPartial,
  /// PadPartial).
  bool isLocal() const {
    return kind == Kind::Chunk || kind == Kind::MarkPartial ||
           kind == Kind::PadPartial;
  }

  /// Equality on the fields meaningful for the kind.
  friend bool operator==(const RedistributeStep &lhs,
                         const RedistributeStep &rhs);
  /// Negation of operator==.
  friend bool operator!=(const RedistributeStep &lhs,
                         const RedistributeStep &rhs) {
    return !(lhs == rhs);
  }
};

/// Diagnostic rendering in the IR's vocabulary, e.g.
/// "all_gather(mesh_dims=[0,1], dim=0)", "all_reduce(sum, mesh_dims=[1])",
/// "reduce_scatter(avg, mesh_dims=[0], dim=1)",
/// "all_to_all(mesh_dims=[1], from_dim=1, to_dim=0)",
/// "chunk(mesh_dims=[0], dim=1)", "chunk(mesh_dims=[0], dim=1, head_tail)",
/// "mark_partial(max, mesh_dims=[0])",
/// "pad_partial(mesh_dims=[0], dim=1)".
std::string str(const RedistributeStep &step);

/// True when `step` is valid on `layout` (normalised, one placement per mesh
/// dim of `mesh`) for a tensor of rank `tensorRank`: its mesh dims exist,
/// are ascending and hold the placements the step consumes, the nesting
/// rules hold, and no Partial dim that must be reduced first (see the file
/// comment) is still pending.
bool canApplyStep(const std::vector<Placement> &layout,
                  const RedistributeStep &step, const Mesh &mesh,
                  int64_t tensorRank);

/// The layout after `step`; asserts canApplyStep.
std::vector<Placement> applyStep(const std::vector<Placement> &layout,
                                 const RedistributeStep &step, const Mesh &mesh,
                                 int64_t tensorRank);

/// Estimated time of `step` applied to a tensor of `globalShape` with
/// elements of `elementBytes` laid out as `layout` (a collective prices the
/// current largest local shard; Chunk prices the kept piece; MarkPartial(sum)
/// prices a fill of the buffer, the other MarkPartials are free; PadPartial
/// prices a fill of the joined buffer). Asserts
/// canApplyStep.
double stepTimeUs(const std::vector<int64_t> &globalShape, int64_t elementBytes,
                  const std::vector<Placement> &layout,
                  const RedistributeStep &step, const Mesh &mesh,
                  const CostParams &params);

/// The link stepTimeUs prices `step` with (the slowest of its mesh dims,
/// see collectiveTimeUs), or "" for a local step or without
/// params.meshDimLinks.
std::string stepLinkName(const std::vector<int64_t> &globalShape,
                         int64_t elementBytes,
                         const std::vector<Placement> &layout,
                         const RedistributeStep &step, const Mesh &mesh,
                         const CostParams &params);

/// A planned redistribute.
struct RedistributePlan {
  /// The steps, in execution order; empty when source equals target.
  std::vector<RedistributeStep> steps;
  /// layouts[i] is the layout after steps[i]; the last one is the target.
  std::vector<std::vector<Placement>> layouts;
  /// stepUs[i] is stepTimeUs of steps[i] on the layout before it.
  std::vector<double> stepUs;
  /// Sum of stepUs.
  double totalUs = 0.0;
  /// stepLinks[i] is stepLinkName of steps[i]: the link class it was
  /// priced with, "" when none (no topology, or a local step).
  std::vector<std::string> stepLinks;
};

/// The cheapest sequence of steps turning `source` into `target` (both
/// normalised, one placement per mesh dim of `mesh`) for a tensor of
/// `globalShape` (kDynamic dims allowed; they are priced at
/// params.dynamicDimEstimate) with `elementBytes`-byte elements. Among plans
/// of equal cost the one with fewer steps wins; remaining ties are broken by
/// a fixed move order, so the result is deterministic.
RedistributePlan planRedistribute(const std::vector<int64_t> &globalShape,
                                  int64_t elementBytes,
                                  const std::vector<Placement> &source,
                                  const std::vector<Placement> &target,
                                  const Mesh &mesh,
                                  const CostParams &params = CostParams());

/// Multi-line rendering: one line per step with the layout after it, its
/// time and, with a topology, "over <link>", then the total.
std::string str(const RedistributePlan &plan);

} // namespace dtensor::layout

#endif // DTENSOR_PLANNER_REDISTRIBUTEPLAN_H

//===- CommCost.h - time estimates of collectives ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The communication cost model shared by sharding propagation (to price the
// redistributes a strategy needs) and the redistribute planner. It is an
// alpha-beta model: a call costs a fixed overhead, every round of messages
// a latency, every byte a rank sends 1/bandwidth. Local data
// movement (keeping one's chunk, zeroing a partial) costs bytes/memory
// bandwidth. All times are in microseconds. docs/propagation.md documents
// the formulas; this header is their single implementation.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PLANNER_COMMCOST_H
#define DTENSOR_PLANNER_COMMCOST_H

#include "dtensor/Layout/LayoutMath.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::layout {

/// The link a mesh dim's groups cross (a class of a topology file,
/// docs/topology.md).
struct LinkCost {
  /// The class's name, which explanations show.
  std::string name;
  /// Time of one step of a collective over the link, microseconds.
  double latencyUs = 5.0;
  /// Bytes per second one rank sends over the link, in GB/s.
  double bandwidthGBps = 10.0;
};

/// Machine parameters of the model.
struct CostParams {
  /// Fixed cost of issuing one collective call, microseconds: one call is
  /// cheaper than two that move the same bytes.
  double callUs = 1.0;
  /// Time of one step of a collective (one message latency), microseconds.
  double latencyUs = 5.0;
  /// Bytes per second one rank sends to another, in GB/s.
  double bandwidthGBps = 10.0;
  /// Bytes per second of a local copy or fill, in GB/s.
  double memoryGBps = 20.0;
  /// Size assumed for a dynamic dim when estimating bytes.
  int64_t dynamicDimEstimate = 1024;
  /// With a topology: the link of each mesh dim, which replaces latencyUs
  /// and bandwidthGBps for the collectives over it. Empty: every mesh dim
  /// is priced with latencyUs and bandwidthGBps.
  std::vector<LinkCost> meshDimLinks;
};

/// The collectives the model prices.
enum class Collective { AllGather, AllReduce, ReduceScatter, AllToAll };

/// Time of `collective` over a group of `groupSize` ranks, each holding
/// `bytesPerRank` bytes of input (for all_gather: its shard; for the others:
/// the whole buffer it contributes): callUs + rounds * latencyUs + bytes
/// sent / bandwidth. Gathers and reductions take ceil(log2 n) rounds
/// (all_reduce twice that), all_to_all n-1; bytes are those of a ring.
/// Zero for a group of one.
double collectiveTimeUs(Collective collective, int64_t groupSize,
                        double bytesPerRank, const CostParams &params);

/// Time of `collective` over the group spanning `meshDims` (`groupSize`
/// ranks). With params.meshDimLinks, priced as collectiveTimeUs with the
/// latency and bandwidth of the slowest link among those dims (the one
/// that gives the largest time: a group that spans hosts waits for its
/// inter-host messages); without, exactly collectiveTimeUs.
double collectiveTimeUs(Collective collective,
                        const std::vector<int64_t> &meshDims, int64_t groupSize,
                        double bytesPerRank, const CostParams &params);

/// The link collectiveTimeUs over `meshDims` prices `collective` with, or
/// null without params.meshDimLinks. Among links of equal time the one of
/// the first mesh dim wins.
const LinkCost *slowestLink(Collective collective,
                            const std::vector<int64_t> &meshDims,
                            int64_t groupSize, double bytesPerRank,
                            const CostParams &params);

/// Time of touching `bytes` locally (a chunk copy, a zero fill).
double localTimeUs(double bytes, const CostParams &params);

/// Bytes of the largest local shard of a tensor of `globalShape` (dynamic
/// dims as kDynamic, estimated by params.dynamicDimEstimate) with elements
/// of `elementBytes` under `placements` (normalised) on `mesh`.
double localBytes(const std::vector<int64_t> &globalShape, int64_t elementBytes,
                  const std::vector<Placement> &placements, const Mesh &mesh,
                  const CostParams &params);

/// Estimated time to turn a tensor laid out as `source` into `target`
/// (both normalised, one placement per mesh dim). Each mesh dim whose
/// placement changes costs one step over that dim's link, applied in an order
/// that shrinks data before growing it: P->S reduce_scatter and R->S chunk
/// first, then S(i)->S(j) all_to_all, then P->R all_reduce, then S->R
/// all_gather. R->P and P(a)->P(b) (via R) add a local fill. Zero when equal.
double redistributeTimeUs(const std::vector<int64_t> &globalShape,
                          int64_t elementBytes,
                          const std::vector<Placement> &source,
                          const std::vector<Placement> &target,
                          const Mesh &mesh, const CostParams &params);

} // namespace dtensor::layout

#endif // DTENSOR_PLANNER_COMMCOST_H

//===- CommCost.cpp - time estimates of collectives and redistributes -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Planner/CommCost.h"

#include <cassert>
#include <cmath>
#include <optional>

namespace dtensor::layout {

namespace {
/// Bytes per microsecond for a rate given in GB/s.
double bytesPerUs(double gigabytesPerSecond) {
  return gigabytesPerSecond * 1e3;
}
} // namespace

double collectiveTimeUs(Collective collective, int64_t groupSize,
                        double bytesPerRank, const CostParams &params) {
  assert(groupSize >= 1 && "empty group");
  if (groupSize == 1)
    return 0.0;
  double n = static_cast<double>(groupSize);
  double beta = bytesPerUs(params.bandwidthGBps);
  // Latency: gathers and reductions reach every rank in ceil(log2 n)
  // rounds (recursive doubling, trees); a personalised exchange needs n-1.
  double depth = std::ceil(std::log2(n));
  // Bandwidth: a ring sends (n-1)/n of the buffer; an all_gather receives
  // every other rank's shard.
  double sentFraction = (n - 1) / n;
  switch (collective) {
  case Collective::AllGather:
    return params.callUs + depth * params.latencyUs +
           (n - 1) * bytesPerRank / beta;
  case Collective::ReduceScatter:
    return params.callUs + depth * params.latencyUs +
           sentFraction * bytesPerRank / beta;
  case Collective::AllToAll:
    return params.callUs + (n - 1) * params.latencyUs +
           sentFraction * bytesPerRank / beta;
  case Collective::AllReduce:
    // A reduce_scatter followed by an all_gather, in one call.
    return params.callUs + 2 * depth * params.latencyUs +
           2 * sentFraction * bytesPerRank / beta;
  }
  return 0.0;
}

const LinkCost *slowestLink(Collective collective,
                            const std::vector<int64_t> &meshDims,
                            int64_t groupSize, double bytesPerRank,
                            const CostParams &params) {
  if (params.meshDimLinks.empty())
    return nullptr;
  const LinkCost *slowest = nullptr;
  double slowestUs = 0.0;
  for (int64_t meshDim : meshDims) {
    assert(meshDim >= 0 &&
           meshDim < static_cast<int64_t>(params.meshDimLinks.size()) &&
           "a link per mesh dim");
    const LinkCost &link = params.meshDimLinks[meshDim];
    CostParams over = params;
    over.latencyUs = link.latencyUs;
    over.bandwidthGBps = link.bandwidthGBps;
    double us = collectiveTimeUs(collective, groupSize, bytesPerRank, over);
    if (!slowest || us > slowestUs) {
      slowest = &link;
      slowestUs = us;
    }
  }
  return slowest;
}

double collectiveTimeUs(Collective collective,
                        const std::vector<int64_t> &meshDims, int64_t groupSize,
                        double bytesPerRank, const CostParams &params) {
  const LinkCost *link =
      slowestLink(collective, meshDims, groupSize, bytesPerRank, params);
  if (!link)
    return collectiveTimeUs(collective, groupSize, bytesPerRank, params);
  CostParams over = params;
  over.latencyUs = link->latencyUs;
  over.bandwidthGBps = link->bandwidthGBps;
  return collectiveTimeUs(collective, groupSize, bytesPerRank, over);
}

double localTimeUs(double bytes, const CostParams &params) {
  return bytes / bytesPerUs(params.memoryGBps);
}

double localBytes(const std::vector<int64_t> &globalShape, int64_t elementBytes,
                  const std::vector<Placement> &placements, const Mesh &mesh,
                  const CostParams &params) {
  double bytes = static_cast<double>(elementBytes);
  for (size_t dim = 0; dim < globalShape.size(); ++dim) {
    int64_t size = globalShape[dim] == kDynamic ? params.dynamicDimEstimate
                                                : globalShape[dim];
    std::vector<int64_t> meshDims =
        shardingMeshDims(placements, static_cast<int64_t>(dim));
    std::optional<int64_t> headTail =
        headTailMeshDim(placements, static_cast<int64_t>(dim));
    bytes *= static_cast<double>(
        headTail ? maxHeadTailSize(size, mesh.dimSize(*headTail))
                 : maxShardSize(size, mesh, meshDims));
  }
  return bytes;
}

double redistributeTimeUs(const std::vector<int64_t> &globalShape,
                          int64_t elementBytes,
                          const std::vector<Placement> &source,
                          const std::vector<Placement> &target,
                          const Mesh &mesh, const CostParams &params) {
  assert(source.size() == target.size() &&
         static_cast<int64_t>(source.size()) == mesh.rank() &&
         "one placement per mesh dim");
  // The layout after the steps taken so far; its local size is the input
  // of the next step.
  std::vector<Placement> current = source;
  double time = 0.0;
  auto bytesNow = [&] {
    return localBytes(globalShape, elementBytes, current, mesh, params);
  };
  // Phase 0: shrink (to Shard), 1: all_to_all, 2: all_reduce, 3: grow.
  for (int phase = 0; phase < 4; ++phase) {
    for (size_t meshDim = 0; meshDim < source.size(); ++meshDim) {
      const Placement &from = source[meshDim];
      const Placement &to = target[meshDim];
      if (from == to)
        continue;
      int64_t n = mesh.dimSize(static_cast<int64_t>(meshDim));
      std::vector<int64_t> dims = {static_cast<int64_t>(meshDim)};
      bool toShard = to.isShard();
      if (phase == 0 && toShard && !from.isShard()) {
        if (from.isPartial())
          time += collectiveTimeUs(Collective::ReduceScatter, dims, n,
                                   bytesNow(), params);
        else
          time += localTimeUs(bytesNow() / static_cast<double>(n), params);
        current[meshDim] = to;
      } else if (phase == 1 && toShard && from.isShard()) {
        time +=
            collectiveTimeUs(Collective::AllToAll, dims, n, bytesNow(), params);
        current[meshDim] = to;
      } else if (phase == 2 && from.isPartial() && !toShard) {
        time += collectiveTimeUs(Collective::AllReduce, dims, n, bytesNow(),
                                 params);
        current[meshDim] = to;
        if (to.isPartial())
          time += localTimeUs(bytesNow(), params);
      } else if (phase == 3 && from.isShard() && !toShard) {
        time += collectiveTimeUs(Collective::AllGather, dims, n, bytesNow(),
                                 params);
        current[meshDim] = to;
        if (to.isPartial())
          time += localTimeUs(bytesNow(), params);
      } else if (phase == 3 && from.isReplicate() && to.isPartial()) {
        time += localTimeUs(bytesNow(), params);
        current[meshDim] = to;
      }
    }
  }
  return time;
}

} // namespace dtensor::layout

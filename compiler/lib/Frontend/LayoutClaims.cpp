//===- LayoutClaims.cpp - Layouts the importer claims for values ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How the importer lays values out: the default placements of a tensor
// (Shard(0) over the data-parallel dim, the sequence over the
// context-parallel dim, Replicate elsewhere), and the ops that claim a
// layout (`dtensor.distribute`), move a value from one claimed layout to
// another (`dtensor.redistribute`) or ask for one whatever a value has
// (`dtensor.to_layout`).
//
//===----------------------------------------------------------------------===//

#include "FunctionImporter.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

SmallVector<PlacementAttr>
FunctionImporter::getDefaultPlacements(int64_t rank, bool activation) const {
  SmallVector<PlacementAttr> placements;
  for (size_t dim = 0; dim < plan.mesh.shape.size(); ++dim) {
    if (activation && rank > 0 &&
        plan.isDataParallelDim(static_cast<int64_t>(dim)))
      placements.push_back(ShardAttr::get(context, 0));
    else if (activation && plan.contextParallel &&
             static_cast<int64_t>(dim) == plan.contextParallel->meshDim &&
             rank > plan.contextParallel->sequenceDim)
      placements.push_back(ShardAttr::get(context,
                                          plan.contextParallel->sequenceDim,
                                          plan.contextParallel->loadBalance));
    else
      placements.push_back(ReplicateAttr::get(context));
  }
  return placements;
}

FailureOr<SmallVector<PlacementAttr>>
FunctionImporter::normalizePlacements(llvm::ArrayRef<PlacementAttr> placements,
                                      int64_t rank, const JsonNode &at,
                                      llvm::StringRef what) {
  SmallVector<PlacementAttr> result;
  for (PlacementAttr placement : placements) {
    auto shard = dyn_cast<ShardAttr>(placement);
    if (!shard) {
      result.push_back(placement);
      continue;
    }
    int64_t dim = shard.getDim();
    if (dim < -rank || dim >= rank)
      return locator.emitError(at)
             << "Shard(" << dim << ") is out of range for " << what
             << " of rank " << rank;
    result.push_back(ShardAttr::get(context, dim < 0 ? dim + rank : dim,
                                    shard.getHeadTail()));
  }
  return result;
}

FailureOr<LayoutAttr>
FunctionImporter::getStyleLayout(PlacementAttr placement, int64_t meshDim,
                                 int64_t rank, bool activation,
                                 const JsonNode &at, llvm::StringRef what) {
  SmallVector<PlacementAttr> placements =
      getDefaultPlacements(rank, activation);
  placements[meshDim] = placement;
  FailureOr<SmallVector<PlacementAttr>> normalized =
      normalizePlacements(placements, rank, at, what);
  if (failed(normalized))
    return failure();
  return getLayout(*normalized);
}

Value FunctionImporter::claim(Value value, LayoutAttr layout, Location loc) {
  auto it = claims.find(value);
  if (it != claims.end()) {
    if (it->second == layout)
      return value;
    return redistribute(value, it->second, layout, loc);
  }
  Value result = DistributeOp::create(builder, loc, value, layout,
                                      /*open_mesh_dims=*/nullptr);
  claims[value] = layout;
  claims[result] = layout;
  return result;
}

Value FunctionImporter::redistribute(Value value, LayoutAttr from,
                                     LayoutAttr to, Location loc) {
  if (from == to)
    return value;
  Value result = RedistributeOp::create(builder, loc, value, from, to);
  claims[result] = to;
  return result;
}

Value FunctionImporter::request(Value value, LayoutAttr layout, Location loc) {
  auto it = claims.find(value);
  if (it != claims.end())
    return redistribute(value, it->second, layout, loc);
  Value result = ToLayoutOp::create(builder, loc, value, layout,
                                    /*open_mesh_dims=*/nullptr);
  claims[result] = layout;
  return result;
}

Value FunctionImporter::claimSequence(Value value, int64_t dim, bool gather,
                                      Location loc) {
  if (Value known = (gather ? sequenceGathers : sequenceClaims).lookup(value))
    return known;
  Value original = value;
  int64_t meshDim = plan.contextParallel->meshDim;
  int64_t meshRank = plan.mesh.shape.size();
  SmallVector<int64_t> open;
  for (int64_t other = 0; other < meshRank; ++other)
    if (other != meshDim)
      open.push_back(other);
  auto withCp = [&](LayoutAttr base, PlacementAttr placement) {
    SmallVector<PlacementAttr> placements =
        base
            ? SmallVector<PlacementAttr>(base.getPlacements())
            : SmallVector<PlacementAttr>(meshRank, ReplicateAttr::get(context));
    placements[meshDim] = placement;
    return getLayout(placements);
  };
  PlacementAttr shard =
      ShardAttr::get(context, dim, plan.contextParallel->loadBalance);
  PlacementAttr replicate = ReplicateAttr::get(context);
  Value claimed = sequenceClaims.lookup(original);
  auto it = claims.find(original);
  if (it != claims.end()) {
    // A value claimed before (an argument, a style's layout) keeps its
    // other mesh dims; its sequence is (re)distributed over this one.
    LayoutAttr known = it->second.getNormalized(
        cast<RankedTensorType>(value.getType()).getRank());
    if (!claimed)
      claimed = claim(value, withCp(known, shard), loc);
    sequenceClaims[original] = claimed;
    if (!gather)
      return claimed;
    Value gathered = redistribute(claimed, withCp(known, shard),
                                  withCp(known, replicate), loc);
    sequenceGathers[original] = gathered;
    return gathered;
  }
  auto openDims =
      open.empty() ? DenseI64ArrayAttr() : builder.getDenseI64ArrayAttr(open);
  if (!claimed)
    claimed =
        DistributeOp::create(builder, loc, value, withCp({}, shard), openDims);
  sequenceClaims[original] = claimed;
  if (!gather)
    return claimed;
  Value gathered = ToLayoutOp::create(builder, loc, claimed,
                                      withCp({}, replicate), openDims);
  sequenceGathers[original] = gathered;
  return gathered;
}

FailureOr<Value> FunctionImporter::claimPlacementsEntry(llvm::StringRef name,
                                                        Value value,
                                                        Location loc) {
  const PlacementDecl *raw = rawPlacements.lookup(name);
  if (!raw)
    return value;
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  FailureOr<SmallVector<PlacementAttr>> placements = normalizePlacements(
      raw->placements, rank, *raw->node, ("tensor '" + name + "'").str());
  if (failed(placements))
    return failure();
  return claim(value, getLayout(*placements), loc);
}

//===- CustomCallStrategies.cpp - strategies of a custom call -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "CustomCallStrategies.h"

#include <algorithm>

using namespace mlir;
using namespace dtensor;
using propagation::Layout;
using propagation::Strategy;

namespace {

/// The largest number of elements one rank holds of a tensor of `type` in
/// `layout` (a Partial or replicated tensor is held whole).
double largestLocalElements(RankedTensorType type, const Layout &layout,
                            const layout::Mesh &mesh,
                            int64_t dynamicSizeEstimate) {
  double elements = 1.0;
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    int64_t size =
        type.isDynamicDim(dim) ? dynamicSizeEstimate : type.getDimSize(dim);
    int64_t shards = 1;
    for (int64_t meshDim = 0; meshDim < mesh.rank(); ++meshDim)
      if (layout[meshDim].isShard() && layout[meshDim].dim == dim)
        shards *= mesh.dimSize(meshDim);
    elements *= static_cast<double>(layout::ceilDiv(size, shards));
  }
  return elements;
}

} // namespace

std::vector<Strategy>
dtensor::getCustomCallStrategies(CustomCallOp op, const layout::Mesh &mesh,
                                 const ComputeParams &params) {
  // Each listed strategy as normalised placements: result, then inputs.
  SmallVector<RankedTensorType> types{
      cast<RankedTensorType>(op.getResult().getType())};
  for (Value input : op.getInputs())
    types.push_back(cast<RankedTensorType>(input.getType()));
  std::vector<std::vector<layout::Placement>> listed;
  for (Attribute entry : op.getStrategiesAttr()) {
    std::vector<layout::Placement> placements;
    for (auto [attr, type] :
         llvm::zip_equal(cast<ArrayAttr>(entry).getValue(), types)) {
      layout::Placement placement = cast<PlacementAttr>(attr).getPlacement();
      if (placement.isShard() && placement.dim < 0)
        placement.dim += type.getRank();
      placements.push_back(placement);
    }
    listed.push_back(std::move(placements));
  }

  std::vector<Strategy> strategies;
  // The verifier rejects an empty list; nothing to expand then.
  if (listed.empty())
    return strategies;
  int64_t meshRank = mesh.rank();
  std::vector<size_t> pick(meshRank, 0);
  while (true) {
    // Tensor i gets, along mesh dim d, entry i of strategy pick[d].
    std::vector<Layout> layouts(types.size(), Layout(meshRank));
    bool partialInput = false;
    for (int64_t meshDim = 0; meshDim < meshRank; ++meshDim)
      for (size_t tensor = 0; tensor < types.size(); ++tensor) {
        layouts[tensor][meshDim] = listed[pick[meshDim]][tensor];
        partialInput |= tensor > 0 && layouts[tensor][meshDim].isPartial();
      }
    Strategy strategy;
    strategy.operands.assign(layouts.begin() + 1, layouts.end());
    strategy.operands.push_back(layouts.front());
    strategy.results.push_back(layouts.front());
    double points = 0.0;
    for (auto [type, layout] : llvm::zip_equal(types, layouts))
      points =
          std::max(points, largestLocalElements(type, layout, mesh,
                                                params.dynamicSizeEstimate));
    strategy.costUs = points * params.usPerPoint +
                      (partialInput ? params.partialFlowPenaltyUs : 0.0);
    bool duplicate = llvm::any_of(strategies, [&](const Strategy &other) {
      return other.operands == strategy.operands &&
             other.results == strategy.results;
    });
    if (!duplicate)
      strategies.push_back(std::move(strategy));
    int64_t meshDim = meshRank - 1;
    while (meshDim >= 0 && ++pick[meshDim] == listed.size())
      pick[meshDim--] = 0;
    if (meshDim < 0)
      break;
  }
  return strategies;
}

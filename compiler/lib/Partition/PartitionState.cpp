//===- PartitionState.cpp - the global view while partitioning ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "PartitionState.h"
#include "LowerRedistribute.h"

using namespace mlir;
using namespace dtensor;

void PartitionState::setGlobal(Value value, RankedTensorType type,
                               LayoutAttr layout) {
  globals[value] = GlobalValue{
      type, layout.getNormalized(type.getRank()).getLayoutPlacements()};
}

void PartitionState::setGlobal(Value value, GlobalValue global) {
  globals[value] = std::move(global);
}

const GlobalValue *PartitionState::lookup(Value value) const {
  auto it = globals.find(value);
  return it == globals.end() ? nullptr : &it->second;
}

RankedTensorType PartitionState::getLocalType(const GlobalValue &global) const {
  return dtensor::getLocalType(global.type, global.placements, mesh);
}

std::vector<int64_t>
PartitionState::getShardingMeshDims(const GlobalValue &global,
                                    int64_t dim) const {
  return layout::shardingMeshDims(global.placements, dim);
}

ShardExtent PartitionState::getExtent(const GlobalValue &global, int64_t dim) {
  std::vector<int64_t> meshDims = getShardingMeshDims(global, dim);
  assert(!global.type.isDynamicDim(dim) && "sharded dims are static");
  if (std::optional<int64_t> headTail =
          layout::headTailMeshDim(global.placements, dim))
    return index.getHeadTailExtent(global.type.getDimSize(dim), *headTail);
  return index.getExtent(global.type.getDimSize(dim), meshDims);
}

OpFoldResult PartitionState::getLocalSize(const GlobalValue &global,
                                          int64_t dim,
                                          OpFoldResult globalSize) {
  if (getShardingMeshDims(global, dim).empty())
    return globalSize;
  ShardExtent extent = getExtent(global, dim);
  if (extent.staticSize != ShapedType::kDynamic)
    return IntegerAttr::get(IndexType::get(meshOp.getContext()),
                            extent.staticSize);
  return extent.size;
}

void PartitionState::replaceOp(Operation *op, ValueRange values) {
  for (auto [from, to] : llvm::zip_equal(op->getResults(), values)) {
    if (const GlobalValue *global = lookup(from)) {
      GlobalValue copy = *global;
      globals[to] = std::move(copy);
    }
    from.replaceAllUsesWith(to);
    // A value created later may reuse the erased one's storage.
    globals.erase(from);
  }
  op->erase();
}

//===- ShardIndex.cpp - which piece of a sharded dim a rank holds ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Partition/ShardIndex.h"

#include "dtensor/Layout/LayoutMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace dtensor;

void ShardIndex::LastInserted::notifyOperationInserted(Operation *op,
                                                       OpBuilder::InsertPoint) {
  last = op;
  created.push_back(op);
}

void ShardIndex::eraseUnused() {
  // Reverse creation order erases users before the values they use.
  for (Operation *op : llvm::reverse(tracker.created))
    if (op->use_empty())
      op->erase();
  tracker.created.clear();
  tracker.last = nullptr;
  coords.clear();
  constants.clear();
  extents.clear();
  headTailExtents.clear();
  groupIndices.clear();
}

ShardIndex::ShardIndex(MeshOp mesh, Block &entry)
    : mesh(mesh), entry(entry), loc(mesh.getLoc()),
      insertion(mesh.getContext(), &tracker) {}

OpBuilder &ShardIndex::builder() {
  // Ops of the entry block may be erased between calls, so the position is
  // re-derived from the last op created here rather than kept.
  if (tracker.last)
    insertion.setInsertionPointAfter(tracker.last);
  else
    insertion.setInsertionPointToStart(&entry);
  return insertion;
}

Value ShardIndex::getIndex(int64_t value) {
  auto [it, inserted] = constants.try_emplace(value);
  if (inserted)
    it->second = arith::ConstantIndexOp::create(builder(), loc, value);
  return it->second;
}

Value ShardIndex::getCoord(int64_t meshDim) {
  if (coords.empty()) {
    SmallVector<int64_t> allDims;
    for (int64_t dim = 0; dim < mesh.getRank(); ++dim)
      allDims.push_back(dim);
    SmallVector<Type> types(allDims.size(), builder().getIndexType());
    auto coordOp =
        MeshCoordOp::create(builder(), loc, types, mesh.getSymName(), allDims);
    coords.assign(coordOp.getCoords().begin(), coordOp.getCoords().end());
  }
  return coords[meshDim];
}

Value ShardIndex::getGroupIndex(ArrayRef<int64_t> meshDims) {
  std::vector<int64_t> key(meshDims.begin(), meshDims.end());
  if (Value cached = groupIndices[key])
    return cached;
  Value index;
  for (int64_t meshDim : meshDims) {
    Value coord = getCoord(meshDim);
    if (!index) {
      index = coord;
      continue;
    }
    Value scaled = arith::MulIOp::create(builder(), loc, index,
                                         getIndex(mesh.getShape()[meshDim]));
    index = arith::AddIOp::create(builder(), loc, scaled, coord);
  }
  groupIndices[key] = index;
  return index;
}

ShardExtent ShardIndex::getExtent(int64_t globalSize,
                                  ArrayRef<int64_t> meshDims) {
  std::pair<int64_t, std::vector<int64_t>> key(
      globalSize, std::vector<int64_t>(meshDims.begin(), meshDims.end()));
  if (auto it = extents.find(key); it != extents.end())
    return it->second;

  // Split level by level, outermost mesh dim first. While every rank holds
  // the same size the arithmetic stays static; after an uneven level the
  // size is a value and torch.chunk's clamping is computed at run time.
  Value offset;
  int64_t staticSize = globalSize;
  Value size;
  for (int64_t meshDim : meshDims) {
    int64_t parts = mesh.getShape()[meshDim];
    if (parts == 1)
      continue;
    Value coord = getCoord(meshDim);
    OpBuilder &b = builder();
    Value begin;
    if (staticSize != ShapedType::kDynamic && staticSize % parts == 0) {
      int64_t chunk = staticSize / parts;
      begin = b.createOrFold<arith::MulIOp>(loc, coord, getIndex(chunk));
      staticSize = chunk;
      size = Value();
    } else {
      Value whole = size ? size : getIndex(staticSize);
      Value chunk = staticSize != ShapedType::kDynamic
                        ? getIndex(layout::ceilDiv(staticSize, parts))
                        : arith::CeilDivSIOp::create(builder(), loc, whole,
                                                     getIndex(parts))
                              .getResult();
      Value start = builder().createOrFold<arith::MulIOp>(loc, coord, chunk);
      begin = arith::MinSIOp::create(builder(), loc, start, whole);
      Value stop = arith::AddIOp::create(builder(), loc, begin, chunk);
      Value end = arith::MinSIOp::create(builder(), loc, stop, whole);
      size = arith::SubIOp::create(builder(), loc, end, begin);
      staticSize = ShapedType::kDynamic;
    }
    offset =
        offset
            ? arith::AddIOp::create(builder(), loc, offset, begin).getResult()
            : begin;
  }

  ShardExtent extent;
  extent.offset = offset ? offset : getIndex(0);
  // Uneven levels can still leave every rank the same size.
  std::optional<int64_t> uniform =
      layout::uniformShardSize(globalSize, mesh.getLayoutMesh(), key.second);
  extent.staticSize = uniform ? *uniform : ShapedType::kDynamic;
  extent.size = uniform ? getIndex(*uniform) : size;
  extents[key] = extent;
  return extent;
}

ShardExtent ShardIndex::getHeadTailExtent(int64_t globalSize, int64_t meshDim) {
  std::pair<int64_t, int64_t> key(globalSize, meshDim);
  if (auto it = headTailExtents.find(key); it != headTailExtents.end())
    return it->second;
  int64_t parts = mesh.getShape()[meshDim];
  // torch.chunk piece j of 2 * parts: [min(j c, N), min((j + 1) c, N)).
  int64_t chunk = layout::ceilDiv(globalSize, 2 * parts);
  Value coord = getCoord(meshDim);
  Value whole = getIndex(globalSize);
  auto piece = [&](Value j) -> std::pair<Value, Value> {
    Value start =
        builder().createOrFold<arith::MulIOp>(loc, j, getIndex(chunk));
    Value begin = arith::MinSIOp::create(builder(), loc, start, whole);
    Value stop = arith::AddIOp::create(builder(), loc, begin, getIndex(chunk));
    Value end = arith::MinSIOp::create(builder(), loc, stop, whole);
    Value size = arith::SubIOp::create(builder(), loc, end, begin);
    return {begin, size};
  };
  auto [headBegin, headSize] = piece(coord);
  Value tailIndex =
      arith::SubIOp::create(builder(), loc, getIndex(2 * parts - 1), coord);
  auto [tailBegin, tailSize] = piece(tailIndex);
  ShardExtent extent;
  extent.offset = headBegin;
  extent.headSize = headSize;
  extent.tailOffset = tailBegin;
  extent.tailShift = arith::SubIOp::create(builder(), loc, tailBegin, headSize);
  std::optional<int64_t> uniform =
      layout::uniformHeadTailSize(globalSize, parts);
  extent.staticSize = uniform ? *uniform : ShapedType::kDynamic;
  extent.size = uniform
                    ? getIndex(*uniform)
                    : arith::AddIOp::create(builder(), loc, headSize, tailSize)
                          .getResult();
  headTailExtents[key] = extent;
  return extent;
}

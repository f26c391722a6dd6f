//===- LowerRedistribute.cpp - redistribute to local collectives ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "LowerRedistribute.h"
#include "dtensor/Analysis/ElementBytes.h"
#include "dtensor/Partition/DimSlices.h"

#include "dtensor/Planner/RedistributePlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

// Part of --dtensor-partition, which lowers every redistribute with it.
#define DEBUG_TYPE "dtensor-partition"

using namespace mlir;
using namespace dtensor;
using layout::Placement;
using layout::RedistributeStep;

RankedTensorType dtensor::getLocalType(RankedTensorType globalType,
                                       const std::vector<Placement> &placements,
                                       const layout::Mesh &mesh) {
  std::vector<int64_t> local =
      layout::localShapeType(std::vector<int64_t>(globalType.getShape().begin(),
                                                  globalType.getShape().end()),
                             placements, mesh);
  SmallVector<int64_t> shape;
  for (int64_t size : local)
    shape.push_back(size == layout::kDynamic ? ShapedType::kDynamic : size);
  return globalType.clone(shape);
}

/// A tensor of zeros shaped like `like`.
static Value createZerosLike(OpBuilder &builder, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      dynamicSizes.push_back(tensor::DimOp::create(builder, loc, like, dim));
  Value empty = tensor::EmptyOp::create(builder, loc, type, dynamicSizes);
  Value zero = arith::ConstantOp::create(
      builder, loc,
      cast<TypedAttr>(builder.getZeroAttr(type.getElementType())));
  return linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
}

/// Shard(dim) -> Partial(sum) over the step's mesh dims: this rank's piece
/// at its place in zeros of the size the dim has without those mesh dims.
static Value emitPadPartial(OpBuilder &builder, Location loc, Value local,
                            const RedistributeStep &step,
                            RankedTensorType globalType,
                            const std::vector<Placement> &before,
                            RankedTensorType afterType, ShardIndex &index) {
  int64_t dim = step.dim;
  // The mesh dims sharding `dim` before the step, outermost first; the step
  // takes the innermost ones.
  std::vector<int64_t> all = layout::shardingMeshDims(before, dim);
  ArrayRef<int64_t> outer =
      ArrayRef<int64_t>(all).drop_back(step.meshDims.size());
  int64_t globalSize = globalType.getDimSize(dim);
  ShardExtent piece = index.getExtent(globalSize, all);
  Value offset = piece.offset;
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < afterType.getRank(); ++d) {
    if (!afterType.isDynamicDim(d))
      continue;
    if (d != dim) {
      dynamicSizes.push_back(tensor::DimOp::create(builder, loc, local, d));
      continue;
    }
    dynamicSizes.push_back(index.getExtent(globalSize, outer).size);
  }
  if (!outer.empty())
    offset = arith::SubIOp::create(builder, loc, offset,
                                   index.getExtent(globalSize, outer).offset);
  Value empty = tensor::EmptyOp::create(builder, loc, afterType, dynamicSizes);
  Value zero = arith::ConstantOp::create(
      builder, loc,
      cast<TypedAttr>(builder.getZeroAttr(afterType.getElementType())));
  Value zeros = linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
  int64_t rank = afterType.getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  offsets[dim] = offset;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, local);
  SmallVector<OpFoldResult> strides(rank, builder.getIndexAttr(1));
  return tensor::InsertSliceOp::create(builder, loc, local, zeros, offsets,
                                       sizes, strides);
}

/// An empty tensor of `type` whose dynamic sizes are those of `like`, except
/// along `dim`, where it is `size`.
static Value createEmptyLike(OpBuilder &builder, Location loc,
                             RankedTensorType type, Value like, int64_t dim,
                             Value size) {
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(
          d == dim ? size
                   : tensor::DimOp::create(builder, loc, like, d).getResult());
  return tensor::EmptyOp::create(builder, loc, type, dynamicSizes);
}

Value dtensor::extractHeadTail(OpBuilder &builder, Location loc, Value whole,
                               int64_t dim, const ShardExtent &extent,
                               RankedTensorType type) {
  assert(extent.isHeadTail() && "a head-tail extent");
  Value tailSize =
      arith::SubIOp::create(builder, loc, extent.size, extent.headSize);
  Value head =
      sliceDim(builder, loc, whole, dim, extent.offset, extent.headSize);
  Value tail = sliceDim(builder, loc, whole, dim, extent.tailOffset, tailSize);
  Value result = createEmptyLike(builder, loc, type, whole, dim, extent.size);
  result = insertDim(builder, loc, head, result, dim, builder.getIndexAttr(0));
  return insertDim(builder, loc, tail, result, dim, extent.headSize);
}

/// Shard(dim, head_tail) -> Replicate over one mesh dim of n ranks: every
/// rank's piece padded to the largest one, one even all_gather, then the 2n
/// torch.chunk pieces copied from where their ranks put them into global
/// order (all offsets static: the global size is).
static Value emitHeadTailGather(OpBuilder &builder, Location loc, Value local,
                                const RedistributeStep &step,
                                RankedTensorType globalType,
                                RankedTensorType afterType, ShardIndex &index) {
  int64_t dim = step.dim;
  int64_t meshDim = step.meshDims.front();
  int64_t parts = index.getMesh().getShape()[meshDim];
  int64_t globalSize = globalType.getDimSize(dim);
  // One rank holds pieces 0 and 1 of 2: the whole dim, in order.
  if (parts == 1) {
    LLVM_DEBUG(llvm::dbgs() << "    head-tail gather over one rank: the "
                               "local piece is the whole dim\n");
    return local;
  }
  int64_t most = layout::maxHeadTailSize(globalSize, parts);
  auto localType = cast<RankedTensorType>(local.getType());
  Value padded = local;
  if (localType.getDimSize(dim) != most) {
    SmallVector<int64_t> shape(localType.getShape());
    shape[dim] = most;
    auto paddedType = localType.clone(shape);
    Value empty = createEmptyLike(builder, loc, paddedType, local, dim, {});
    Value zero = arith::ConstantOp::create(
        builder, loc,
        cast<TypedAttr>(builder.getZeroAttr(paddedType.getElementType())));
    Value zeros =
        linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
    padded =
        insertDim(builder, loc, local, zeros, dim, builder.getIndexAttr(0));
  }
  SmallVector<int64_t> gatheredShape(localType.getShape());
  gatheredShape[dim] = parts * most;
  auto gatheredType = localType.clone(gatheredShape);
  Value gathered =
      AllGatherOp::create(builder, loc, gatheredType, padded, dim,
                          index.getMesh().getSymName(), step.meshDims)
          ->getResult(0);
  Value result = createEmptyLike(builder, loc, afterType, gathered, dim, {});
  for (int64_t piece = 0; piece < 2 * parts; ++piece) {
    layout::Range range = layout::chunkRange(globalSize, 2 * parts, piece);
    if (range.size() == 0)
      continue;
    // Rank q holds piece q first and piece 2n-1-q after it.
    bool head = piece < parts;
    int64_t rank = head ? piece : 2 * parts - 1 - piece;
    int64_t from =
        rank * most +
        (head ? 0 : layout::chunkRange(globalSize, 2 * parts, rank).size());
    Value slice =
        sliceDim(builder, loc, gathered, dim, builder.getIndexAttr(from),
                 builder.getIndexAttr(range.size()));
    result = insertDim(builder, loc, slice, result, dim,
                       builder.getIndexAttr(range.begin));
  }
  return result;
}

/// Emits one planned step on `local`; `after` is the layout it leads to.
static Value emitStep(OpBuilder &builder, Location loc, Value local,
                      const RedistributeStep &step, RankedTensorType globalType,
                      const std::vector<Placement> &before,
                      RankedTensorType afterType, ShardIndex &index) {
  StringRef mesh = index.getMesh().getSymName();
  ArrayRef<int64_t> meshDims = step.meshDims;
  if (step.headTail && step.kind == RedistributeStep::Kind::AllGather)
    return emitHeadTailGather(builder, loc, local, step, globalType, afterType,
                              index);
  if (step.headTail && step.kind == RedistributeStep::Kind::Chunk &&
      index.getMesh().getShape()[step.meshDims.front()] == 1) {
    LLVM_DEBUG(llvm::dbgs() << "    head-tail chunk over one rank: the "
                               "value is its own piece\n");
    return local;
  }
  if (step.headTail && step.kind == RedistributeStep::Kind::Chunk)
    return extractHeadTail(
        builder, loc, local, step.dim,
        index.getHeadTailExtent(globalType.getDimSize(step.dim),
                                step.meshDims.front()),
        afterType);
  switch (step.kind) {
  case RedistributeStep::Kind::AllGather:
    return AllGatherOp::create(builder, loc, afterType, local, step.dim, mesh,
                               meshDims)
        ->getResult(0);
  case RedistributeStep::Kind::AllReduce:
    return AllReduceOp::create(builder, loc, local,
                               fromLayoutReduceKind(step.reduce), mesh,
                               meshDims)
        ->getResult(0);
  case RedistributeStep::Kind::ReduceScatter:
    return ReduceScatterOp::create(builder, loc, afterType, local,
                                   fromLayoutReduceKind(step.reduce), step.dim,
                                   mesh, meshDims)
        ->getResult(0);
  case RedistributeStep::Kind::AllToAll:
    // The shard moves from `dim` (joined) to `toDim` (split).
    return AllToAllOp::create(builder, loc, afterType, local, step.toDim,
                              step.dim, mesh, meshDims);
  case RedistributeStep::Kind::Chunk:
    return ChunkOp::create(builder, loc, afterType, local, step.dim, mesh,
                           meshDims);
  case RedistributeStep::Kind::MarkPartial: {
    // Avg, max and min of copies of one value are that value; a sum of
    // copies is not, so only the group's first member keeps its data.
    if (step.reduce != layout::ReduceKind::Sum) {
      LLVM_DEBUG(llvm::dbgs() << "    mark-partial of a non-sum reduction: "
                                 "every copy keeps its data\n");
      return local;
    }
    Value isFirst =
        arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                              index.getGroupIndex(meshDims), index.getIndex(0));
    return arith::SelectOp::create(builder, loc, isFirst, local,
                                   createZerosLike(builder, loc, local));
  }
  case RedistributeStep::Kind::PadPartial:
    return emitPadPartial(builder, loc, local, step, globalType, before,
                          afterType, index);
  }
  llvm_unreachable("unknown redistribute step");
}

Value dtensor::lowerRedistribute(OpBuilder &builder, Location loc, Value local,
                                 RankedTensorType globalType, LayoutAttr source,
                                 LayoutAttr target, ShardIndex &index,
                                 const layout::CostParams &params,
                                 bool explain) {
  int64_t rank = globalType.getRank();
  layout::Mesh mesh = index.getMesh().getLayoutMesh();
  std::vector<int64_t> shape(globalType.getShape().begin(),
                             globalType.getShape().end());
  layout::RedistributePlan plan = layout::planRedistribute(
      shape, getElementBytes(globalType),
      source.getNormalized(rank).getLayoutPlacements(),
      target.getNormalized(rank).getLayoutPlacements(), mesh, params);
  std::vector<Placement> before =
      source.getNormalized(rank).getLayoutPlacements();
  LLVM_DEBUG({
    llvm::dbgs() << "  redistribute of " << globalType << " at " << loc
                 << " from " << layout::str(before) << " to "
                 << layout::str(plan.layouts.empty() ? before
                                                     : plan.layouts.back())
                 << ": " << plan.steps.size()
                 << (plan.steps.size() == 1 ? " step" : " steps") << "\n";
    std::string steps = layout::str(plan);
    for (StringRef line : llvm::split(StringRef(steps).rtrim(), '\n'))
      llvm::dbgs() << "    " << line << "\n";
  });
  if (explain) {
    std::string type;
    llvm::raw_string_ostream(type) << globalType;
    InFlightDiagnostic remark = mlir::emitRemark(loc);
    remark << "explain: redistribute of " << type << " from "
           << layout::str(before) << " to "
           << layout::str(plan.layouts.empty() ? before : plan.layouts.back())
           << " lowered to " << plan.steps.size()
           << (plan.steps.size() == 1 ? " step" : " steps") << ":";
    // One indented line per step, then the total.
    std::string steps = layout::str(plan);
    for (StringRef line : llvm::split(StringRef(steps).rtrim(), '\n'))
      remark << "\n  " << line;
  }
  for (auto [step, after] : llvm::zip(plan.steps, plan.layouts)) {
    local = emitStep(builder, loc, local, step, globalType, before,
                     getLocalType(globalType, after, mesh), index);
    before = after;
  }
  return local;
}

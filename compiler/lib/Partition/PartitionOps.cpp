//===- PartitionOps.cpp - the local form of each op -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Most ops need nothing but per-rank result types: propagation chose layouts
// under which the op computed on local pieces gives the local piece of its
// result. The ops here also carry sizes, offsets or indices that must become
// the rank's own: factories, constants, reshapes, slices, the linalg loop
// indices of sharded loops, lookups into a sharded table, tensor.dim, and a
// causal dtensor.attention over a piece of the queries.
//
//===----------------------------------------------------------------------===//

#include "LowerRedistribute.h"
#include "PartitionState.h"
#include "dtensor/Partition/DimSlices.h"
#include "dtensor/Partition/GatherLookup.h"
#include "dtensor/Partition/QueryPositions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;

/// Gives every tensor result of `op` its per-rank type.
static void setLocalResultTypes(Operation *op, PartitionState &state) {
  for (OpResult result : op->getResults())
    if (const GlobalValue *global = state.lookup(result))
      result.setType(state.getLocalType(*global));
}

/// Checks that a sharded dim `dim` of `global` is taken whole by a slice
/// (offset 0, full size, stride 1): the only slices propagation shards.
static LogicalResult checkWholeDim(Operation *op, const GlobalValue &global,
                                   int64_t dim, OpFoldResult offset,
                                   OpFoldResult size, OpFoldResult stride) {
  if (isConstantIntValue(offset, 0) && isConstantIntValue(stride, 1) &&
      isConstantIntValue(size, global.type.getDimSize(dim)))
    return success();
  return op->emitOpError() << "slices dim " << dim
                           << ", which is sharded; only whole sharded dims "
                              "can be sliced";
}

/// Regions are not rewritten: they may not use a value defined outside them
/// whose local form differs from its global one (e.g. read a sharded tensor
/// at global indices).
static LogicalResult checkCaptures(Operation *op, PartitionState &state) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value value : captured)
    if (const GlobalValue *global = state.lookup(value))
      if (state.getLocalType(*global) != global->type)
        return op->emitOpError()
               << "uses a sharded value inside its region; partitioning "
                  "only rewrites values at the function's top level";
  return success();
}

//===----------------------------------------------------------------------===//
// Layout changes
//===----------------------------------------------------------------------===//

static LogicalResult partition(DistributeOp op, PartitionState &state) {
  if (op.getOpenMeshDims())
    return op.emitOpError()
           << "leaves mesh dims open; --dtensor-propagate chooses them "
              "before partitioning";
  // The operand already has the layout the annotation names.
  state.replaceOp(op, op.getInput());
  return success();
}

static LogicalResult partition(RedistributeOp op, PartitionState &state) {
  OpBuilder builder(op);
  const GlobalValue *global = state.lookup(op.getResult());
  assert(global && "redistributed values are tensors of the global program");
  // The steps start from what the rank holds, so the source must say it.
  const GlobalValue *input = state.lookup(op.getInput());
  std::vector<layout::Placement> source =
      op.getSource()
          .getNormalized(global->type.getRank())
          .getLayoutPlacements();
  if (input && input->placements != source)
    return op.emitOpError()
           << "redistributes from " << layout::str(source)
           << " a value laid out as " << layout::str(input->placements);
  Value local = lowerRedistribute(builder, op.getLoc(), op.getInput(),
                                  global->type, op.getSource(), op.getTarget(),
                                  state.index, state.params, state.explain);
  state.replaceOp(op, local);
  return success();
}

//===----------------------------------------------------------------------===//
// Factories and constants
//===----------------------------------------------------------------------===//

static LogicalResult partition(tensor::EmptyOp op, PartitionState &state) {
  const GlobalValue *global = state.lookup(op.getResult());
  RankedTensorType local = state.getLocalType(*global);
  if (local == op.getType())
    return success();
  OpBuilder builder(op);
  SmallVector<OpFoldResult> globalSizes = op.getMixedSizes();
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < local.getRank(); ++dim) {
    OpFoldResult size = state.getLocalSize(*global, dim, globalSizes[dim]);
    if (local.isDynamicDim(dim))
      dynamicSizes.push_back(
          getValueOrCreateConstantIndexOp(builder, op.getLoc(), size));
  }
  state.replaceOp(
      op, tensor::EmptyOp::create(builder, op.getLoc(), local, dynamicSizes)
              .getResult());
  return success();
}

/// A constant is the same on every rank; each keeps its piece: a smaller
/// splat when the piece has a static shape, else a slice at the rank's
/// offsets.
static LogicalResult partition(arith::ConstantOp op, PartitionState &state) {
  const GlobalValue *global = state.lookup(op.getResult());
  if (!global)
    return success();
  RankedTensorType local = state.getLocalType(*global);
  if (local == global->type)
    return success();
  OpBuilder builder(op);
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (dense && dense.isSplat() && local.hasStaticShape()) {
    state.replaceOp(op, arith::ConstantOp::create(builder, op.getLoc(),
                                                  dense.resizeSplat(local))
                            .getResult());
    return success();
  }
  builder.setInsertionPointAfter(op);
  SmallVector<OpFoldResult> offsets, sizes,
      strides(local.getRank(), builder.getIndexAttr(1));
  // A head-tail dim is cut after the others, in two pieces.
  std::optional<int64_t> headTailDim;
  SmallVector<int64_t> sliceShape(local.getShape());
  for (int64_t dim = 0; dim < local.getRank(); ++dim) {
    if (layout::headTailMeshDim(global->placements, dim))
      headTailDim = dim;
    if (headTailDim == dim || state.getShardingMeshDims(*global, dim).empty()) {
      offsets.push_back(builder.getIndexAttr(0));
      sizes.push_back(builder.getIndexAttr(global->type.getDimSize(dim)));
      sliceShape[dim] = global->type.getDimSize(dim);
      continue;
    }
    offsets.push_back(state.getExtent(*global, dim).offset);
    sizes.push_back(state.getLocalSize(*global, dim, OpFoldResult()));
  }
  auto slice = tensor::ExtractSliceOp::create(
      builder, op.getLoc(), local.clone(sliceShape), op.getResult(), offsets,
      sizes, strides);
  Value piece = slice;
  if (headTailDim)
    piece = extractHeadTail(builder, op.getLoc(), slice, *headTailDim,
                            state.getExtent(*global, *headTailDim), local);
  // The constant stays global; its users take the slice.
  GlobalValue sliceGlobal = *global;
  op.getResult().replaceAllUsesExcept(piece, slice);
  state.setGlobal(piece, sliceGlobal);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

static LogicalResult partition(tensor::ExpandShapeOp op,
                               PartitionState &state) {
  const GlobalValue *global = state.lookup(op.getResult());
  RankedTensorType local = state.getLocalType(*global);
  if (local == op.getResultType())
    return success();
  SmallVector<OpFoldResult> shape = op.getMixedOutputShape();
  for (auto [dim, size] : llvm::enumerate(shape))
    size = state.getLocalSize(*global, dim, size);
  OpBuilder builder(op);
  state.replaceOp(op, tensor::ExpandShapeOp::create(
                          builder, op.getLoc(), local, op.getSrc(),
                          op.getReassociationIndices(), shape)
                          .getResult());
  return success();
}

static LogicalResult partition(tensor::ReshapeOp op, PartitionState &state) {
  const GlobalValue *global = state.lookup(op.getResult());
  RankedTensorType local = state.getLocalType(*global);
  if (local == op.getResultType())
    return success();
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Type sizeType = op.getShape().getType().getElementType();
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < local.getRank(); ++dim) {
    if (!local.isDynamicDim(dim)) {
      sizes.push_back(arith::ConstantOp::create(
          builder, loc,
          builder.getIntegerAttr(sizeType, local.getDimSize(dim))));
      continue;
    }
    Value size = state.getExtent(*global, dim).size;
    if (sizeType != size.getType())
      size = arith::IndexCastOp::create(builder, loc, sizeType, size);
    sizes.push_back(size);
  }
  Value shape = tensor::FromElementsOp::create(builder, loc, sizes);
  state.replaceOp(
      op, tensor::ReshapeOp::create(builder, loc, local, op.getSource(), shape)
              .getResult());
  return success();
}

static LogicalResult partition(tensor::ExtractSliceOp op,
                               PartitionState &state) {
  const GlobalValue *source = state.lookup(op.getSource());
  const GlobalValue *result = state.lookup(op.getResult());
  RankedTensorType local = state.getLocalType(*result);
  SmallVector<OpFoldResult> offsets = op.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  SmallVector<OpFoldResult> strides = op.getMixedStrides();
  bool changed = local != op.getType();
  for (int64_t dim = 0; dim < source->type.getRank(); ++dim) {
    if (state.getShardingMeshDims(*source, dim).empty())
      continue;
    if (failed(checkWholeDim(op, *source, dim, offsets[dim], sizes[dim],
                             strides[dim])))
      return failure();
    sizes[dim] = state.getLocalSize(*source, dim, sizes[dim]);
    changed = true;
  }
  if (!changed)
    return success();
  OpBuilder builder(op);
  state.replaceOp(op, tensor::ExtractSliceOp::create(builder, op.getLoc(),
                                                     local, op.getSource(),
                                                     offsets, sizes, strides)
                          .getResult());
  return success();
}

static LogicalResult partition(tensor::InsertSliceOp op,
                               PartitionState &state) {
  const GlobalValue *dest = state.lookup(op.getDest());
  SmallVector<OpFoldResult> offsets = op.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  SmallVector<OpFoldResult> strides = op.getMixedStrides();
  bool changed = false;
  for (int64_t dim = 0; dim < dest->type.getRank(); ++dim) {
    if (state.getShardingMeshDims(*dest, dim).empty())
      continue;
    if (failed(checkWholeDim(op, *dest, dim, offsets[dim], sizes[dim],
                             strides[dim])))
      return failure();
    sizes[dim] = state.getLocalSize(*dest, dim, sizes[dim]);
    changed = true;
  }
  if (!changed)
    return success();
  OpBuilder builder(op);
  state.replaceOp(
      op, tensor::InsertSliceOp::create(builder, op.getLoc(), op.getSource(),
                                        op.getDest(), offsets, sizes, strides)
              .getResult());
  return success();
}

/// Sizes are properties of the global program: a tensor.dim of a sharded
/// value asks for the global size, not the rank's.
static LogicalResult partition(tensor::DimOp op, PartitionState &state) {
  const GlobalValue *global = state.lookup(op.getSource());
  if (!global)
    return success();
  std::optional<int64_t> dim = op.getConstantIndex();
  if (!dim) {
    for (int64_t d = 0; d < global->type.getRank(); ++d)
      if (!state.getShardingMeshDims(*global, d).empty())
        return op.emitOpError("takes a non-constant dim of a sharded tensor; "
                              "partitioning needs to know which dim it is");
    return success();
  }
  if (global->type.isDynamicDim(*dim))
    return success();
  OpBuilder builder(op);
  state.replaceOp(op, arith::ConstantIndexOp::create(
                          builder, op.getLoc(), global->type.getDimSize(*dim))
                          .getResult());
  return success();
}

//===----------------------------------------------------------------------===//
// Embedding lookups
//===----------------------------------------------------------------------===//

/// A lookup into a table whose gathered dims are sharded: each rank looks up
/// only the rows it holds and yields zeros for the others, so the results
/// sum (a Partial(sum)) to the global lookup. Written as a linalg.generic
/// over the result, which reads the index and, when it is in the rank's
/// range, the table.
static LogicalResult partitionMaskedGather(tensor::GatherOp op,
                                           const GlobalValue &table,
                                           PartitionState &state) {
  const GlobalValue *result = state.lookup(op.getResult());
  OpBuilder builder(op);
  // The rank's rows of each sharded gathered dim: offset and count.
  SmallVector<Value> offsets, counts;
  for (int64_t dim : op.getGatherDims()) {
    if (state.getShardingMeshDims(table, dim).empty()) {
      offsets.push_back(Value());
      counts.push_back(Value());
      continue;
    }
    ShardExtent extent = state.getExtent(table, dim);
    if (extent.isHeadTail())
      return op.emitOpError("looks up rows of a table sharded head-tail along "
                            "dim ")
             << dim << "; only tables held in one piece per rank are "
             << "supported";
    offsets.push_back(extent.offset);
    counts.push_back(extent.size);
  }
  state.replaceOp(
      op, buildGatherLookup(builder, op, state.getLocalType(*result),
                            op.getSource(), op.getIndices(), offsets, counts));
  return success();
}

static LogicalResult partition(tensor::GatherOp op, PartitionState &state) {
  const GlobalValue *table = state.lookup(op.getSource());
  for (int64_t dim : op.getGatherDims())
    if (!state.getShardingMeshDims(*table, dim).empty())
      return partitionMaskedGather(op, *table, state);
  setLocalResultTypes(op, state);
  return success();
}

//===----------------------------------------------------------------------===//
// Structured ops
//===----------------------------------------------------------------------===//

/// Loop indices are global positions in the global program: where a loop
/// runs over a sharded dim, the rank's offset is added to `linalg.index`.
static LogicalResult partition(linalg::LinalgOp op, PartitionState &state) {
  if (failed(checkCaptures(op, state)))
    return failure();
  SmallVector<linalg::IndexOp> indexOps;
  op->walk([&](linalg::IndexOp indexOp) {
    if (indexOp->getParentOfType<linalg::LinalgOp>() == op)
      indexOps.push_back(indexOp);
  });
  if (!indexOps.empty()) {
    DenseMap<unsigned, ShardExtent> loopExtents;
    for (OpOperand &operand : op->getOpOperands()) {
      const GlobalValue *global = state.lookup(operand.get());
      if (!global)
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
        auto loop = dyn_cast<AffineDimExpr>(expr);
        if (!loop || loopExtents.count(loop.getPosition()) ||
            state.getShardingMeshDims(*global, dim).empty())
          continue;
        loopExtents[loop.getPosition()] = state.getExtent(*global, dim);
      }
    }
    for (linalg::IndexOp indexOp : indexOps) {
      auto it = loopExtents.find(indexOp.getDim());
      if (it == loopExtents.end())
        continue;
      const ShardExtent &extent = it->second;
      OpBuilder builder(indexOp->getContext());
      builder.setInsertionPointAfter(indexOp);
      Location loc = indexOp.getLoc();
      Value local = indexOp.getResult();
      auto add = arith::AddIOp::create(builder, loc, local, extent.offset);
      SmallPtrSet<Operation *, 4> reads{add};
      Value global = add;
      if (extent.isHeadTail()) {
        // Two pieces: past the first, the index continues in the second.
        auto inHead = arith::CmpIOp::create(
            builder, loc, arith::CmpIPredicate::ult, local, extent.headSize);
        auto inTail =
            arith::AddIOp::create(builder, loc, local, extent.tailShift);
        reads.insert(inHead);
        reads.insert(inTail);
        global = arith::SelectOp::create(builder, loc, inHead, add, inTail);
      }
      local.replaceAllUsesExcept(global, reads);
    }
  }
  setLocalResultTypes(op, state);
  return success();
}

/// A causal attention over queries held in two pieces (a head-tail shard,
/// `extent`): one op per piece, on the piece's query rows (and mask rows),
/// its positions starting at the piece's global offset, each written into
/// its rows of the result.
static Value attendPieces(OpBuilder &b, AttentionOp op,
                          const ShardExtent &extent) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> queryDims = op.getQueryDims(),
                    resultDims = op.getResultDims();
  Value query = op.getQuery(), mask = op.getMask();
  // The mask is in logical order; a size-1 query dim broadcasts.
  bool maskRows =
      mask && cast<RankedTensorType>(mask.getType()).getDimSize(2) != 1;
  Value rows = tensor::DimOp::create(b, loc, query, queryDims[2]);
  Value rest = arith::SubIOp::create(b, loc, rows, extent.headSize);
  struct Piece {
    OpFoldResult offset, size;
    Value start;
  };
  Piece pieces[2] = {{b.getIndexAttr(0), extent.headSize, extent.offset},
                     {extent.headSize, rest, extent.tailOffset}};
  Value result = op.getInit();
  for (const Piece &piece : pieces) {
    Value pieceQuery =
        sliceDim(b, loc, query, queryDims[2], piece.offset, piece.size);
    Value pieceMask =
        maskRows ? sliceDim(b, loc, mask, 2, piece.offset, piece.size) : mask;
    Value init =
        sliceDim(b, loc, op.getInit(), resultDims[2], piece.offset, piece.size);
    auto attention = AttentionOp::create(
        b, loc, init.getType(), /*log_sum_exp=*/Type(), pieceQuery, op.getKey(),
        op.getValue(), pieceMask, op.getRows(),
        createQueryPositions(b, loc, pieceQuery, queryDims[0], piece.start),
        init, /*log_sum_exp_init=*/Value(), op.getScaleAttr(),
        op.getCausalAttr(), /*accumulate=*/UnitAttr(), op.getQueryDimsAttr(),
        op.getKeyDimsAttr(), op.getValueDimsAttr(), op.getResultDimsAttr());
    result = insertDim(b, loc, attention.getResult(), result, resultDims[2],
                       piece.offset);
  }
  return result;
}

/// A causal attention whose queries are sharded along their sequence: query
/// i of the rank's piece is query offset + i of the whole, which the op says
/// with `positions` (every batch row's first query at the offset), so that
/// it sees the keys up to its global position; queries held in two pieces
/// (head-tail) become one op per piece. Other attentions compute on their
/// local pieces as they would on global tensors.
static LogicalResult partition(AttentionOp op, PartitionState &state) {
  if (failed(checkCaptures(op, state)))
    return failure();
  const GlobalValue *query = state.lookup(op.getQuery());
  int64_t sequenceDim = op.getQueryDims()[2];
  if (!op.getCausal() || op.getPositions() || !query ||
      state.getShardingMeshDims(*query, sequenceDim).empty()) {
    setLocalResultTypes(op, state);
    return success();
  }
  ShardExtent extent = state.getExtent(*query, sequenceDim);
  if (op.getLogSumExpInit())
    return op.emitOpError("is causal over sharded queries and gives its "
                          "log-sum-exp; partitioning gives positions only to "
                          "an attention without one");
  OpBuilder builder(op);
  if (!extent.isHeadTail()) {
    op.getPositionsMutable().assign(
        createQueryPositions(builder, op.getLoc(), op.getQuery(),
                             op.getQueryDims()[0], extent.offset));
    setLocalResultTypes(op, state);
    return success();
  }
  setLocalResultTypes(op, state);
  builder.setInsertionPointAfter(op);
  state.replaceOp(op, attendPieces(builder, op, extent));
  return success();
}

/// Any other op computes on its local pieces as it would on global tensors.
static LogicalResult partitionOther(Operation *op, PartitionState &state) {
  if (failed(checkCaptures(op, state)))
    return failure();
  setLocalResultTypes(op, state);
  return success();
}

LogicalResult dtensor::partitionOp(Operation *op, PartitionState &state) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<LocalMapOp>(
          [&](LocalMapOp op) { return partitionLocalMap(op, state); })
      .Case<ScatterAddOp>(
          [&](ScatterAddOp op) { return partitionScatterAdd(op, state); })
      .Case<DistributeOp, RedistributeOp, tensor::EmptyOp, arith::ConstantOp,
            tensor::ExpandShapeOp, tensor::ReshapeOp, tensor::ExtractSliceOp,
            tensor::InsertSliceOp, tensor::DimOp, tensor::GatherOp,
            linalg::LinalgOp, AttentionOp>(
          [&](auto op) { return partition(op, state); })
      .Default([&](Operation *op) { return partitionOther(op, state); });
}

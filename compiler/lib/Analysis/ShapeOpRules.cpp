//===- ShapeOpRules.cpp - explicit rules for non-linalg ops -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reshapes, slices, concatenation, gather, softmax, tensor factories,
// dtensor.write_rows and dtensor.optimization_barrier have no indexing
// maps; their rules are written out here. Ops that only move data commute with
// any elementwise reduction, so Partial values of every kind pass through their
// data operands.
//
//===----------------------------------------------------------------------===//

#include "ShapeOpRules.h"

#include "ShardingRuleBuilder.h"

#include "dtensor/Analysis/PartialFlow.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::detail;

static bool hasDynamic(ArrayRef<int64_t> values) {
  return llvm::any_of(values, ShapedType::isDynamic);
}

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

/// Factors of a reshape that merges each group of `reassociation` (dims of
/// `expandedShape`) into one collapsed dim. torch.chunk of a merged dim
/// gives each rank a block of its *major* dim (the first non-unit one) only
/// when the shard count divides the major size, so the major factor needs an
/// even split when it has non-unit neighbours; the minor dims cannot be
/// sharded at all.
static void addReshapeFactors(ShardingRule &rule,
                              ArrayRef<int64_t> expandedShape,
                              ArrayRef<ReassociationIndices> reassociation,
                              TensorFactors &expanded,
                              TensorFactors &collapsed) {
  // Unit dims outside every group (a collapse to rank 0) index no factor.
  expanded.assign(expandedShape.size(), std::nullopt);
  collapsed.clear();
  for (const ReassociationIndices &group : reassociation) {
    auto isNonUnit = [&](int64_t dim) { return expandedShape[dim] != 1; };
    auto majorIt = llvm::find_if(group, isNonUnit);
    int64_t major = majorIt == group.end() ? group.front() : *majorIt;
    bool merged = llvm::count_if(group, isNonUnit) > 1;
    for (int64_t dim : group) {
      unsigned factor =
          addFactor(rule, expandedShape[dim], /*blocked=*/dim != major);
      expanded[dim] = factor;
      if (dim != major)
        continue;
      collapsed.push_back(factor);
      if (!merged)
        continue;
      if (ShapedType::isDynamic(expandedShape[dim]))
        rule.factors[factor].blocked = true;
      else
        rule.factors[factor].needsEvenSplit = true;
    }
  }
}

/// A reshape of operand 0 between a `source` and a `result` type related by
/// `reassociation`, which groups the dims of whichever has the higher rank.
static ShardingRule
getReshapeRule(RankedTensorType source, RankedTensorType result,
               ArrayRef<ReassociationIndices> reassociation) {
  ShardingRule rule;
  TensorFactors sourceFactors, resultFactors;
  if (source.getRank() >= result.getRank())
    addReshapeFactors(rule, source.getShape(), reassociation, sourceFactors,
                      resultFactors);
  else
    addReshapeFactors(rule, result.getShape(), reassociation, resultFactors,
                      sourceFactors);
  addOperand(rule, 0, std::move(sourceFactors));
  rule.results.push_back(std::move(resultFactors));
  addDataMovementFlow(rule, {0});
  return rule;
}

static std::optional<ShardingRule> getRule(tensor::CollapseShapeOp op) {
  return getReshapeRule(op.getSrcType(), op.getResultType(),
                        op.getReassociationIndices());
}

static std::optional<ShardingRule> getRule(tensor::ExpandShapeOp op) {
  return getReshapeRule(op.getSrcType(), op.getResultType(),
                        op.getReassociationIndices());
}

/// Only static reshapes that are a pure collapse or a pure expansion.
static std::optional<ShardingRule> getRule(tensor::ReshapeOp op) {
  auto source = dyn_cast<RankedTensorType>(op.getSource().getType());
  auto result = dyn_cast<RankedTensorType>(op.getResult().getType());
  auto shape = dyn_cast<RankedTensorType>(op.getShape().getType());
  if (!source || !result || !shape || !source.hasStaticShape() ||
      !result.hasStaticShape())
    return std::nullopt;
  std::optional<SmallVector<ReassociationIndices>> reassociation =
      getReassociationIndicesForReshape(source, result);
  if (!reassociation)
    return std::nullopt;
  ShardingRule rule = getReshapeRule(source, result, *reassociation);
  // The shape operand is data about the result, never sharded or Partial.
  addOperand(rule, 1, TensorFactors(shape.getRank(), std::nullopt));
  return rule;
}

//===----------------------------------------------------------------------===//
// Slices and concatenation
//===----------------------------------------------------------------------===//

/// True when a static slice of `size` at `offset` with `stride` covers all
/// of a dim of static size `dimSize`.
static bool coversWholeDim(int64_t offset, int64_t size, int64_t stride,
                           int64_t dimSize) {
  return offset == 0 && stride == 1 && !ShapedType::isDynamic(dimSize) &&
         size == dimSize;
}

/// The static offsets, sizes and strides of a slice op, or std::nullopt
/// when any is dynamic.
struct StaticSlice {
  ArrayRef<int64_t> offsets, sizes, strides;
};
template <typename SliceOp>
static std::optional<StaticSlice> getStaticSlice(SliceOp op) {
  StaticSlice slice{op.getStaticOffsets(), op.getStaticSizes(),
                    op.getStaticStrides()};
  if (hasDynamic(slice.offsets) || hasDynamic(slice.sizes) ||
      hasDynamic(slice.strides))
    return std::nullopt;
  return slice;
}

/// A source dim taken whole keeps its factor; a sliced one leaves the source
/// unsharded there and gives the result a factor that cannot be sharded.
static std::optional<ShardingRule> getRule(tensor::ExtractSliceOp op) {
  std::optional<StaticSlice> slice = getStaticSlice(op);
  if (!slice)
    return std::nullopt;
  auto [offsets, sizes, strides] = *slice;
  ShardingRule rule;
  RankedTensorType source = op.getSourceType();
  llvm::SmallBitVector dropped = op.getDroppedDims();
  TensorFactors sourceFactors, resultFactors;
  for (int64_t dim = 0; dim < source.getRank(); ++dim) {
    // A dropped unit dim has no result dim to share a factor with.
    if (dropped.test(dim)) {
      sourceFactors.push_back(std::nullopt);
      continue;
    }
    if (coversWholeDim(offsets[dim], sizes[dim], strides[dim],
                       source.getDimSize(dim))) {
      unsigned factor = addFactor(rule, sizes[dim]);
      sourceFactors.push_back(factor);
      resultFactors.push_back(factor);
      continue;
    }
    sourceFactors.push_back(std::nullopt);
    resultFactors.push_back(addFactor(rule, sizes[dim], /*blocked=*/true));
  }
  addOperand(rule, 0, std::move(sourceFactors));
  rule.results.push_back(std::move(resultFactors));
  addDataMovementFlow(rule, {0});
  return rule;
}

/// The result is the destination with a region overwritten: both share every
/// factor, and the source shares the dims it covers whole. A dim the slice
/// covers only in part cannot be sharded.
static std::optional<ShardingRule> getRule(tensor::InsertSliceOp op) {
  std::optional<StaticSlice> slice = getStaticSlice(op);
  if (!slice)
    return std::nullopt;
  auto [offsets, sizes, strides] = *slice;
  ShardingRule rule;
  RankedTensorType dest = op.getDestType();
  llvm::SmallBitVector dropped = op.getDroppedDims();
  TensorFactors sourceFactors, destFactors;
  for (int64_t dim = 0; dim < dest.getRank(); ++dim) {
    bool whole = coversWholeDim(offsets[dim], sizes[dim], strides[dim],
                                dest.getDimSize(dim));
    unsigned factor = addFactor(rule, dest.getDimSize(dim), !whole);
    destFactors.push_back(factor);
    // Rank-reduced sources have no dim for a dropped unit dim.
    if (!dropped.test(dim))
      sourceFactors.push_back(whole ? std::optional<unsigned>(factor)
                                    : std::nullopt);
  }
  addOperand(rule, 0, std::move(sourceFactors));
  addOperand(rule, 1, destFactors);
  rule.results.push_back(std::move(destFactors));
  addDataMovementFlow(rule, {0, 1});
  return rule;
}

/// Dims other than the concatenated one are shared by all inputs and the
/// result. The concatenated dim cannot be sharded: each input's blocks would
/// land in the wrong place of the result's blocks.
static std::optional<ShardingRule> getRule(tensor::ConcatOp op) {
  ShardingRule rule;
  RankedTensorType result = op.getResultType();
  int64_t concatDim = op.getDim();
  TensorFactors inputFactors, resultFactors;
  for (int64_t dim = 0; dim < result.getRank(); ++dim) {
    unsigned factor =
        addFactor(rule, result.getDimSize(dim), /*blocked=*/dim == concatDim);
    resultFactors.push_back(factor);
    inputFactors.push_back(dim == concatDim ? std::nullopt
                                            : std::optional<unsigned>(factor));
  }
  SmallVector<unsigned> inputs;
  for (OpOperand &input : op->getOpOperands()) {
    inputs.push_back(rule.operands.size());
    addOperand(rule, input.getOperandNumber(), inputFactors);
  }
  rule.results.push_back(std::move(resultFactors));
  addDataMovementFlow(rule, inputs);
  return rule;
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// An embedding lookup is a one-hot contraction over each gathered source
/// dim: with that dim sharded, a rank finds only the rows it holds and
/// contributes zeros for the others, a partial sum.
static std::optional<ShardingRule> getRule(tensor::GatherOp op) {
  RankedTensorType source = op.getSourceType();
  RankedTensorType indices = op.getIndicesType();
  RankedTensorType result = op.getResultType();
  ArrayRef<int64_t> gatherDims = op.getGatherDims();
  int64_t batchRank = indices.getRank() - 1;
  bool rankReduced = result.getRank() != batchRank + source.getRank();
  ShardingRule rule;
  TensorFactors sourceFactors, indicesFactors, resultFactors;
  for (int64_t dim = 0; dim < batchRank; ++dim) {
    unsigned factor = addFactor(rule, indices.getDimSize(dim));
    indicesFactors.push_back(factor);
    resultFactors.push_back(factor);
  }
  // The coordinate dim.
  indicesFactors.push_back(std::nullopt);
  for (int64_t dim = 0; dim < source.getRank(); ++dim) {
    unsigned factor = addFactor(rule, source.getDimSize(dim));
    sourceFactors.push_back(factor);
    if (!llvm::is_contained(gatherDims, dim)) {
      resultFactors.push_back(factor);
      continue;
    }
    rule.factors[factor].kind = ShardingFactor::Kind::Reduction;
    rule.factors[factor].combiner = ReductionKind::Sum;
    if (!rankReduced)
      resultFactors.push_back(std::nullopt);
  }
  addOperand(rule, 0, std::move(sourceFactors));
  addOperand(rule, 1, std::move(indicesFactors));
  rule.results.push_back(std::move(resultFactors));
  addDataMovementFlow(rule, {0});
  return rule;
}

//===----------------------------------------------------------------------===//
// Softmax and tensor factories
//===----------------------------------------------------------------------===//

/// Elementwise but for the normalised dim, whose max and sum need the whole
/// row.
static std::optional<ShardingRule> getRule(linalg::SoftmaxOp op) {
  auto input = dyn_cast<RankedTensorType>(op.getInputOperandType());
  auto output = dyn_cast<RankedTensorType>(op.getOutputOperandType());
  if (!input || !output || op->getNumResults() != 1)
    return std::nullopt;
  ShardingRule rule;
  TensorFactors identity = addIdentityFactors(rule, input);
  rule.factors[op.getDimension()].blocked = true;
  addOperand(rule, 0, identity);
  addOperand(rule, 1, identity);
  rule.results.push_back(std::move(identity));
  return rule;
}

/// Undefined contents are a valid partial value of every kind.
static std::optional<ShardingRule> getRule(tensor::EmptyOp op) {
  ShardingRule rule;
  rule.results.push_back(addIdentityFactors(rule, op.getType()));
  addDataMovementFlow(rule, {});
  return rule;
}

/// A zero constant is a valid partial value of every kind.
static std::optional<ShardingRule> getRule(arith::ConstantOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!type)
    return std::nullopt;
  ShardingRule rule;
  rule.results.push_back(addIdentityFactors(rule, type));
  if (matchPattern(op.getResult(), m_AnyZeroFloat()) ||
      matchPattern(op.getResult(), m_Zero()))
    addDataMovementFlow(rule, {});
  return rule;
}

//===----------------------------------------------------------------------===//
// Row writes
//===----------------------------------------------------------------------===//

/// The trailing dims are shared by values, cache and result: each rank
/// writes its piece of them in every row. The slot and position dims of the
/// cache and the row dims of values are indexed by data (slots and
/// positions), so none of them can be sharded; slots and positions, indexed
/// by the blocked row factor, stay whole.
static std::optional<ShardingRule> getRule(WriteRowsOp op) {
  RankedTensorType values = op.getValues().getType();
  RankedTensorType cache = op.getCache().getType();
  ShardingRule rule;
  unsigned batch = addFactor(rule, values.getDimSize(0), /*blocked=*/true);
  unsigned rows = addFactor(rule, values.getDimSize(1), /*blocked=*/true);
  unsigned slots = addFactor(rule, cache.getDimSize(0), /*blocked=*/true);
  unsigned positions = addFactor(rule, cache.getDimSize(1), /*blocked=*/true);
  TensorFactors valueFactors{batch, rows}, cacheFactors{slots, positions};
  for (int64_t dim = 2; dim < cache.getRank(); ++dim) {
    int64_t size = cache.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      size = values.getDimSize(dim);
    unsigned factor = addFactor(rule, size);
    valueFactors.push_back(factor);
    cacheFactors.push_back(factor);
  }
  addOperand(rule, 0, std::move(valueFactors));
  addOperand(rule, 1, cacheFactors);
  addOperand(rule, 2, TensorFactors{batch});
  addOperand(rule, 3, TensorFactors{batch});
  rule.results.push_back(std::move(cacheFactors));
  // Written and kept elements alike are moved, never combined: Partial
  // values pass through when the new rows and the cache are both Partial.
  addDataMovementFlow(rule, {0, 1});
  return rule;
}

/// A copy: the result has the operand's layout, Partial values included.
static std::optional<ShardingRule> getRule(OptimizationBarrierOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  ShardingRule rule;
  TensorFactors identity = addIdentityFactors(rule, type);
  addOperand(rule, 0, identity);
  rule.results.push_back(std::move(identity));
  addDataMovementFlow(rule, {0});
  return rule;
}

std::optional<ShardingRule> dtensor::detail::getShapeOpRule(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp,
            tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ConcatOp,
            tensor::GatherOp, linalg::SoftmaxOp, tensor::EmptyOp,
            arith::ConstantOp, WriteRowsOp, OptimizationBarrierOp>(
          [](auto op) { return getRule(op); })
      .Default([](Operation *) { return std::nullopt; });
}

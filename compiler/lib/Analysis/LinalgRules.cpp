//===- LinalgRules.cpp - rules from indexing maps -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one mechanism behind most rules: a linalg structured op's loops are
// its factors, read off its indexing maps and iterator types; an elementwise
// op is the identity map on every operand and result.
//
//===----------------------------------------------------------------------===//

#include "LinalgRules.h"

#include "dtensor/Analysis/PartialFlow.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;

/// The reduction kind of a single combiner op, if it is a known one.
static std::optional<ReductionKind> getCombinerKind(Operation *combiner) {
  return llvm::TypeSwitch<Operation *, std::optional<ReductionKind>>(combiner)
      .Case<arith::AddFOp, arith::AddIOp>(
          [](auto) { return ReductionKind::Sum; })
      .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp,
            arith::MaxUIOp>([](auto) { return ReductionKind::Max; })
      .Case<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp,
            arith::MinUIOp>([](auto) { return ReductionKind::Min; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The kind of reduction a linalg op performs into its inits: the common
/// combiner of all inits, or std::nullopt when one is not recognised.
static std::optional<ReductionKind> getReductionKind(linalg::LinalgOp op) {
  std::optional<ReductionKind> kind;
  SmallVector<BlockArgument> outputs(op.getRegionOutputArgs());
  for (unsigned position = 0; position < outputs.size(); ++position) {
    SmallVector<Operation *> combiners;
    if (!matchReduction(outputs, position, combiners) ||
        combiners.size() != 1)
      return std::nullopt;
    std::optional<ReductionKind> combinerKind =
        getCombinerKind(combiners.front());
    if (!combinerKind || (kind && *kind != *combinerKind))
      return std::nullopt;
    kind = combinerKind;
  }
  return kind;
}

/// The factor of each result of `map`, where it is a plain loop index.
static TensorFactors getTensorFactors(AffineMap map) {
  TensorFactors factors;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      factors.push_back(dim.getPosition());
    else
      factors.push_back(std::nullopt);
  }
  return factors;
}

std::optional<ShardingRule> dtensor::detail::getLinalgRule(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return std::nullopt;
  ShardingRule rule;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::optional<ReductionKind> reduction;
  if (op.getNumReductionLoops() > 0)
    reduction = getReductionKind(op);
  for (auto [iterator, size] : llvm::zip_equal(iterators, ranges)) {
    ShardingFactor factor;
    factor.size = size;
    if (iterator == utils::IteratorType::reduction) {
      factor.kind = ShardingFactor::Kind::Reduction;
      factor.combiner = reduction;
    }
    rule.factors.push_back(factor);
  }
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    // An init whose value the body reads is accumulated into.
    if (op.isDpsInit(&operand) && op.payloadUsesValueFromOperand(&operand))
      rule.initOperands.push_back(rule.operands.size());
    rule.tensorOperands.push_back(operand.getOperandNumber());
    rule.operands.push_back(
        getTensorFactors(op.getMatchingIndexingMap(&operand)));
  }
  for (OpResult result : op->getResults())
    rule.results.push_back(
        getTensorFactors(op.getIndexingMapMatchingResult(result)));
  rule.partialFlows = getLinalgPartialFlows(op, reduction);
  return rule;
}

/// Elementwise ops on tensors of one shape: every dim is its own parallel
/// factor, shared by all operands and results.
std::optional<ShardingRule>
dtensor::detail::getElementwiseRule(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return std::nullopt;
  ShardingRule rule;
  TensorFactors identity;
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    ShardingFactor factor;
    factor.size = type.getDimSize(dim);
    rule.factors.push_back(factor);
    identity.push_back(static_cast<unsigned>(dim));
  }
  for (OpOperand &operand : op->getOpOperands()) {
    auto operandType = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!operandType || operandType.getShape() != type.getShape())
      return std::nullopt;
    rule.tensorOperands.push_back(operand.getOperandNumber());
    rule.operands.push_back(identity);
  }
  for (Type resultType : op->getResultTypes()) {
    auto resultTensor = dyn_cast<RankedTensorType>(resultType);
    if (!resultTensor || resultTensor.getShape() != type.getShape())
      return std::nullopt;
    rule.results.push_back(identity);
  }
  rule.partialFlows = getElementwisePartialFlows(op);
  return rule;
}

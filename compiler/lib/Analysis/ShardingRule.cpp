//===- ShardingRule.cpp - how an op's dims may be sharded -------*- C++ -*-===//

#include "dtensor/Analysis/ShardingRule.h"

#include "ShapeOpRules.h"
#include "dtensor/Analysis/PartialFlow.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
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

static std::optional<ShardingRule> getLinalgRule(linalg::LinalgOp op) {
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
static std::optional<ShardingRule> getElementwiseRule(Operation *op) {
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

std::optional<ShardingRule> dtensor::getShardingRule(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return getLinalgRule(linalgOp);
  if (std::optional<ShardingRule> rule = detail::getShapeOpRule(op))
    return rule;
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() > 0)
    return getElementwiseRule(op);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// Factor names: i, j, k, ..., z, then f26, f27, ...
static std::string getFactorName(unsigned factor) {
  constexpr unsigned kLetters = 'z' - 'i' + 1;
  if (factor < kLetters)
    return std::string(1, static_cast<char>('i' + factor));
  return "f" + std::to_string(factor);
}

static void printTensorFactors(llvm::raw_ostream &os,
                               const TensorFactors &factors) {
  os << "[";
  llvm::interleaveComma(factors, os, [&](std::optional<unsigned> factor) {
    os << (factor ? getFactorName(*factor) : std::string("-"));
  });
  os << "]";
}

void ShardingRule::print(llvm::raw_ostream &os) const {
  auto printList = [&](ArrayRef<TensorFactors> list) {
    os << "(";
    llvm::interleaveComma(list, os, [&](const TensorFactors &factors) {
      printTensorFactors(os, factors);
    });
    os << ")";
  };
  printList(operands);
  os << " -> ";
  printList(results);
  os << " {";
  llvm::interleaveComma(llvm::enumerate(factors), os, [&](auto entry) {
    const ShardingFactor &factor = entry.value();
    os << getFactorName(entry.index()) << "=";
    if (ShapedType::isDynamic(factor.size))
      os << "?";
    else
      os << factor.size;
    if (factor.isReduction()) {
      os << " reduction<";
      os << (factor.combiner ? stringifyReductionKind(*factor.combiner)
                             : StringRef("unknown"));
      os << ">";
    }
    if (factor.needsEvenSplit)
      os << " even";
    if (factor.blocked)
      os << " blocked";
  });
  os << "}";
  if (!initOperands.empty()) {
    os << " inits [";
    llvm::interleaveComma(initOperands, os);
    os << "]";
  }
  if (partialFlows.empty())
    return;
  os << " partial";
  for (const PartialFlow &flow : partialFlows) {
    os << " {";
    if (flow.operands.empty())
      os << "-";
    llvm::interleaveComma(flow.operands, os);
    os << ": ";
    llvm::interleave(
        flow.kinds, os,
        [&](ReductionKind kind) { os << stringifyReductionKind(kind); }, "|");
    os << "}";
  }
}

//===- PartialFlow.cpp - which operands may be Partial ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Analysis/PartialFlow.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;

/// Subsets of at most this many operands are enumerated (2^6 evaluations of
/// the computation); ops with more operands get no computed flow.
static constexpr unsigned kMaxEnumeratedOperands = 6;

namespace {
/// The degree of a scalar value in the operands assumed Partial.
enum class Degree {
  /// A constant zero: a valid partial value of every kind.
  Zero,
  /// Independent of the Partial operands.
  Const,
  /// An element of a Partial operand, unchanged: moving data commutes with
  /// every reduction kind, max and min included. A special case of Linear.
  Copy,
  /// Homogeneous of degree 1 in the Partial operands: commutes with sum and
  /// avg.
  Linear,
  NonLinear,
};
} // namespace

static bool isConstantDegree(Degree degree) {
  return degree == Degree::Zero || degree == Degree::Const;
}

static bool isLinearDegree(Degree degree) {
  return degree == Degree::Copy || degree == Degree::Linear;
}

/// Computing on a copied element keeps only linearity.
static Degree computeOn(Degree degree) {
  return degree == Degree::Copy ? Degree::Linear : degree;
}

static bool isConstantZero(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

/// The degree of a value that does not depend on any Partial operand.
static Degree getConstantDegree(Value value) {
  return isConstantZero(value) ? Degree::Zero : Degree::Const;
}

/// Either of two values (a select, or successive values of an accumulator):
/// a degree that holds for both. Zero is neutral, and a linear value mixed
/// with a nonzero constant is affine, not linear.
static Degree join(Degree lhs, Degree rhs) {
  if (lhs == Degree::Zero || lhs == rhs)
    return rhs;
  if (rhs == Degree::Zero)
    return lhs;
  if (isLinearDegree(lhs) && isLinearDegree(rhs))
    return Degree::Linear;
  return Degree::NonLinear;
}

static Degree add(Degree lhs, Degree rhs) {
  if (lhs == Degree::Zero)
    return rhs;
  if (rhs == Degree::Zero)
    return lhs;
  return join(computeOn(lhs), computeOn(rhs));
}

static Degree multiply(Degree lhs, Degree rhs) {
  if (lhs == Degree::Zero || rhs == Degree::Zero)
    return Degree::Zero;
  if (lhs == Degree::Const)
    return computeOn(rhs);
  if (rhs == Degree::Const)
    return computeOn(lhs);
  return Degree::NonLinear;
}

static Degree divide(Degree numerator, Degree denominator) {
  if (denominator == Degree::Const)
    return computeOn(numerator);
  // A division by zero is a constant (inf or nan) only for a constant
  // numerator; a linear one gives a sign-dependent infinity.
  if (denominator == Degree::Zero && isConstantDegree(numerator))
    return Degree::Const;
  return Degree::NonLinear;
}

/// The degree of the results of `op`, given the degrees of its operands and
/// a way to find the degree of values its regions capture. Ops that are not
/// linear operations are constant when everything they use is, and
/// non-linear otherwise.
static Degree getOpDegree(Operation *op, ArrayRef<Degree> operands,
                          llvm::function_ref<Degree(Value)> capturedDegree) {
  return llvm::TypeSwitch<Operation *, Degree>(op)
      .Case<arith::AddFOp, arith::AddIOp, arith::SubFOp, arith::SubIOp>(
          [&](Operation *) { return add(operands[0], operands[1]); })
      .Case<arith::MulFOp, arith::MulIOp>(
          [&](Operation *) { return multiply(operands[0], operands[1]); })
      .Case<arith::DivFOp>(
          [&](Operation *) { return divide(operands[0], operands[1]); })
      .Case<arith::NegFOp>([&](Operation *) { return computeOn(operands[0]); })
      // Float precision casts keep values up to rounding, and their order.
      .Case<arith::ExtFOp, arith::TruncFOp>(
          [&](Operation *) { return operands[0]; })
      .Case<arith::SelectOp>([&](Operation *) {
        if (!isConstantDegree(operands[0]))
          return Degree::NonLinear;
        return join(operands[1], operands[2]);
      })
      .Default([&](Operation *op) {
        if (op->hasTrait<OpTrait::ConstantLike>() && op->getNumResults() == 1)
          return getConstantDegree(op->getResult(0));
        bool constant = llvm::all_of(operands, isConstantDegree);
        // Values captured by nested regions count as used, too.
        op->walk([&](Operation *nested) {
          if (nested == op)
            return;
          for (Value operand : nested->getOperands())
            if (!op->isAncestor(operand.getParentRegion()->getParentOp()) &&
                !isConstantDegree(capturedDegree(operand)))
              constant = false;
        });
        return constant ? Degree::Const : Degree::NonLinear;
      });
}

/// The kinds a Partial flow carries when the results have these degrees:
/// every kind for zeros and copies, sum and avg for linear results.
static std::optional<SmallVector<ReductionKind>>
getFlowKinds(ArrayRef<Degree> results) {
  if (results.empty())
    return std::nullopt;
  if (llvm::all_of(results, [](Degree degree) {
        return degree == Degree::Zero || degree == Degree::Copy;
      }))
    return getAllReductionKinds();
  if (llvm::all_of(results, [](Degree degree) {
        return degree == Degree::Zero || isLinearDegree(degree);
      }))
    return SmallVector<ReductionKind>{ReductionKind::Sum, ReductionKind::Avg};
  return std::nullopt;
}

/// Tries every subset of the operands in `usable` (a bitmask over
/// `numOperands` operands), in increasing bitmask order, and keeps those for
/// which `evaluate` finds the results Partial-compatible. The empty subset
/// qualifies only for zero results: constant ones are not partial values.
static SmallVector<PartialFlow> enumerateFlows(
    unsigned numOperands, uint64_t usable,
    llvm::function_ref<SmallVector<Degree>(uint64_t partial)> evaluate) {
  SmallVector<PartialFlow> flows;
  if (numOperands > kMaxEnumeratedOperands)
    return flows;
  for (uint64_t partial = 0; partial < (uint64_t(1) << numOperands);
       ++partial) {
    if (partial & ~usable)
      continue;
    std::optional<SmallVector<ReductionKind>> kinds =
        getFlowKinds(evaluate(partial));
    if (!kinds)
      continue;
    PartialFlow flow;
    for (unsigned operand = 0; operand < numOperands; ++operand)
      if (partial & (uint64_t(1) << operand))
        flow.operands.push_back(operand);
    flow.kinds = std::move(*kinds);
    flows.push_back(std::move(flow));
  }
  return flows;
}

SmallVector<ReductionKind> dtensor::getAllReductionKinds() {
  return {ReductionKind::Sum, ReductionKind::Avg, ReductionKind::Max,
          ReductionKind::Min};
}

//===----------------------------------------------------------------------===//
// Linalg ops
//===----------------------------------------------------------------------===//

/// The degrees of the values a linalg payload yields, given the degree of
/// each block argument.
static SmallVector<Degree> evaluatePayload(linalg::LinalgOp op,
                                           ArrayRef<Degree> argDegrees) {
  Block *body = op.getBlock();
  llvm::DenseMap<Value, Degree> degrees;
  auto degreeOf = [&](Value value) {
    if (auto it = degrees.find(value); it != degrees.end())
      return it->second;
    auto arg = dyn_cast<BlockArgument>(value);
    if (arg && arg.getOwner() == body)
      return argDegrees[arg.getArgNumber()];
    return getConstantDegree(value);
  };
  for (Operation &nested : body->without_terminator()) {
    SmallVector<Degree> operands =
        llvm::map_to_vector(nested.getOperands(), degreeOf);
    Degree degree = getOpDegree(&nested, operands, degreeOf);
    for (Value result : nested.getResults())
      degrees[result] = degree;
  }
  return llvm::map_to_vector(body->getTerminator()->getOperands(), degreeOf);
}

/// The degrees a linalg op yields when the operands set in `partial` are
/// Partial. Across reduction loops an init's block argument holds the init
/// first and then each previous yield, so it takes the join of all of them:
/// a product is linear in its init but not in its input.
static SmallVector<Degree> evaluateLinalgOp(linalg::LinalgOp op,
                                            ArrayRef<bool> partial) {
  SmallVector<Degree> argDegrees;
  for (OpOperand &operand : op->getOpOperands())
    argDegrees.push_back(partial[operand.getOperandNumber()]
                             ? Degree::Copy
                             : getConstantDegree(operand.get()));
  SmallVector<Degree> yields = evaluatePayload(op, argDegrees);
  if (op.getNumReductionLoops() == 0)
    return yields;
  // Accumulator degrees only rise in a finite lattice, so this terminates.
  while (true) {
    bool changed = false;
    for (auto [init, yield] : llvm::zip(op.getDpsInitsMutable(), yields)) {
      Degree &accumulator = argDegrees[init.getOperandNumber()];
      Degree joined = join(accumulator, yield);
      changed |= joined != accumulator;
      accumulator = joined;
    }
    if (!changed)
      return yields;
    yields = evaluatePayload(op, argDegrees);
  }
}

/// The flow of a max (min) reduction: the max of per-rank maxes is the max.
/// It needs each init to be combined directly with an input element, since
/// anything computed on the element in between need not commute with max.
static std::optional<PartialFlow>
getSelectiveFlow(linalg::LinalgOp op, ReductionKind kind,
                 ArrayRef<OpOperand *> tensorOperands) {
  if (kind != ReductionKind::Max && kind != ReductionKind::Min)
    return std::nullopt;
  Block *body = op.getBlock();
  llvm::SmallPtrSet<OpOperand *, 4> partial;
  for (auto [position, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    BlockArgument initArg = op.getMatchingBlockArgument(&init);
    Value yielded = body->getTerminator()->getOperand(position);
    Operation *combiner = yielded.getDefiningOp();
    if (!combiner || combiner->getNumOperands() != 2 ||
        !llvm::is_contained(combiner->getOperands(), initArg))
      return std::nullopt;
    Value other = combiner->getOperand(0) == initArg ? combiner->getOperand(1)
                                                     : combiner->getOperand(0);
    auto inputArg = dyn_cast<BlockArgument>(other);
    if (!inputArg || inputArg.getOwner() != body)
      return std::nullopt;
    OpOperand *input = op.getMatchingOpOperand(inputArg);
    if (!op.isDpsInput(input) || !llvm::is_contained(tensorOperands, input))
      return std::nullopt;
    partial.insert(input);
    partial.insert(&init);
  }
  PartialFlow flow;
  for (auto [index, operand] : llvm::enumerate(tensorOperands))
    if (partial.contains(operand))
      flow.operands.push_back(index);
  flow.kinds.push_back(kind);
  return flow;
}

SmallVector<PartialFlow>
dtensor::getLinalgPartialFlows(linalg::LinalgOp op,
                               std::optional<ReductionKind> reduction) {
  SmallVector<OpOperand *> tensorOperands;
  for (OpOperand &operand : op->getOpOperands())
    if (isa<RankedTensorType>(operand.get().getType()))
      tensorOperands.push_back(&operand);

  // An operand the payload never reads need not be Partial for any flow.
  uint64_t used = 0;
  for (auto [index, operand] : llvm::enumerate(tensorOperands))
    if (index < kMaxEnumeratedOperands &&
        op.payloadUsesValueFromOperand(operand))
      used |= uint64_t(1) << index;

  SmallVector<PartialFlow> flows =
      enumerateFlows(tensorOperands.size(), used, [&](uint64_t partial) {
        SmallVector<bool> partialOperands(op->getNumOperands(), false);
        for (auto [index, operand] : llvm::enumerate(tensorOperands))
          if (partial & (uint64_t(1) << index))
            partialOperands[operand->getOperandNumber()] = true;
        return evaluateLinalgOp(op, partialOperands);
      });
  if (reduction)
    if (std::optional<PartialFlow> flow =
            getSelectiveFlow(op, *reduction, tensorOperands))
      flows.push_back(std::move(*flow));
  return flows;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

SmallVector<PartialFlow> dtensor::getElementwisePartialFlows(Operation *op) {
  unsigned numOperands = op->getNumOperands();
  uint64_t all = (uint64_t(1) << std::min(numOperands, 63u)) - 1;
  return enumerateFlows(numOperands, all, [&](uint64_t partial) {
    // Degrees go by operand position: a value used twice is Partial in
    // both places or in neither.
    SmallVector<Degree> operands;
    for (OpOperand &operand : op->getOpOperands())
      operands.push_back((partial >> operand.getOperandNumber()) & 1
                             ? Degree::Copy
                             : getConstantDegree(operand.get()));
    Degree degree = getOpDegree(op, operands, getConstantDegree);
    return SmallVector<Degree>(op->getNumResults(), degree);
  });
}

//===- GenericAdjoint.cpp - The adjoint of a linalg.generic ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The gradient of input i of a generic, read through map M_i, is a generic
// over the same loops: it reads the forward's inputs through their maps and
// each result's gradient through the result's map, computes the body's
// scalar adjoint with respect to input i, and accumulates it into a tensor
// of input i's shape written through M_i. Loops that M_i does not read are
// the adjoint's reductions: a broadcast read sums the gradient over the
// broadcast dims, and a contraction's adjoint is a contraction with the
// other operand. How a result combines its terms decides its seed:
//
//   parallel result        y = f(ins)            seed dy on f
//   sum reduction          y = out + v(ins)      seed dy on v
//   max/min reduction      y = max(out, v(ins))  seed dy on v where v == y
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;
using namespace dtensor::builders;

namespace {

enum class Combine { Parallel, Sum, MaxMin };

/// How result `k` of `op` combines its terms, and the term `v` (a value of
/// the body) that its gradient seeds; failure when the body combines them
/// otherwise.
FailureOr<std::pair<Combine, Value>> getCombine(linalg::GenericOp op,
                                                unsigned k) {
  Block &body = *op.getBody();
  Value yielded = body.getTerminator()->getOperand(k);
  Value out = body.getArgument(op.getNumDpsInputs() + k);
  bool reduces = op.getNumReductionLoops() > 0;
  if (!reduces)
    return std::make_pair(Combine::Parallel, yielded);
  Operation *combiner = yielded.getDefiningOp();
  if (combiner && combiner->getNumOperands() == 2 &&
      combiner->getBlock() == &body) {
    Value lhs = combiner->getOperand(0), rhs = combiner->getOperand(1);
    Value term = lhs == out ? rhs : rhs == out ? lhs : Value();
    if (term && isa<arith::AddFOp>(combiner))
      return std::make_pair(Combine::Sum, term);
    if (term && isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                    arith::MinNumFOp>(combiner))
      return std::make_pair(Combine::MaxMin, term);
  }
  return failure();
}

/// True when `value` of the body depends on block argument `arg`.
bool dependsOn(Value value, BlockArgument arg) {
  if (value == arg)
    return true;
  Operation *op = value.getDefiningOp();
  if (!op || op->getBlock() != arg.getOwner())
    return false;
  return llvm::any_of(op->getOperands(),
                      [&](Value operand) { return dependsOn(operand, arg); });
}

} // namespace

LogicalResult dtensor::autodiff::differentiateGeneric(linalg::GenericOp op,
                                                      Adjoints &adjoints) {
  OpBuilder &b = adjoints.builder;
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Block &body = *op.getBody();
  unsigned numInputs = op.getNumDpsInputs();
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> loopSizes = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();

  // The results that have a gradient, and how each combines its terms.
  struct Seeded {
    unsigned k;
    Value gradient;
    Combine combine;
    Value term;
  };
  SmallVector<Seeded> seeded;
  for (unsigned k = 0; k < op->getNumResults(); ++k) {
    Value gradient = adjoints.lookup(op->getResult(k));
    if (!gradient)
      continue;
    FailureOr<std::pair<Combine, Value>> combine = getCombine(op, k);
    if (failed(combine))
      return op.emitOpError()
             << "has no gradient rule: result " << k
             << " is reduced by a combination other than a sum, a max or a "
                "min of the running value and a term";
    BlockArgument out = body.getArgument(numInputs + k);
    if (combine->first != Combine::Parallel && dependsOn(combine->second, out))
      return op.emitOpError()
             << "has no gradient rule: the term of reduced result " << k
             << " reads the running value";
    seeded.push_back({k, gradient, combine->first, combine->second});
  }
  if (seeded.empty())
    return success();

  // A sum reduction passes its gradient to its init unchanged.
  for (const Seeded &s : seeded) {
    Value init = op.getDpsInitOperand(s.k)->get();
    if (!adjoints.isActive(init))
      continue;
    if (s.combine != Combine::Sum)
      return op.emitOpError() << "has no gradient rule for its init " << s.k
                              << " (only a sum passes its gradient to it)";
    adjoints.add(loc, init, s.gradient);
  }

  for (unsigned i = 0; i < numInputs; ++i) {
    Value input = op.getDpsInputOperand(i)->get();
    if (!adjoints.isActive(input))
      continue;
    auto inputType = cast<RankedTensorType>(input.getType());
    // The input's dims read at a loop (kept) or at index 0 of a unit dim.
    AffineMap map = maps[i];
    SmallVector<AffineExpr> kept;
    SmallVector<int64_t> keptShape;
    SmallVector<int64_t> unitDims;
    SmallVector<int64_t> offsets(inputType.getRank(), 0);
    llvm::SmallBitVector readLoops(numLoops);
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      if (auto loop = dyn_cast<AffineDimExpr>(expr)) {
        if (readLoops.test(loop.getPosition()))
          return op.emitOpError() << "has no gradient rule for input " << i
                                  << ": it reads a diagonal (loop d"
                                  << loop.getPosition() << " twice)";
        readLoops.set(loop.getPosition());
        kept.push_back(expr);
        keptShape.push_back(inputType.getDimSize(dim));
        continue;
      }
      // A constant index reads one slice of the dim (a unit dim's only
      // one, or one half of rotary's pairs): the gradient goes there.
      auto constant = dyn_cast<AffineConstantExpr>(expr);
      if (constant && constant.getValue() >= 0 &&
          constant.getValue() < inputType.getDimSize(dim)) {
        unitDims.push_back(dim);
        offsets[dim] = constant.getValue();
        continue;
      }
      return op.emitOpError()
             << "has no gradient rule for input " << i << ": its indexing map "
             << AffineMapAttr::get(map) << " reads dim " << dim
             << " at an index that is not a loop";
    }
    SmallVector<utils::IteratorType> iterators;
    for (unsigned loop = 0; loop < numLoops; ++loop)
      iterators.push_back(readLoops.test(loop)
                              ? utils::IteratorType::parallel
                              : utils::IteratorType::reduction);

    // Inputs of the adjoint: the forward's inputs, then for each seeded
    // result its forward value (what a max/min term is compared with, and
    // what a parallel body's `out` reads) and its gradient.
    SmallVector<Value> inputs;
    SmallVector<AffineMap> inputMaps;
    for (unsigned j = 0; j < numInputs; ++j) {
      inputs.push_back(op.getDpsInputOperand(j)->get());
      inputMaps.push_back(maps[j]);
    }
    for (const Seeded &s : seeded) {
      AffineMap resultMap = maps[numInputs + s.k];
      Value forward = s.combine == Combine::Parallel
                          ? op.getDpsInitOperand(s.k)->get()
                          : op->getResult(s.k);
      inputs.append({forward, s.gradient});
      inputMaps.append({resultMap, resultMap});
    }
    // A reduction accumulates into zeros; a parallel adjoint writes each
    // element once and reads no init (elementwise fusion then treats it
    // as the plain map it is).
    Type element = inputType.getElementType();
    bool reduces = readLoops.count() != numLoops;
    Value zero =
        reduces
            ? createFilled(b, loc, keptShape, element,
                           b.getFloatAttr(element, 0))
            : tensor::EmptyOp::create(b, loc, keptShape, element).getResult();
    AffineMap outMap = AffineMap::get(numLoops, 0, kept, context);
    SmallVector<AffineMap> allMaps(inputMaps);
    allMaps.push_back(outMap);
    LogicalResult status = success();
    auto adjoint = linalg::GenericOp::create(
        b, loc, zero.getType(), inputs, ValueRange{zero}, allMaps, iterators,
        [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
          IRMapping mapping;
          for (unsigned j = 0; j < numInputs; ++j)
            mapping.map(body.getArgument(j), args[j]);
          for (auto [index, s] : llvm::enumerate(seeded))
            mapping.map(body.getArgument(numInputs + s.k),
                        args[numInputs + 2 * index]);
          for (Operation &inner : body.without_terminator())
            nested.clone(inner, mapping);
          SmallVector<std::pair<Value, Value>> seeds;
          for (auto [index, s] : llvm::enumerate(seeded)) {
            Value gradient = args[numInputs + 2 * index + 1];
            if (s.combine == Combine::MaxMin) {
              // Only the terms equal to the result get the gradient.
              Value chosen = arith::CmpFOp::create(
                  nested, bodyLoc, arith::CmpFPredicate::OEQ,
                  mapping.lookup(s.term), args[numInputs + 2 * index]);
              Value none = arith::ConstantOp::create(
                  nested, bodyLoc, nested.getFloatAttr(gradient.getType(), 0));
              gradient = arith::SelectOp::create(nested, bodyLoc, chosen,
                                                 gradient, none);
            }
            seeds.push_back({s.term, gradient});
          }
          FailureOr<Value> contribution = scalarAdjoint(
              nested, bodyLoc, body, mapping, seeds, body.getArgument(i));
          Value result;
          if (failed(contribution))
            status = failure();
          if (failed(contribution) || !*contribution)
            result = arith::ConstantOp::create(nested, bodyLoc,
                                               nested.getFloatAttr(element, 0));
          else
            result = *contribution;
          if (reduces)
            result =
                arith::AddFOp::create(nested, bodyLoc, args.back(), result);
          linalg::YieldOp::create(nested, bodyLoc, result);
        });
    if (failed(status)) {
      adjoint->erase();
      return op.emitOpError() << "has no gradient for input " << i;
    }
    Value gradient = adjoint->getResult(0);
    if (!unitDims.empty()) {
      // Back to the input's rank: unit dims where it read one index.
      int64_t rank = inputType.getRank();
      SmallVector<int64_t> sliceShape(inputType.getShape());
      for (int64_t dim : unitDims)
        sliceShape[dim] = 1;
      auto sliceType = RankedTensorType::get(sliceShape, element);
      // Each unit dim joins the group of the next kept dim; trailing ones
      // the last group.
      if (keptShape.empty()) {
        gradient = tensor::ExpandShapeOp::create(
            b, loc, sliceType, gradient, SmallVector<ReassociationIndices>{});
      } else {
        SmallVector<ReassociationIndices> merged;
        ReassociationIndices pending;
        for (int64_t dim = 0; dim < rank; ++dim) {
          pending.push_back(dim);
          if (!llvm::is_contained(unitDims, dim)) {
            merged.push_back(pending);
            pending.clear();
          }
        }
        llvm::append_range(merged.back(), pending);
        gradient =
            tensor::ExpandShapeOp::create(b, loc, sliceType, gradient, merged);
      }
      // Into zeros at the indices read, unless the slice is the whole.
      if (sliceType != inputType) {
        SmallVector<OpFoldResult> offsetValues, sizes, strides;
        for (int64_t dim = 0; dim < rank; ++dim) {
          offsetValues.push_back(b.getIndexAttr(offsets[dim]));
          sizes.push_back(b.getIndexAttr(sliceShape[dim]));
          strides.push_back(b.getIndexAttr(1));
        }
        Value zeros = createFilled(b, loc, inputType.getShape(), element,
                                   b.getFloatAttr(element, 0));
        gradient = tensor::InsertSliceOp::create(b, loc, gradient, zeros,
                                                 offsetValues, sizes, strides);
      }
    }
    adjoints.add(loc, input, gradient);
  }
  return success();
}

//===- Differentiate.cpp - Reverse-mode gradients of a function -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --dtensor-differentiate: a copy of the function that returns the loss and
// its gradients. The forward ops stay as they are (their values are what
// the backward reads); the backward is appended before the return, one rule
// per op from the loss back to the arguments (Adjoints.h). A caller that
// names checkpointed module instances (the training step) gets their
// tensors recomputed in the backward instead (Recompute.cpp).
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Autodiff/BackwardMark.h"
#include "dtensor/Autodiff/Gradient.h"
#include "dtensor/Autodiff/Passes.h"
#include "dtensor/Builders/LinalgBuilders.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/SymbolTable.h"

namespace dtensor {
#define GEN_PASS_DEF_DIFFERENTIATE
#include "dtensor/Autodiff/Passes.h.inc"
} // namespace dtensor

// The sweep's debug output (ReverseSweep.cpp) is under this name too.
#define DEBUG_TYPE "dtensor-differentiate"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;
using namespace dtensor::builders;

void Adjoints::add(Location loc, Value value, Value gradient) {
  Value &slot = gradients[value];
  if (!slot) {
    slot = gradient;
    return;
  }
  // The sizes come from the gradient: a local map's pieces may be dynamic.
  auto type = cast<RankedTensorType>(value.getType());
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(type.getRank(), builder.getContext());
  Value init = tensor::EmptyOp::create(
      builder, loc, tensor::getMixedSizes(builder, loc, slot),
      type.getElementType());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  slot =
      createGeneric(builder, loc, {slot, gradient}, {identity, identity}, init,
                    identity, iterators,
                    [](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                      return SmallVector<Value>{arith::AddFOp::create(
                          nested, bodyLoc, args[0], args[1])};
                    })
          .front();
}

namespace {

/// The gradient of `function`'s result `lossIndex` with respect to its
/// float arguments that `differentiates` selects (by argument number), as a
/// new function named `name` (not inserted); null after an error.
func::FuncOp
buildGradient(func::FuncOp function, StringRef name, unsigned lossIndex,
              llvm::function_ref<bool(unsigned)> differentiates,
              llvm::function_ref<StringRef(Operation *)> checkpointOf) {
  func::FuncOp gradient = function.clone();
  gradient.setName(name);
  auto fail = [&]() {
    gradient->erase();
    return func::FuncOp();
  };
  Block &block = gradient.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Value loss = ret.getOperand(lossIndex);
  auto lossType = dyn_cast<RankedTensorType>(loss.getType());
  if (!isFloatTensor(loss) || !lossType.hasStaticShape() ||
      lossType.getNumElements() != 1) {
    function.emitError() << "result " << lossIndex << " of '"
                         << function.getName() << "' (" << loss.getType()
                         << ") is not a float tensor of one element, so it "
                            "cannot be the loss";
    return fail();
  }

  // The arguments to differentiate.
  SmallVector<BlockArgument> wrt;
  for (BlockArgument arg : block.getArguments())
    if (isFloatTensor(arg) && differentiates(arg.getArgNumber()))
      wrt.push_back(arg);

  // Attention is differentiated whole (AttentionAdjoint.cpp): its forward
  // gives the log-sum-exp that its backward reads.
  SmallVector<Value> wrtValues(wrt.begin(), wrt.end());
  if (failed(prepareAttentions(gradient, variedValues(block, wrtValues))))
    return fail();
  loss = ret.getOperand(lossIndex);

  OpBuilder b(ret);
  Adjoints adjoints(b);
  markActive(block, wrtValues, {loss}, adjoints);

  // The reverse sweep, seeded with d loss / d loss = 1.
  Location loc = ret.getLoc();
  adjoints.add(loc, loss,
               createFilled(b, loc, lossType.getShape(),
                            lossType.getElementType(),
                            b.getFloatAttr(lossType.getElementType(), 1)));
  SmallVector<Operation *> forward;
  for (Operation &op : block.without_terminator())
    forward.push_back(&op);
  if (failed(reverseSweep(forward, adjoints)))
    return fail();

  // Return the loss and the gradients, in argument order.
  SmallVector<Value> results{loss};
  // The op that gives each weight its gradient, for the marks below.
  llvm::DenseMap<Operation *, std::string> gradientOf;
  DictionaryAttr lossAttrs = gradient.getResultAttrDict(lossIndex);
  SmallVector<Attribute> resultAttrs{lossAttrs ? lossAttrs
                                               : b.getDictionaryAttr({})};
  for (BlockArgument arg : wrt) {
    Value value = adjoints.lookup(arg);
    if (!value) {
      auto type = cast<RankedTensorType>(arg.getType());
      value = createFilled(b, loc, type.getShape(), type.getElementType(),
                           b.getFloatAttr(type.getElementType(), 0));
    }
    results.push_back(value);
    auto name = gradient.getArgAttrOfType<StringAttr>(
        arg.getArgNumber(), DTensorDialect::getNameAttrName());
    std::string weightName = name ? name.getValue().str()
                                  : "arg" + std::to_string(arg.getArgNumber());
    std::string gradientName = weightName + ".grad";
    if (Operation *producer = value.getDefiningOp())
      gradientOf.try_emplace(producer, weightName);
    resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        DTensorDialect::getNameAttrName(), b.getStringAttr(gradientName))));
  }
  func::ReturnOp::create(b, loc, results);
  ret->erase();
  // The backward is every op the sweep appended (BackwardMark.h).
  llvm::DenseSet<Operation *> forwardOps(forward.begin(), forward.end());
  for (Operation &op : block.without_terminator())
    if (!forwardOps.contains(&op))
      op.setLoc(autodiff::markBackward(op.getLoc(), gradientOf.lookup(&op)));
  if (checkpointOf)
    recomputeCheckpoints(block, forward, checkpointOf);
  SmallVector<Type> resultTypes;
  for (Value value : results)
    resultTypes.push_back(value.getType());
  gradient.setType(FunctionType::get(gradient.getContext(),
                                     gradient.getFunctionType().getInputs(),
                                     resultTypes));
  gradient.setAllResultAttrs(resultAttrs);
  return gradient;
}

struct Differentiate : dtensor::impl::DifferentiateBase<Differentiate> {
  using DifferentiateBase::DifferentiateBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError() << "--dtensor-differentiate: " << message;
      signalPassFailure();
    };
    if (function.empty())
      return fail("needs function=NAME, the function to differentiate");
    if (wrt != "weights" && wrt != "all")
      return fail("wrt is '" + wrt + "'; expected weights or all");
    auto forward = module.lookupSymbol<func::FuncOp>(function);
    if (!forward || forward.isExternal())
      return fail("no function with a body named '" + function + "'");
    if (!forward.getBody().hasOneBlock())
      return fail("'" + function + "' has more than one block");
    if (result >= forward.getNumResults())
      return fail("'" + function + "' has " + Twine(forward.getNumResults()) +
                  " results; result=" + Twine(result) + " does not name one");
    std::string name =
        gradientFunction.empty() ? function + "_grad" : gradientFunction;
    if (module.lookupSymbol(name))
      return fail("a symbol named '" + name + "' exists already");
    bool all = wrt == "all";
    func::FuncOp gradient = buildGradient(
        forward, name, result,
        [&](unsigned arg) {
          return all ||
                 forward.getArgAttr(arg, DTensorDialect::getWeightAttrName());
        },
        {});
    if (!gradient)
      return signalPassFailure();
    SymbolTable(module).insert(gradient, std::next(forward->getIterator()));
  }
};

} // namespace

func::FuncOp dtensor::autodiff::buildGradientFunction(
    func::FuncOp function, StringRef name, unsigned lossIndex,
    llvm::function_ref<bool(unsigned)> differentiates,
    llvm::function_ref<StringRef(Operation *)> checkpointOf) {
  return buildGradient(function, name, lossIndex, differentiates, checkpointOf);
}

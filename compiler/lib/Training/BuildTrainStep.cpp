//===- BuildTrainStep.cpp - The train_step and eval_step entries ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --dtensor-build-train-step: from the module's training plan, the global
// functions `train_step` (gradient, clipping, schedule, optimizer update;
// weights and optimizer state updated in place) and `eval_step` (the loss).
// `train_step` starts as the forward's gradient function
// (autodiff::buildGradientFunction) and grows the optimizer's state
// arguments and the update before its return (UpdateBuilders.h).
//
//===----------------------------------------------------------------------===//

#include "UpdateBuilders.h"

#include "dtensor/Autodiff/Gradient.h"
#include "dtensor/Builders/LinalgBuilders.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Training/ModulePath.h"
#include "dtensor/Training/Passes.h"
#include "dtensor/Training/TrainingAttr.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

namespace dtensor {
#define GEN_PASS_DEF_BUILDTRAINSTEP
#include "dtensor/Training/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-build-train-step"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;
using namespace dtensor::training;

namespace {

constexpr StringLiteral kTrainStep = "train_step";
constexpr StringLiteral kEvalStep = "eval_step";

/// A weight the step trains: its argument, name and group's settings.
struct Trained {
  unsigned arg;
  std::string name;
  double lr, weightDecay;
};

InFlightDiagnostic planError(ModuleOp module) {
  return module.emitError()
         << "'" << DTensorDialect::getTrainingAttrName() << "': ";
}

/// A rank-0 tensor of `element` holding the rank-0 f64 `value`.
Value toScalarTensor(OpBuilder &b, Location loc, Value value, Type element) {
  return createMap(b, loc, {}, element, {value},
                   {AffineMap::get(0, 0, {}, b.getContext())},
                   [&](OpBuilder &nb, Location l, ValueRange args) {
                     return SmallVector<Value>{round(nb, l, args[0], element)};
                   });
}

/// The replicated layout on the mesh of the first weight that has one.
LayoutAttr replicatedLayout(func::FuncOp function) {
  for (unsigned arg = 0; arg < function.getNumArguments(); ++arg)
    if (auto layout = function.getArgAttrOfType<LayoutAttr>(
            arg, DTensorDialect::getLayoutAttrName())) {
      SmallVector<PlacementAttr> placements(
          layout.getPlacements().size(),
          ReplicateAttr::get(function.getContext()));
      return LayoutAttr::get(function.getContext(), layout.getMesh(),
                             placements);
    }
  return {};
}

/// `eval_step`: the forward returning its loss only.
func::FuncOp buildEvalStep(func::FuncOp forward, unsigned loss) {
  func::FuncOp eval = forward.clone();
  eval.setName(kEvalStep);
  auto ret = cast<func::ReturnOp>(eval.getBody().front().getTerminator());
  Value value = ret.getOperand(loss);
  DictionaryAttr attrs = eval.getResultAttrDict(loss);
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret.getLoc(), value);
  ret->erase();
  eval.setType(FunctionType::get(eval.getContext(),
                                 eval.getFunctionType().getInputs(),
                                 {value.getType()}));
  eval.setAllResultAttrs(
      ArrayRef<DictionaryAttr>{attrs ? attrs : b.getDictionaryAttr({})});
  return eval;
}

class TrainStepBuilder {
public:
  TrainStepBuilder(ModuleOp module, const TrainingPlan &plan)
      : module(module), plan(plan), context(module.getContext()) {}

  LogicalResult run();

private:
  LogicalResult collectTrained(func::FuncOp forward);
  LogicalResult checkCheckpointing(func::FuncOp forward);
  LogicalResult addUpdate(func::FuncOp train);

  ModuleOp module;
  const TrainingPlan &plan;
  MLIRContext *context;
  SmallVector<Trained> trained;
};

LogicalResult TrainStepBuilder::collectTrained(func::FuncOp forward) {
  SmallVector<std::string> weights;
  for (unsigned arg = 0; arg < forward.getNumArguments(); ++arg) {
    auto name = forward.getArgAttrOfType<StringAttr>(
        arg, DTensorDialect::getNameAttrName());
    std::string text = name ? name.str() : "arg" + std::to_string(arg);
    if (forward.getArgAttr(arg, DTensorDialect::getStateAttrName()))
      return planError(module) << "the forward function '" << forward.getName()
                               << "' has state ('" << text
                               << "'); a training step's forward has none";
    auto type = dyn_cast<RankedTensorType>(forward.getArgumentTypes()[arg]);
    if (!forward.getArgAttr(arg, DTensorDialect::getWeightAttrName()) ||
        !type || !isa<FloatType>(type.getElementType()))
      continue;
    weights.push_back(text);
    if (llvm::any_of(plan.frozen, [&](const std::string &pattern) {
          return matchesPattern(pattern, text);
        }))
      continue;
    if (!type.hasStaticShape())
      return planError(module)
             << "the weight '" << text << "' has a dynamic shape";
    trained.push_back(
        {arg, text, plan.optimizer.lr, plan.optimizer.weightDecay});
  }
  for (auto [index, pattern] : llvm::enumerate(plan.frozen))
    if (llvm::none_of(weights, [&](const std::string &weight) {
          return matchesPattern(pattern, weight);
        }))
      return planError(module) << "frozen[" << index << "]: the pattern '"
                               << pattern << "' matches no weight";
  if (trained.empty())
    return planError(module) << "the forward function '" << forward.getName()
                             << "' has no float weight to train"
                             << (weights.empty() ? "" : " (all are frozen)");
  // Groups: the first that matches a weight gives its settings; a pattern
  // that matches no weight is a mistake.
  SmallVector<bool> grouped(trained.size(), false);
  for (auto [index, group] : llvm::enumerate(plan.groups)) {
    for (auto [patternIndex, pattern] : llvm::enumerate(group.patterns))
      if (llvm::none_of(trained, [&](const Trained &weight) {
            return matchesPattern(pattern, weight.name);
          }))
        return planError(module)
               << "groups[" << index << "].params[" << patternIndex
               << "]: the pattern '" << pattern << "' matches no weight";
    for (auto [weightIndex, weight] : llvm::enumerate(trained)) {
      if (grouped[weightIndex] ||
          llvm::none_of(group.patterns, [&](const std::string &pattern) {
            return matchesPattern(pattern, weight.name);
          }))
        continue;
      grouped[weightIndex] = true;
      if (group.lr)
        weight.lr = *group.lr;
      if (group.weightDecay)
        weight.weightDecay = *group.weightDecay;
    }
  }
  return success();
}

/// Each activation_checkpointing pattern matches a module of the forward
/// (the module paths its ops' locations name, and their ancestors).
LogicalResult TrainStepBuilder::checkCheckpointing(func::FuncOp forward) {
  if (!plan.activationCheckpointing)
    return success();
  llvm::StringSet<> modules;
  forward.walk([&](Operation *op) {
    StringRef path = getLocationModule(op->getLoc());
    for (size_t end = path.find('.'); end != StringRef::npos;
         end = path.find('.', end + 1))
      modules.insert(path.take_front(end));
    if (!path.empty())
      modules.insert(path);
  });
  for (auto [index, pattern] : llvm::enumerate(*plan.activationCheckpointing))
    if (llvm::none_of(modules.keys(), [&](StringRef path) {
          return matchModulePattern(pattern, path);
        }))
      return planError(module)
             << "activation_checkpointing[" << index << "]: the pattern '"
             << pattern << "' matches no module of '" << forward.getName()
             << "'";
  return success();
}

LogicalResult TrainStepBuilder::run() {
  auto forward = module.lookupSymbol<func::FuncOp>(plan.function);
  if (!forward || forward.isExternal())
    return planError(module) << "function: no function with a body named '"
                             << plan.function << "'";
  if (!forward.getBody().hasOneBlock())
    return planError(module)
           << "function: '" << plan.function << "' has more than one block";
  if (plan.loss >= static_cast<int64_t>(forward.getNumResults()))
    return planError(module)
           << "loss: '" << plan.function << "' has " << forward.getNumResults()
           << " results; there is no result " << plan.loss;
  for (StringRef name : {kTrainStep, kEvalStep})
    if (module.lookupSymbol(name))
      return planError(module)
             << "a symbol named '" << name << "' exists already";
  if (failed(collectTrained(forward)))
    return failure();

  if (failed(checkCheckpointing(forward)))
    return failure();

  // Only the trained weights: a frozen one gets no gradient. The ops of a
  // checkpointed module are recomputed in the backward.
  std::vector<std::string> checkpointed =
      plan.activationCheckpointing.value_or(std::vector<std::string>());
  auto checkpointOf = [&](Operation *op) {
    return findMatchedModule(checkpointed, getLocationModule(op->getLoc()));
  };
  func::FuncOp train = autodiff::buildGradientFunction(
      forward, kTrainStep, static_cast<unsigned>(plan.loss),
      [&](unsigned arg) {
        return llvm::any_of(trained,
                            [&](const Trained &w) { return w.arg == arg; });
      },
      checkpointed.empty()
          ? llvm::function_ref<StringRef(Operation *)>()
          : llvm::function_ref<StringRef(Operation *)>(checkpointOf));
  if (!train)
    return failure();
  if (failed(addUpdate(train))) {
    train->erase();
    return failure();
  }
  func::FuncOp eval = buildEvalStep(forward, static_cast<unsigned>(plan.loss));
  SymbolTable symbols(module);
  symbols.insert(eval, std::next(forward->getIterator()));
  symbols.insert(train, std::next(forward->getIterator()));
  return success();
}

LogicalResult TrainStepBuilder::addUpdate(func::FuncOp train) {
  Block &block = train.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Location loc = ret.getLoc();
  Builder attrs(context);
  LayoutAttr replicated = replicatedLayout(train);
  StringAttr nameKey = attrs.getStringAttr(DTensorDialect::getNameAttrName());
  StringAttr layoutKey =
      attrs.getStringAttr(DTensorDialect::getLayoutAttrName());
  auto tensorAttrs = [&](StringRef name, Attribute layout, bool state) {
    SmallVector<NamedAttribute> entries{
        NamedAttribute(nameKey, attrs.getStringAttr(name))};
    if (layout)
      entries.push_back(NamedAttribute(layoutKey, layout));
    if (state)
      entries.push_back(attrs.getNamedAttr(DTensorDialect::getStateAttrName(),
                                           attrs.getUnitAttr()));
    return attrs.getDictionaryAttr(entries);
  };

  // The state arguments, after the forward's: each weight's optimizer
  // state (and accumulated gradient), then the counters.
  SmallVector<std::string> stateNames = optimizerStateNames(plan.optimizer);
  bool accumulate = plan.accumulationSteps > 1;
  SmallVector<unsigned> positions;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<Location> locs;
  auto addState = [&](Type type, StringRef name, Attribute layout) {
    positions.push_back(train.getNumArguments());
    types.push_back(type);
    argAttrs.push_back(tensorAttrs(name, layout, /*state=*/true));
    locs.push_back(train.getLoc());
  };
  for (const Trained &weight : trained) {
    Type type = train.getArgumentTypes()[weight.arg];
    Attribute layout = train.getArgAttr(weight.arg, layoutKey);
    for (const std::string &suffix : stateNames)
      addState(type, weight.name + "." + suffix, layout);
    if (accumulate)
      addState(type, weight.name + ".grad_accum", layout);
  }
  auto counterType = RankedTensorType::get({}, attrs.getF32Type());
  addState(counterType, "optimizer.step", replicated);
  if (accumulate)
    addState(counterType, "optimizer.micro_step", replicated);
  unsigned firstState = train.getNumArguments();
  if (failed(train.insertArguments(positions, types, argAttrs, locs)))
    return train.emitError("cannot add the optimizer's state arguments");

  OpBuilder b(ret);
  Value loss = ret.getOperand(0);
  SmallVector<Value> gradients(ret.getOperands().drop_front());
  auto stateArg = [&](unsigned index) {
    return block.getArgument(firstState + index);
  };
  unsigned perWeight = stateNames.size() + (accumulate ? 1 : 0);
  unsigned counters = trained.size() * perWeight;

  StepScalars scalars;
  Value one =
      createScalar(b, loc, {}, [](OpBuilder &nb, Location l, ValueRange) {
        return floatConstant(nb, l, nb.getF64Type(), 1.0);
      });
  Value microNext;
  if (accumulate) {
    // The call's number in its accumulation round; the last one applies.
    double steps = static_cast<double>(plan.accumulationSteps);
    Value micro = createScalar(
        b, loc, {stateArg(counters + 1)},
        [](OpBuilder &nb, Location l, ValueRange args) {
          return arith::AddFOp::create(nb, l, args[0],
                                       floatConstant(nb, l, nb.getF64Type(), 1))
              .getResult();
        });
    scalars.apply = createScalar(
        b, loc, {micro}, [&](OpBuilder &nb, Location l, ValueRange args) {
          Type f64 = nb.getF64Type();
          Value last =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE, args[0],
                                    floatConstant(nb, l, f64, steps));
          return arith::SelectOp::create(nb, l, last,
                                         floatConstant(nb, l, f64, 1),
                                         floatConstant(nb, l, f64, 0))
              .getResult();
        });
    microNext = createScalar(
        b, loc, {micro, scalars.apply},
        [](OpBuilder &nb, Location l, ValueRange args) {
          Value applies =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::ONE, args[1],
                                    floatConstant(nb, l, nb.getF64Type(), 0));
          return arith::SelectOp::create(
                     nb, l, applies, floatConstant(nb, l, nb.getF64Type(), 0),
                     args[0])
              .getResult();
        });
    // The mean of the round's gradients, accumulated in the state.
    for (auto [index, weight] : llvm::enumerate(trained)) {
      Value accum = stateArg(index * perWeight + stateNames.size());
      auto type = cast<RankedTensorType>(accum.getType());
      AffineMap identity = identityMap(context, type.getRank());
      gradients[index] = createMap(
          b, loc, type.getShape(), type.getElementType(),
          {accum, gradients[index]}, {identity, identity},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Type compute = getComputeType(type.getElementType());
            Value g =
                arith::DivFOp::create(nb, l, extend(nb, l, args[1]),
                                      floatConstant(nb, l, compute, steps));
            Value sum = arith::AddFOp::create(nb, l, extend(nb, l, args[0]), g);
            return SmallVector<Value>{round(nb, l, sum, type.getElementType())};
          });
    }
  }
  // t: the update's number, 1-based.
  scalars.step = createScalar(
      b, loc, {stateArg(counters), scalars.apply ? scalars.apply : one},
      [](OpBuilder &nb, Location l, ValueRange args) {
        return arith::AddFOp::create(nb, l, args[0], args[1]).getResult();
      });
  scalars.factor = createScheduleFactor(b, loc, plan.schedule, scalars.step);

  // clip_grad_norm_: one 2-norm over every gradient.
  SmallVector<Value> squares;
  for (Value gradient : gradients)
    squares.push_back(createSquaredNorm(b, loc, gradient));
  Value norm = createScalar(
      b, loc, squares, [](OpBuilder &nb, Location l, ValueRange args) {
        Value sum = args[0];
        for (Value square : args.drop_front())
          sum = arith::AddFOp::create(nb, l, sum, square);
        return math::SqrtOp::create(nb, l, sum).getResult();
      });
  if (plan.clipGradNorm) {
    double maxNorm = *plan.clipGradNorm;
    scalars.clipCoefficient = createScalar(
        b, loc, {norm}, [&](OpBuilder &nb, Location l, ValueRange args) {
          Type f64 = nb.getF64Type();
          Value coefficient = arith::DivFOp::create(
              nb, l, floatConstant(nb, l, f64, maxNorm),
              arith::AddFOp::create(nb, l, args[0],
                                    floatConstant(nb, l, f64, 1e-6)));
          return arith::MinimumFOp::create(nb, l, coefficient,
                                           floatConstant(nb, l, f64, 1.0))
              .getResult();
        });
  }
  if (plan.optimizer.kind == OptimizerConfig::Kind::AdamW) {
    double beta1 = plan.optimizer.beta1, beta2 = plan.optimizer.beta2;
    auto correction = [&](double beta, bool root) {
      return createScalar(b, loc, {scalars.step},
                          [&](OpBuilder &nb, Location l, ValueRange args) {
                            Type f64 = nb.getF64Type();
                            Value power = math::PowFOp::create(
                                nb, l, floatConstant(nb, l, f64, beta),
                                args[0]);
                            Value value = arith::SubFOp::create(
                                nb, l, floatConstant(nb, l, f64, 1.0), power);
                            if (root)
                              value = math::SqrtOp::create(nb, l, value);
                            return value;
                          });
    };
    scalars.biasCorrection1 = correction(beta1, false);
    scalars.biasCorrection2Sqrt = correction(beta2, true);
  }

  // The results: loss, gradient norm, learning rate, then every update.
  Type reportType = cast<RankedTensorType>(loss.getType()).getElementType();
  if (!isa<FloatType>(reportType))
    reportType = attrs.getF32Type();
  SmallVector<Value> results{loss, toScalarTensor(b, loc, norm, reportType)};
  Value lr = createScalar(
      b, loc, {scalars.factor},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return arith::MulFOp::create(
                   nb, l, args[0],
                   floatConstant(nb, l, nb.getF64Type(), plan.optimizer.lr))
            .getResult();
      });
  results.push_back(toScalarTensor(b, loc, lr, reportType));
  DictionaryAttr lossAttrs = train.getResultAttrDict(0);
  SmallVector<DictionaryAttr> resultAttrs{
      lossAttrs ? lossAttrs : attrs.getDictionaryAttr({}),
      tensorAttrs("grad_norm", replicated, false),
      tensorAttrs("lr", replicated, false)};
  auto updates = [&](unsigned arg, Value value) {
    DictionaryAttr argDict = train.getArgAttrDict(arg);
    SmallVector<NamedAttribute> entries;
    if (argDict)
      entries.assign(argDict.begin(), argDict.end());
    llvm::erase_if(entries, [&](NamedAttribute entry) {
      return entry.getName() != nameKey && entry.getName() != layoutKey;
    });
    entries.push_back(attrs.getNamedAttr(DTensorDialect::getUpdatesAttrName(),
                                         attrs.getI64IntegerAttr(arg)));
    results.push_back(value);
    resultAttrs.push_back(attrs.getDictionaryAttr(entries));
  };
  for (auto [index, weight] : llvm::enumerate(trained)) {
    ParameterUpdate update;
    update.parameter = block.getArgument(weight.arg);
    update.gradient = gradients[index];
    for (unsigned i = 0; i < stateNames.size(); ++i)
      update.state.push_back(stateArg(index * perWeight + i));
    update.lr = weight.lr;
    update.weightDecay = weight.weightDecay;
    SmallVector<Value> next =
        createParameterUpdate(b, loc, plan.optimizer, scalars, update);
    updates(weight.arg, next[0]);
    for (unsigned i = 0; i < stateNames.size(); ++i)
      updates(firstState + index * perWeight + i, next[i + 1]);
    if (accumulate) {
      Value accum = stateArg(index * perWeight + stateNames.size());
      auto type = cast<RankedTensorType>(accum.getType());
      AffineMap identity = identityMap(context, type.getRank());
      Value cleared = createMap(
          b, loc, type.getShape(), type.getElementType(),
          {gradients[index], scalars.apply},
          {identity, AffineMap::get(type.getRank(), 0, {}, context)},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value applies =
                arith::CmpFOp::create(nb, l, arith::CmpFPredicate::ONE, args[1],
                                      floatConstant(nb, l, nb.getF64Type(), 0));
            Value zero = floatConstant(nb, l, type.getElementType(), 0);
            return SmallVector<Value>{
                arith::SelectOp::create(nb, l, applies, zero, args[0])};
          });
      updates(firstState + index * perWeight + stateNames.size(), cleared);
    }
  }
  updates(firstState + counters,
          toScalarTensor(b, loc, scalars.step, attrs.getF32Type()));
  if (accumulate)
    updates(firstState + counters + 1,
            toScalarTensor(b, loc, microNext, attrs.getF32Type()));

  func::ReturnOp::create(b, loc, results);
  ret->erase();
  SmallVector<Type> resultTypes;
  for (Value value : results)
    resultTypes.push_back(value.getType());
  train.setType(FunctionType::get(context, train.getFunctionType().getInputs(),
                                  resultTypes));
  train.setAllResultAttrs(resultAttrs);
  return success();
}

struct BuildTrainStep : dtensor::impl::BuildTrainStepBase<BuildTrainStep> {
  using BuildTrainStepBase::BuildTrainStepBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto attr = module->getAttrOfType<DictionaryAttr>(
        DTensorDialect::getTrainingAttrName());
    if (!attr) {
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": no training plan\n");
      return;
    }
    FailureOr<TrainingPlan> plan = decodeTrainingPlan(module, attr);
    if (failed(plan) || failed(TrainStepBuilder(module, *plan).run()))
      signalPassFailure();
  }
};

} // namespace

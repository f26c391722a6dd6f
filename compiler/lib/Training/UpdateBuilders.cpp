//===- UpdateBuilders.cpp - The ops of a training step's update -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The formulas are PyTorch's (torch.optim.SGD and AdamW, single-tensor
// form), in its order of operations: the step's scalars are Python floats
// there, so they are computed here in f64 and rounded to the parameter's
// type where they meet its elements.
//
//===----------------------------------------------------------------------===//

#include "UpdateBuilders.h"

#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;
using namespace dtensor::training;

namespace {

using ValuesBody =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)>;

/// An elementwise generic over `like`'s shape producing its element type:
/// `body` gets the elements of `tensors` (same shape as `like`) in their
/// compute type and the rank-0 f64 `scalars` as f64, and returns one value
/// in the compute type.
Value createElementwise(OpBuilder &b, Location loc, Value like,
                        ValueRange tensors, ValueRange scalars,
                        ValuesBody body) {
  auto type = cast<RankedTensorType>(like.getType());
  Type element = type.getElementType();
  Type compute = getComputeType(element);
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  SmallVector<Value> inputs(tensors.begin(), tensors.end());
  inputs.append(scalars.begin(), scalars.end());
  SmallVector<AffineMap> maps(tensors.size(), identityMap(context, rank));
  maps.append(scalars.size(), AffineMap::get(rank, 0, {}, context));
  size_t numTensors = tensors.size();
  return createMap(
      b, loc, type.getShape(), element, inputs, maps,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        SmallVector<Value> elements;
        for (Value arg : args.take_front(numTensors))
          elements.push_back(convertElement(nested, bodyLoc, arg, compute));
        Value result =
            body(nested, bodyLoc, elements, args.drop_front(numTensors));
        return SmallVector<Value>{round(nested, bodyLoc, result, element)};
      });
}

Value constant(OpBuilder &b, Location loc, Type type, double value) {
  return floatConstant(b, loc, type, value);
}

/// `updated` where the step applies (`apply` null or nonzero), else `old`.
Value keepUnlessApplied(OpBuilder &b, Location loc, Value apply, Value updated,
                        Value old) {
  if (!apply)
    return updated;
  Value zero = constant(b, loc, apply.getType(), 0.0);
  Value applies =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, apply, zero);
  return arith::SelectOp::create(b, loc, applies, updated, old);
}

/// The scalars an update body reads: [apply], [clip coefficient], then
/// `more`; and the positions of each in that list (-1: absent).
struct ScalarInputs {
  SmallVector<Value> values;
  int apply = -1, clip = -1;
  int add(Value value) {
    values.push_back(value);
    return static_cast<int>(values.size()) - 1;
  }
};

ScalarInputs commonScalars(const StepScalars &scalars) {
  ScalarInputs inputs;
  if (scalars.apply)
    inputs.apply = inputs.add(scalars.apply);
  if (scalars.clipCoefficient)
    inputs.clip = inputs.add(scalars.clipCoefficient);
  return inputs;
}

Value scalarAt(ValueRange scalars, int position) {
  return position < 0 ? Value() : scalars[position];
}

/// The gradient element, clipped.
Value clipped(OpBuilder &b, Location loc, Value gradient, ValueRange scalars,
              const ScalarInputs &inputs) {
  Value clip = scalarAt(scalars, inputs.clip);
  if (!clip)
    return gradient;
  return arith::MulFOp::create(
      b, loc, gradient, convertElement(b, loc, clip, gradient.getType()));
}

} // namespace

Value dtensor::training::createScalar(
    OpBuilder &b, Location loc, ValueRange inputs,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps(inputs.size(), AffineMap::get(0, 0, {}, context));
  Type f64 = b.getF64Type();
  return createMap(b, loc, {}, f64, inputs, maps,
                   [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                     SmallVector<Value> wide;
                     for (Value arg : args)
                       wide.push_back(
                           convertElement(nested, bodyLoc, arg, f64));
                     return SmallVector<Value>{body(nested, bodyLoc, wide)};
                   });
}

Value dtensor::training::createScheduleFactor(OpBuilder &b, Location loc,
                                              const Schedule &schedule,
                                              Value step) {
  return createScalar(
      b, loc, {step}, [&](OpBuilder &nb, Location l, ValueRange args) {
        Type f64 = nb.getF64Type();
        Value t = args[0];
        Value one = constant(nb, l, f64, 1.0);
        double warmup = static_cast<double>(schedule.warmupSteps);
        Value decayed = one;
        if (schedule.decay != Schedule::Decay::Constant) {
          double span = static_cast<double>(schedule.totalSteps) - warmup;
          Value progress = arith::DivFOp::create(
              nb, l,
              arith::SubFOp::create(nb, l, t, constant(nb, l, f64, warmup)),
              constant(nb, l, f64, span));
          progress = arith::MinimumFOp::create(nb, l, progress, one);
          double low = schedule.minLrRatio;
          if (schedule.decay == Schedule::Decay::Linear) {
            decayed = arith::SubFOp::create(
                nb, l, one,
                arith::MulFOp::create(nb, l, constant(nb, l, f64, 1.0 - low),
                                      progress));
          } else {
            Value angle = arith::MulFOp::create(
                nb, l, constant(nb, l, f64, M_PI), progress);
            Value half = arith::MulFOp::create(
                nb, l, constant(nb, l, f64, 0.5),
                arith::AddFOp::create(nb, l, one,
                                      math::CosOp::create(nb, l, angle)));
            decayed = arith::AddFOp::create(
                nb, l, constant(nb, l, f64, low),
                arith::MulFOp::create(nb, l, constant(nb, l, f64, 1.0 - low),
                                      half));
          }
        }
        if (schedule.warmupSteps == 0)
          return decayed;
        Value warm =
            arith::DivFOp::create(nb, l, t, constant(nb, l, f64, warmup));
        Value inWarmup = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE,
                                               t, constant(nb, l, f64, warmup));
        return arith::SelectOp::create(nb, l, inWarmup, warm, decayed)
            .getResult();
      });
}

Value dtensor::training::createSquaredNorm(OpBuilder &b, Location loc,
                                           Value gradient) {
  auto type = cast<RankedTensorType>(gradient.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> all;
  for (int64_t dim = 0; dim < rank; ++dim)
    all.push_back(dim);
  Reduction reduction{type.getShape(), all, {b.getF64Type()}, Combiner::Sum};
  return createReduction(
             b, loc, reduction, {gradient}, {identityMap(b.getContext(), rank)},
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value wide = convertElement(nb, l, args[0], nb.getF64Type());
               return SmallVector<Value>{
                   arith::MulFOp::create(nb, l, wide, wide)};
             })
      .front();
}

SmallVector<std::string>
dtensor::training::optimizerStateNames(const OptimizerConfig &optimizer) {
  if (optimizer.kind == OptimizerConfig::Kind::SGD) {
    if (optimizer.momentum == 0)
      return {};
    return {"momentum_buffer"};
  }
  SmallVector<std::string> names{"exp_avg", "exp_avg_sq"};
  if (optimizer.amsgrad)
    names.push_back("max_exp_avg_sq");
  return names;
}

static SmallVector<Value> createSgdUpdate(OpBuilder &b, Location loc,
                                          const OptimizerConfig &opt,
                                          const StepScalars &scalars,
                                          const ParameterUpdate &update) {
  Value p = update.parameter, g = update.gradient;
  double wd = update.weightDecay;
  // d = clip * g (+ weight_decay * p).
  auto direction = [&](OpBuilder &nb, Location l, Value param, Value grad,
                       ValueRange s, const ScalarInputs &inputs) {
    Value d = clipped(nb, l, grad, s, inputs);
    if (wd != 0)
      d = arith::AddFOp::create(
          nb, l, d,
          arith::MulFOp::create(nb, l, constant(nb, l, d.getType(), wd),
                                param));
    return d;
  };
  SmallVector<Value> results;
  Value buffer;
  if (opt.momentum != 0) {
    ScalarInputs inputs = commonScalars(scalars);
    int step = inputs.add(scalars.step);
    Value old = update.state.front();
    buffer = createElementwise(
        b, loc, p, {p, g, old}, inputs.values,
        [&](OpBuilder &nb, Location l, ValueRange e, ValueRange s) {
          Type type = e[0].getType();
          Value d = direction(nb, l, e[0], e[1], s, inputs);
          // buf = momentum * buf + (1 - dampening) * d; the first step's
          // buffer is d itself.
          Value next = arith::AddFOp::create(
              nb, l,
              arith::MulFOp::create(nb, l, e[2],
                                    constant(nb, l, type, opt.momentum)),
              arith::MulFOp::create(
                  nb, l, d, constant(nb, l, type, 1.0 - opt.dampening)));
          Value first =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, s[step],
                                    constant(nb, l, s[step].getType(), 1.0));
          Value chosen = arith::SelectOp::create(nb, l, first, d, next);
          return keepUnlessApplied(nb, l, scalarAt(s, inputs.apply), chosen,
                                   e[2]);
        });
  }
  ScalarInputs inputs = commonScalars(scalars);
  int factor = inputs.add(scalars.factor);
  SmallVector<Value> tensors{p, g};
  if (buffer)
    tensors.push_back(buffer);
  Value param = createElementwise(
      b, loc, p, tensors, inputs.values,
      [&](OpBuilder &nb, Location l, ValueRange e, ValueRange s) {
        Type type = e[0].getType();
        Value d = direction(nb, l, e[0], e[1], s, inputs);
        if (buffer)
          d = opt.nesterov
                  ? arith::AddFOp::create(
                        nb, l, d,
                        arith::MulFOp::create(
                            nb, l, e[2], constant(nb, l, type, opt.momentum)))
                        .getResult()
                  : e[2];
        // p = p - lr * d, lr = group lr * factor (a Python float in
        // PyTorch, rounded to the parameter's type).
        Value lr = convertElement(
            nb, l,
            arith::MulFOp::create(nb, l, s[factor],
                                  constant(nb, l, nb.getF64Type(), update.lr)),
            type);
        Value next = arith::SubFOp::create(nb, l, e[0],
                                           arith::MulFOp::create(nb, l, lr, d));
        return keepUnlessApplied(nb, l, scalarAt(s, inputs.apply), next, e[0]);
      });
  results.push_back(param);
  if (buffer)
    results.push_back(buffer);
  return results;
}

static SmallVector<Value> createAdamWUpdate(OpBuilder &b, Location loc,
                                            const OptimizerConfig &opt,
                                            const StepScalars &scalars,
                                            const ParameterUpdate &update) {
  Value p = update.parameter, g = update.gradient;
  ScalarInputs inputs = commonScalars(scalars);
  // exp_avg.lerp_(grad, 1 - beta1): m + (1 - beta1) * (d - m).
  Value m = createElementwise(
      b, loc, p, {g, update.state[0]}, inputs.values,
      [&](OpBuilder &nb, Location l, ValueRange e, ValueRange s) {
        Type type = e[0].getType();
        Value d = clipped(nb, l, e[0], s, inputs);
        Value next = arith::AddFOp::create(
            nb, l, e[1],
            arith::MulFOp::create(nb, l, constant(nb, l, type, 1.0 - opt.beta1),
                                  arith::SubFOp::create(nb, l, d, e[1])));
        return keepUnlessApplied(nb, l, scalarAt(s, inputs.apply), next, e[1]);
      });
  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2).
  Value v = createElementwise(
      b, loc, p, {g, update.state[1]}, inputs.values,
      [&](OpBuilder &nb, Location l, ValueRange e, ValueRange s) {
        Type type = e[0].getType();
        Value d = clipped(nb, l, e[0], s, inputs);
        Value next = arith::AddFOp::create(
            nb, l,
            arith::MulFOp::create(nb, l, e[1],
                                  constant(nb, l, type, opt.beta2)),
            arith::MulFOp::create(nb, l, arith::MulFOp::create(nb, l, d, d),
                                  constant(nb, l, type, 1.0 - opt.beta2)));
        return keepUnlessApplied(nb, l, scalarAt(s, inputs.apply), next, e[1]);
      });
  Value second = v;
  Value vmax;
  if (opt.amsgrad) {
    vmax = createElementwise(
        b, loc, p, {update.state[2], v}, inputs.values,
        [&](OpBuilder &nb, Location l, ValueRange e, ValueRange s) {
          Value next = arith::MaximumFOp::create(nb, l, e[0], e[1]);
          return keepUnlessApplied(nb, l, scalarAt(s, inputs.apply), next,
                                   e[0]);
        });
    second = vmax;
  }
  int factor = inputs.add(scalars.factor);
  int bc1 = inputs.add(scalars.biasCorrection1);
  int bc2 = inputs.add(scalars.biasCorrection2Sqrt);
  Value param = createElementwise(
      b, loc, p, {p, m, second}, inputs.values,
      [&](OpBuilder &nb, Location l, ValueRange e, ValueRange s) {
        Type type = e[0].getType();
        Type f64 = nb.getF64Type();
        Value lr = arith::MulFOp::create(nb, l, s[factor],
                                         constant(nb, l, f64, update.lr));
        // param.mul_(1 - lr * weight_decay).
        Value decay = arith::SubFOp::create(
            nb, l, constant(nb, l, f64, 1.0),
            arith::MulFOp::create(nb, l, lr,
                                  constant(nb, l, f64, update.weightDecay)));
        Value decayed = arith::MulFOp::create(
            nb, l, e[0], convertElement(nb, l, decay, type));
        // denom = sqrt(v) / sqrt(1 - beta2^t) + eps;
        // param.addcdiv_(m, denom, value=-lr / (1 - beta1^t)).
        Value denom = arith::AddFOp::create(
            nb, l,
            arith::DivFOp::create(nb, l, math::SqrtOp::create(nb, l, e[2]),
                                  convertElement(nb, l, s[bc2], type)),
            constant(nb, l, type, opt.eps));
        Value stepSize = convertElement(
            nb, l, arith::DivFOp::create(nb, l, lr, s[bc1]), type);
        Value next = arith::SubFOp::create(
            nb, l, decayed,
            arith::MulFOp::create(nb, l, stepSize,
                                  arith::DivFOp::create(nb, l, e[1], denom)));
        return keepUnlessApplied(nb, l, scalarAt(s, inputs.apply), next, e[0]);
      });
  SmallVector<Value> results{param, m, v};
  if (vmax)
    results.push_back(vmax);
  return results;
}

SmallVector<Value> dtensor::training::createParameterUpdate(
    OpBuilder &b, Location loc, const OptimizerConfig &optimizer,
    const StepScalars &scalars, const ParameterUpdate &update) {
  if (optimizer.kind == OptimizerConfig::Kind::SGD)
    return createSgdUpdate(b, loc, optimizer, scalars, update);
  return createAdamWUpdate(b, loc, optimizer, scalars, update);
}

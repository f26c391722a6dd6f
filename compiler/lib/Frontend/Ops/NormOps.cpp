//===- NormOps.cpp - layer_norm, rms_norm ---------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A norm is a sum reduction (or two: the mean, then the centred squares, as
// PyTorch's two-pass variance) over the normalized dims into f32, and one
// elementwise op that normalizes. The leading dims stay parallel loops in
// every op, so a sequence-parallel (seq-sharded) norm needs no
// communication; a hidden-sharded one reduces partial sums.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

namespace {
/// The checked inputs of a norm: x, then the optional affine parameters.
struct NormInputs {
  RankedTensorType x;
  /// The normalized dims: the trailing `normalized.size()` dims of x.
  SmallVector<int64_t> normalized;
  SmallVector<int64_t> reduced;
  double count = 1;
  double eps = 0;
};
} // namespace

/// Checks x, `normalized_shape`, `eps` and the parameters (inputs 1..).
static FailureOr<NormInputs> getNormInputs(OpEmitter &emitter,
                                           std::optional<double> defaultEps) {
  for (unsigned i = 0; i < emitter.inputs().size(); ++i)
    if (failed(checkFloatInput(emitter, i)) ||
        (i > 0 && failed(checkSameDtype(emitter, i, 0))))
      return failure();
  NormInputs norm;
  norm.x = emitter.inputType(0);
  if (norm.x.getRank() == 0)
    return emitter.emitInputError(0)
           << "input '" << emitter.inputName(0)
           << "' has shape []; expected at least one dim to normalize";
  FailureOr<SmallVector<int64_t>> normalized =
      emitter.getIntList("normalized_shape", /*allowScalar=*/true,
                         ArrayRef<int64_t>(norm.x.getShape().back()));
  if (failed(normalized))
    return failure();
  ArrayRef<int64_t> shape = norm.x.getShape();
  if (normalized->empty() || normalized->size() > shape.size() ||
      shape.take_back(normalized->size()) != ArrayRef<int64_t>(*normalized))
    return emitter.emitAttrError("normalized_shape")
           << "normalized_shape " << formatShape(*normalized)
           << " is not a non-empty list of the last dims of input '"
           << emitter.inputName(0) << "' " << formatShape(shape);
  norm.normalized = std::move(*normalized);
  for (int64_t dim = shape.size() - norm.normalized.size();
       dim < static_cast<int64_t>(shape.size()); ++dim) {
    norm.reduced.push_back(dim);
    norm.count *= shape[dim];
  }
  for (unsigned i = 1; i < emitter.inputs().size(); ++i)
    if (failed(checkShape(emitter, i, norm.normalized, "(normalized_shape)")))
      return failure();
  FailureOr<double> eps = emitter.getNumber("eps", defaultEps);
  if (failed(eps))
    return failure();
  norm.eps = *eps;
  return norm;
}

/// The map of a parameter of the normalized shape in the iteration space
/// of x.
static AffineMap getParameterMap(MLIRContext *context, const NormInputs &norm) {
  int64_t rank = norm.x.getRank();
  SmallVector<int64_t> leading;
  for (int64_t dim = 0; dim < rank - static_cast<int64_t>(norm.reduced.size());
       ++dim)
    leading.push_back(dim);
  return dropDims(context, rank, leading);
}

EmitResult ops::emitLayerNorm(OpEmitter &emitter) {
  FailureOr<NormInputs> norm = getNormInputs(emitter, 1e-5);
  if (failed(norm))
    return failure();
  OpBuilder &b = emitter.builder;
  MLIRContext *context = b.getContext();
  Location loc = emitter.loc;
  RankedTensorType x = norm->x;
  int64_t rank = x.getRank();
  Type f32 = b.getF32Type();
  Type element = x.getElementType();
  AffineMap identity = identityMap(context, rank);
  AffineMap rowMap = dropDims(context, rank, norm->reduced);
  Reduction reduction{x.getShape(), norm->reduced, {f32}, Combiner::Sum};
  auto meanOf = [&](OpBuilder &nested, Location bodyLoc, Value sum) -> Value {
    return arith::DivFOp::create(
        nested, bodyLoc, sum, floatConstant(nested, bodyLoc, f32, norm->count));
  };

  // The sum, then the sum of squared deviations from the mean.
  Value sum = createReduction(
                  b, loc, reduction, emitter.input(0), identity,
                  [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                    return SmallVector<Value>{extend(nested, bodyLoc, args[0])};
                  })
                  .front();
  Value squares =
      createReduction(
          b, loc, reduction, {emitter.input(0), sum}, {identity, rowMap},
          [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            Value centred = arith::SubFOp::create(
                nested, bodyLoc, extend(nested, bodyLoc, args[0]),
                meanOf(nested, bodyLoc, args[1]));
            return SmallVector<Value>{
                arith::MulFOp::create(nested, bodyLoc, centred, centred)};
          })
          .front();

  // (x - mean) / sqrt(var + eps) * weight + bias.
  SmallVector<Value> inputs{emitter.input(0), sum, squares};
  SmallVector<AffineMap> maps{identity, rowMap, rowMap};
  AffineMap parameterMap = getParameterMap(context, *norm);
  for (unsigned i = 1; i < emitter.inputs().size(); ++i) {
    inputs.push_back(emitter.input(i));
    maps.push_back(parameterMap);
  }
  Value result = createMap(
      b, loc, x.getShape(), element, inputs, maps,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value variance = arith::DivFOp::create(
            nested, bodyLoc, args[2],
            floatConstant(nested, bodyLoc, f32, norm->count));
        Value shifted = arith::AddFOp::create(
            nested, bodyLoc, variance,
            floatConstant(nested, bodyLoc, f32, norm->eps));
        Value scale = math::RsqrtOp::create(nested, bodyLoc, shifted);
        Value centred = arith::SubFOp::create(nested, bodyLoc,
                                              extend(nested, bodyLoc, args[0]),
                                              meanOf(nested, bodyLoc, args[1]));
        Value value = arith::MulFOp::create(nested, bodyLoc, centred, scale);
        if (args.size() > 3)
          value = arith::MulFOp::create(nested, bodyLoc, value,
                                        extend(nested, bodyLoc, args[3]));
        if (args.size() > 4)
          value = arith::AddFOp::create(nested, bodyLoc, value,
                                        extend(nested, bodyLoc, args[4]));
        return SmallVector<Value>{round(nested, bodyLoc, value, element)};
      });
  return SmallVector<Value>{result};
}

/// The machine epsilon of a float type: 2^(1 - precision).
static double getMachineEpsilon(Type element) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(element).getFloatSemantics();
  return std::ldexp(
      1.0, 1 - static_cast<int>(llvm::APFloat::semanticsPrecision(semantics)));
}

EmitResult ops::emitRmsNorm(OpEmitter &emitter) {
  if (failed(checkFloatInput(emitter, 0)))
    return failure();
  FailureOr<NormInputs> norm = getNormInputs(
      emitter, getMachineEpsilon(emitter.inputType(0).getElementType()));
  if (failed(norm))
    return failure();
  OpBuilder &b = emitter.builder;
  MLIRContext *context = b.getContext();
  Location loc = emitter.loc;
  RankedTensorType x = norm->x;
  int64_t rank = x.getRank();
  Type f32 = b.getF32Type();
  Type element = x.getElementType();
  AffineMap identity = identityMap(context, rank);
  AffineMap rowMap = dropDims(context, rank, norm->reduced);
  Reduction reduction{x.getShape(), norm->reduced, {f32}, Combiner::Sum};
  Value squares =
      createReduction(
          b, loc, reduction, emitter.input(0), identity,
          [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            Value value = extend(nested, bodyLoc, args[0]);
            return SmallVector<Value>{
                arith::MulFOp::create(nested, bodyLoc, value, value)};
          })
          .front();

  // x / sqrt(mean(x^2) + eps), rounded to the dtype, then times the weight
  // (PyTorch rounds before it applies the weight).
  SmallVector<Value> inputs{emitter.input(0), squares};
  SmallVector<AffineMap> maps{identity, rowMap};
  if (emitter.inputs().size() > 1) {
    inputs.push_back(emitter.input(1));
    maps.push_back(getParameterMap(context, *norm));
  }
  Value result =
      createMap(b, loc, x.getShape(), element, inputs, maps,
                [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                  Value mean = arith::DivFOp::create(
                      nested, bodyLoc, args[1],
                      floatConstant(nested, bodyLoc, f32, norm->count));
                  Value shifted = arith::AddFOp::create(
                      nested, bodyLoc, mean,
                      floatConstant(nested, bodyLoc, f32, norm->eps));
                  Value scale = math::RsqrtOp::create(nested, bodyLoc, shifted);
                  Value value = arith::MulFOp::create(
                      nested, bodyLoc, extend(nested, bodyLoc, args[0]), scale);
                  value = round(nested, bodyLoc, value, element);
                  if (args.size() > 2) {
                    value = arith::MulFOp::create(
                        nested, bodyLoc, extend(nested, bodyLoc, value),
                        extend(nested, bodyLoc, args[2]));
                    value = round(nested, bodyLoc, value, element);
                  }
                  return SmallVector<Value>{value};
                });
  return SmallVector<Value>{result};
}

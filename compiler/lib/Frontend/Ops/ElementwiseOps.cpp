//===- ElementwiseOps.cpp - arithmetic and activations --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every elementwise op is one linalg.generic whose body computes f16/bf16 in
// f32. Broadcasting follows NumPy: a missing leading dim is dropped from the
// operand's indexing map and a size-1 dim stretched over a larger one is
// read at the constant index 0, so the other dims keep their factors for
// sharding.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

namespace {
enum class BinaryKind { Add, Sub, Mul, Div };
} // namespace

/// `lhs kind rhs` on scalars of one compute type.
static Value createBinary(OpBuilder &b, Location loc, BinaryKind kind,
                          Value lhs, Value rhs) {
  bool isFloat = isa<FloatType>(lhs.getType());
  switch (kind) {
  case BinaryKind::Add:
    return isFloat ? arith::AddFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::AddIOp::create(b, loc, lhs, rhs).getResult();
  case BinaryKind::Sub:
    return isFloat ? arith::SubFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::SubIOp::create(b, loc, lhs, rhs).getResult();
  case BinaryKind::Mul:
    return isFloat ? arith::MulFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MulIOp::create(b, loc, lhs, rhs).getResult();
  case BinaryKind::Div:
    assert(isFloat && "integer division is rejected before");
    return arith::DivFOp::create(b, loc, lhs, rhs);
  }
  llvm_unreachable("unknown binary kind");
}

/// The NumPy broadcast of the shapes of `inputs`, or an error naming the
/// first input that does not fit and the one that set the size it misses.
static FailureOr<SmallVector<int64_t>>
broadcastShapes(OpEmitter &emitter, ArrayRef<unsigned> inputs) {
  size_t rank = 0;
  for (unsigned i : inputs)
    rank = std::max<size_t>(rank, emitter.inputType(i).getRank());
  // Each dim's size so far, and the input that set it (none while 1).
  SmallVector<int64_t> shape(rank, 1);
  SmallVector<std::optional<unsigned>> setBy(rank);
  for (unsigned i : inputs) {
    ArrayRef<int64_t> sizes = emitter.inputType(i).getShape();
    for (size_t fromEnd = 1; fromEnd <= sizes.size(); ++fromEnd) {
      int64_t size = sizes[sizes.size() - fromEnd];
      int64_t &result = shape[rank - fromEnd];
      if (size == 1 || size == result)
        continue;
      if (result == 1) {
        result = size;
        setBy[rank - fromEnd] = i;
        continue;
      }
      unsigned other = *setBy[rank - fromEnd];
      return emitter.emitError()
             << "inputs '" << emitter.inputName(other) << "' "
             << formatShape(emitter.inputType(other).getShape()) << " and '"
             << emitter.inputName(i) << "' " << formatShape(sizes)
             << " cannot be broadcast together: dim -" << fromEnd << " is "
             << result << " vs " << size;
    }
  }
  return shape;
}

/// Why a scalar combined with an integer tensor must be an integer.
static constexpr llvm::StringLiteral kPromotionReason =
    "a float would promote the result to float; there is no type promotion";

/// `a kind b` with broadcasting, or `a kind scalar`.
static EmitResult emitBinary(OpEmitter &emitter, BinaryKind kind) {
  OpBuilder &b = emitter.builder;
  MLIRContext *context = b.getContext();
  RankedTensorType lhs = emitter.inputType(0);
  Type element = lhs.getElementType();
  bool isFloat = isFloatDtype(element);
  if (kind == BinaryKind::Div && !isFloat)
    return emitter.emitInputError(0)
           << "input '" << emitter.inputName(0) << "' has dtype "
           << formatDtype(element)
           << "; div needs a floating-point tensor (PyTorch's true division "
              "of integers gives floats, and there is no type promotion)";
  bool hasScalar = emitter.has("scalar");
  if (emitter.inputs().size() == 2) {
    if (hasScalar)
      return emitter.emitAttrError("scalar")
             << "takes either a second input or 'scalar', not both";
    if (failed(checkSameDtype(emitter, 1, 0)))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = broadcastShapes(emitter, {0, 1});
    if (failed(shape))
      return failure();
    RankedTensorType rhs = emitter.inputType(1);
    Value result = createMap(
        b, emitter.loc, *shape, element, emitter.inputs(),
        {getBroadcastMap(context, lhs.getShape(), *shape),
         getBroadcastMap(context, rhs.getShape(), *shape)},
        [&](OpBuilder &nested, Location loc, ValueRange args) {
          Value value =
              createBinary(nested, loc, kind, extend(nested, loc, args[0]),
                           extend(nested, loc, args[1]));
          return SmallVector<Value>{round(nested, loc, value, element)};
        });
    return SmallVector<Value>{result};
  }

  if (!hasScalar)
    return emitter.emitError() << "takes a second input or 'scalar'";
  FailureOr<TypedAttr> scalarAttr = getScalarAttr(
      emitter, "scalar", element, /*inComputeType=*/true,
      ("input '" + emitter.inputName(0) + "'").str(), kPromotionReason);
  if (failed(scalarAttr))
    return failure();
  AffineMap identity = identityMap(context, lhs.getRank());
  Value result = createMap(
      b, emitter.loc, lhs.getShape(), element, emitter.input(0), identity,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        Value constant = arith::ConstantOp::create(nested, loc, *scalarAttr);
        Value value = createBinary(nested, loc, kind,
                                   extend(nested, loc, args[0]), constant);
        return SmallVector<Value>{round(nested, loc, value, element)};
      });
  return SmallVector<Value>{result};
}

EmitResult ops::emitAdd(OpEmitter &emitter) {
  return emitBinary(emitter, BinaryKind::Add);
}
EmitResult ops::emitSub(OpEmitter &emitter) {
  return emitBinary(emitter, BinaryKind::Sub);
}
EmitResult ops::emitMul(OpEmitter &emitter) {
  return emitBinary(emitter, BinaryKind::Mul);
}
EmitResult ops::emitDiv(OpEmitter &emitter) {
  return emitBinary(emitter, BinaryKind::Div);
}

//===----------------------------------------------------------------------===//
// where, masked_fill
//===----------------------------------------------------------------------===//

namespace {
/// What one branch of a selection reads: an input, or a constant.
struct Choice {
  std::optional<unsigned> input;
  TypedAttr constant;
};
} // namespace

/// `cond != 0` for an element of any dtype (NaN is true, as bool(NaN)).
static Value isNonzero(OpBuilder &b, Location loc, Value cond) {
  Type type = cond.getType();
  if (isa<FloatType>(type))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, cond,
                                 floatConstant(b, loc, type, 0));
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, cond, zero);
}

/// One generic over `shape` picking, per element, `onTrue` where input
/// `cond` is nonzero and `onFalse` elsewhere; inputs are read with NumPy
/// broadcasting. An arith.select, so the branch not taken never enters the
/// result (inf or NaN there stay out, unlike a product with the mask).
static Value createSelect(OpEmitter &emitter, ArrayRef<int64_t> shape,
                          Type element, unsigned cond, Choice onTrue,
                          Choice onFalse) {
  MLIRContext *context = emitter.builder.getContext();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  auto read = [&](unsigned i) {
    inputs.push_back(emitter.input(i));
    maps.push_back(
        getBroadcastMap(context, emitter.inputType(i).getShape(), shape));
    return inputs.size() - 1;
  };
  read(cond);
  std::optional<size_t> trueArg, falseArg;
  if (onTrue.input)
    trueArg = read(*onTrue.input);
  if (onFalse.input)
    falseArg = read(*onFalse.input);
  return createMap(
      emitter.builder, emitter.loc, shape, element, inputs, maps,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        auto value = [&](std::optional<size_t> arg,
                         const Choice &choice) -> Value {
          if (arg)
            return args[*arg];
          return arith::ConstantOp::create(b, loc, choice.constant);
        };
        Value nonzero = isNonzero(b, loc, args[0]);
        Value ifTrue = value(trueArg, onTrue);
        Value ifFalse = value(falseArg, onFalse);
        Value picked =
            arith::SelectOp::create(b, loc, nonzero, ifTrue, ifFalse);
        return SmallVector<Value>{picked};
      });
}

EmitResult ops::emitWhere(OpEmitter &emitter) {
  if (failed(checkSameDtype(emitter, 2, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(emitter, {0, 1, 2});
  if (failed(shape))
    return failure();
  return SmallVector<Value>{createSelect(emitter, *shape,
                                         emitter.inputType(1).getElementType(),
                                         0, Choice{1, {}}, Choice{2, {}})};
}

EmitResult ops::emitMaskedFill(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  RankedTensorType mask = emitter.inputType(1);
  if (!broadcastsTo(mask.getShape(), type.getShape()))
    return emitter.emitInputError(1)
           << "mask '" << emitter.inputName(1) << "' "
           << formatShape(mask.getShape())
           << " does not broadcast to the shape "
           << formatShape(type.getShape()) << " of input '"
           << emitter.inputName(0) << "'";
  Type element = type.getElementType();
  FailureOr<TypedAttr> value = getScalarAttr(
      emitter, "value", element, /*inComputeType=*/false,
      ("input '" + emitter.inputName(0) + "'").str(), kPromotionReason);
  if (failed(value))
    return failure();
  return SmallVector<Value>{createSelect(emitter, type.getShape(), element, 1,
                                         Choice{std::nullopt, *value},
                                         Choice{0, {}})};
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

using ScalarFn = function_ref<Value(OpBuilder &, Location, Value)>;

/// `fn` applied to every element of input 0, in its compute type.
static EmitResult emitUnary(OpEmitter &emitter, bool floatOnly, ScalarFn fn) {
  if (floatOnly && failed(checkFloatInput(emitter, 0)))
    return failure();
  RankedTensorType type = emitter.inputType(0);
  Type element = type.getElementType();
  OpBuilder &b = emitter.builder;
  Value result =
      createMap(b, emitter.loc, type.getShape(), element, emitter.input(0),
                identityMap(b.getContext(), type.getRank()),
                [&](OpBuilder &nested, Location loc, ValueRange args) {
                  Value value = fn(nested, loc, extend(nested, loc, args[0]));
                  return SmallVector<Value>{round(nested, loc, value, element)};
                });
  return SmallVector<Value>{result};
}

/// The math dialect op `OpTy` of every element of a float input.
template <typename OpTy>
static EmitResult emitMath(OpEmitter &emitter) {
  return emitUnary(emitter, /*floatOnly=*/true,
                   [](OpBuilder &b, Location loc, Value x) -> Value {
                     return OpTy::create(b, loc, x);
                   });
}

/// 1 + exp(-x), the denominator of sigmoid and silu.
static Value createOnePlusExpNeg(OpBuilder &b, Location loc, Value x) {
  Value negated = arith::NegFOp::create(b, loc, x);
  Value exp = math::ExpOp::create(b, loc, negated);
  return arith::AddFOp::create(b, loc, floatConstant(b, loc, x.getType(), 1),
                               exp);
}

EmitResult ops::emitNeg(OpEmitter &emitter) {
  return emitUnary(emitter, /*floatOnly=*/false,
                   [](OpBuilder &b, Location loc, Value x) -> Value {
                     if (isa<FloatType>(x.getType()))
                       return arith::NegFOp::create(b, loc, x);
                     Value zero = arith::ConstantOp::create(
                         b, loc, b.getIntegerAttr(x.getType(), 0));
                     return arith::SubIOp::create(b, loc, zero, x);
                   });
}

EmitResult ops::emitExp(OpEmitter &emitter) {
  return emitMath<math::ExpOp>(emitter);
}

EmitResult ops::emitTanh(OpEmitter &emitter) {
  return emitMath<math::TanhOp>(emitter);
}

EmitResult ops::emitSqrt(OpEmitter &emitter) {
  return emitMath<math::SqrtOp>(emitter);
}

EmitResult ops::emitRsqrt(OpEmitter &emitter) {
  return emitMath<math::RsqrtOp>(emitter);
}

EmitResult ops::emitSigmoid(OpEmitter &emitter) {
  // 1 / (1 + exp(-x)): 0 where exp(-x) overflows, as torch.sigmoid.
  return emitUnary(emitter, /*floatOnly=*/true,
                   [](OpBuilder &b, Location loc, Value x) -> Value {
                     return arith::DivFOp::create(
                         b, loc, floatConstant(b, loc, x.getType(), 1),
                         createOnePlusExpNeg(b, loc, x));
                   });
}

EmitResult ops::emitCos(OpEmitter &emitter) {
  return emitMath<math::CosOp>(emitter);
}

EmitResult ops::emitSin(OpEmitter &emitter) {
  return emitMath<math::SinOp>(emitter);
}

EmitResult ops::emitPow(OpEmitter &emitter) {
  if (failed(checkFloatInput(emitter, 0)))
    return failure();
  FailureOr<double> exponent = emitter.getNumber("exponent");
  if (failed(exponent))
    return failure();
  // PyTorch's pow of a tensor and a scalar: 1 for exponent 0 (NaN
  // included), a copy for 1, products for 2, 3 and -2, sqrt, rsqrt and the
  // reciprocal for 0.5, -0.5 and -1, std::pow otherwise (NaN for a negative
  // base and a non-integer exponent).
  if (*exponent == 1)
    return SmallVector<Value>{emitter.input(0)};
  double e = *exponent;
  return emitUnary(
      emitter, /*floatOnly=*/true,
      [&](OpBuilder &b, Location loc, Value x) -> Value {
        Type type = x.getType();
        auto reciprocal = [&](Value value) -> Value {
          return arith::DivFOp::create(b, loc, floatConstant(b, loc, type, 1),
                                       value);
        };
        if (e == 0)
          return floatConstant(b, loc, type, 1);
        if (e == 2)
          return arith::MulFOp::create(b, loc, x, x);
        if (e == 3)
          return arith::MulFOp::create(b, loc,
                                       arith::MulFOp::create(b, loc, x, x), x);
        if (e == -2)
          return reciprocal(arith::MulFOp::create(b, loc, x, x));
        if (e == 0.5)
          return math::SqrtOp::create(b, loc, x);
        if (e == -0.5)
          return math::RsqrtOp::create(b, loc, x);
        if (e == -1)
          return reciprocal(x);
        return math::PowFOp::create(b, loc, x, floatConstant(b, loc, type, e));
      });
}

EmitResult ops::emitRelu(OpEmitter &emitter) {
  // max(x, 0); the float max propagates NaN, as torch.relu does.
  return emitUnary(emitter, /*floatOnly=*/false,
                   [](OpBuilder &b, Location loc, Value x) -> Value {
                     if (isa<FloatType>(x.getType()))
                       return arith::MaximumFOp::create(
                           b, loc, x, floatConstant(b, loc, x.getType(), 0));
                     Value zero = arith::ConstantOp::create(
                         b, loc, b.getIntegerAttr(x.getType(), 0));
                     return arith::MaxSIOp::create(b, loc, x, zero);
                   });
}

EmitResult ops::emitSilu(OpEmitter &emitter) {
  // x * sigmoid(x) = x / (1 + exp(-x)).
  return emitUnary(emitter, /*floatOnly=*/true,
                   [](OpBuilder &b, Location loc, Value x) -> Value {
                     return arith::DivFOp::create(
                         b, loc, x, createOnePlusExpNeg(b, loc, x));
                   });
}

EmitResult ops::emitGelu(OpEmitter &emitter) {
  FailureOr<std::string> approximate =
      emitter.getEnum("approximate", {"none", "tanh"}, StringRef("none"));
  if (failed(approximate))
    return failure();
  bool useTanh = *approximate == "tanh";
  return emitUnary(
      emitter, /*floatOnly=*/true,
      [&](OpBuilder &b, Location loc, Value x) -> Value {
        Type type = x.getType();
        Value half = floatConstant(b, loc, type, 0.5);
        Value one = floatConstant(b, loc, type, 1);
        Value inner;
        if (useTanh) {
          // tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))
          Value cube = arith::MulFOp::create(
              b, loc, arith::MulFOp::create(b, loc, x, x), x);
          Value scaled = arith::MulFOp::create(
              b, loc, floatConstant(b, loc, type, 0.044715), cube);
          Value sum = arith::AddFOp::create(b, loc, x, scaled);
          Value arg = arith::MulFOp::create(
              b, loc, floatConstant(b, loc, type, std::sqrt(2.0 / M_PI)), sum);
          inner = math::TanhOp::create(b, loc, arg);
        } else {
          // erf(x / sqrt(2))
          Value arg = arith::MulFOp::create(
              b, loc, x, floatConstant(b, loc, type, M_SQRT1_2));
          inner = math::ErfOp::create(b, loc, arg);
        }
        Value factor = arith::AddFOp::create(b, loc, one, inner);
        Value halfX = arith::MulFOp::create(b, loc, half, x);
        return arith::MulFOp::create(b, loc, halfX, factor);
      });
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

EmitResult ops::emitCast(OpEmitter &emitter) {
  FailureOr<Type> dtype = getDtypeAttr(emitter, "dtype");
  if (failed(dtype))
    return failure();
  RankedTensorType type = emitter.inputType(0);
  if (type.getElementType() == *dtype)
    return SmallVector<Value>{emitter.input(0)};
  OpBuilder &b = emitter.builder;
  Value result = createMap(
      b, emitter.loc, type.getShape(), *dtype, emitter.input(0),
      identityMap(b.getContext(), type.getRank()),
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        return SmallVector<Value>{convertElement(nested, loc, args[0], *dtype)};
      });
  return SmallVector<Value>{result};
}

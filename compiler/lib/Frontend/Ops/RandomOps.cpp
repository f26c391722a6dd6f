//===- RandomOps.cpp - rand, randn, rand_like, dropout, bernoulli ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Random ops draw from the runtime's counter-based generator
// (dtensor/Formats/Random.h), emitted as arithmetic: the step's seed
// (dtensor.step_seed) is mixed with the hash of the op's output name into
// the op's stream key, outside the loops; each element then mixes the key
// with its global row-major index, computed from linalg.index and the
// global shape's strides. After partitioning linalg.index is global, so
// every rank computes its shard's elements of the one global tensor, and a
// replicated tensor is the same on every rank without communication.
//
// Element i of an op of stream key k draws w_j = mix(k + (2i + j + 1) *
// gamma): `rand` keeps the top bits of w_0 that the dtype's significand
// holds, `randn` is Box-Muller over the top 53 bits of w_0 and w_1 in f64,
// and dropout and bernoulli compare the f32 uniform (24 bits of w_0) with
// the probability. The values equal fillBox (rand, randn) of the op's
// stream seed bit for bit.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Formats/Random.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;
namespace rng = dtensor::rt::counter_rng;

//===----------------------------------------------------------------------===//
// The generator as arithmetic
//===----------------------------------------------------------------------===//

static Value i64Constant(OpBuilder &b, Location loc, uint64_t value) {
  return arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(static_cast<int64_t>(value)));
}

/// SplitMix64's finaliser on an i64 (rng::mix).
static Value emitMix(OpBuilder &b, Location loc, Value z) {
  auto step = [&](Value value, unsigned shift, std::optional<uint64_t> mul) {
    Value shifted = arith::ShRUIOp::create(b, loc, value,
                                           i64Constant(b, loc, shift));
    Value mixed = arith::XOrIOp::create(b, loc, value, shifted);
    return mul ? Value(arith::MulIOp::create(b, loc, mixed,
                                             i64Constant(b, loc, *mul)))
               : mixed;
  };
  z = step(z, rng::kShift0, rng::kMix1);
  z = step(z, rng::kShift1, rng::kMix2);
  return step(z, rng::kShift2, std::nullopt);
}

/// The key of the op's stream in the running step:
/// streamKey(streamSeed(step seed, nameHash(output name))).
static Value emitStreamKey(OpEmitter &emitter) {
  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  const JsonNode *output = emitter.getNode("output");
  // A single output: `output`, or `outputs` with one name (the importer
  // checked which).
  const JsonNode *outputs = output ? nullptr : emitter.getNode("outputs");
  llvm::StringRef name = output ? llvm::StringRef(output->string)
                                : llvm::StringRef(outputs->elements[0].string);
  Value seed = dtensor::StepSeedOp::create(b, loc, b.getI64Type());
  Value hashed = i64Constant(b, loc, rng::nameHash(name) * rng::kGamma);
  Value streamSeed = emitMix(b, loc, arith::AddIOp::create(b, loc, seed,
                                                           hashed));
  return emitMix(b, loc,
                 arith::XOrIOp::create(b, loc, streamSeed,
                                       i64Constant(b, loc, rng::kGamma)));
}

namespace {
/// What a body draws from: the element's global row-major index.
struct ElementDraws {
  OpBuilder &b;
  Location loc;
  Value key;
  Value index;

  /// Word `j` of the element: mix(key + (2 * index + j + 1) * gamma).
  Value word(unsigned j) {
    Value twice = arith::ShLIOp::create(b, loc, index, i64Constant(b, loc, 1));
    Value counter =
        arith::AddIOp::create(b, loc, twice, i64Constant(b, loc, j + 1));
    Value scaled = arith::MulIOp::create(b, loc, counter,
                                         i64Constant(b, loc, rng::kGamma));
    return emitMix(b, loc, arith::AddIOp::create(b, loc, key, scaled));
  }

  /// Uniform [0, 1) in f64 from the top `bits` bits of word `j` (exact).
  Value uniform(unsigned j, unsigned bits) {
    Value top = arith::ShRUIOp::create(b, loc, word(j),
                                       i64Constant(b, loc, 64 - bits));
    Value asFloat = arith::UIToFPOp::create(b, loc, b.getF64Type(), top);
    return arith::MulFOp::create(
        b, loc, asFloat,
        floatConstant(b, loc, b.getF64Type(), std::ldexp(1.0, -int(bits))));
  }

  /// Standard normal in f64: sqrt(-2 ln(1 - u0)) * cos(2 pi u1).
  Value normal() {
    Type f64 = b.getF64Type();
    Value u0 = uniform(0, 53), u1 = uniform(1, 53);
    Value complement =
        arith::SubFOp::create(b, loc, floatConstant(b, loc, f64, 1.0), u0);
    Value log = math::LogOp::create(b, loc, complement);
    Value radius = math::SqrtOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, floatConstant(b, loc, f64, -2.0), log));
    Value angle = arith::MulFOp::create(
        b, loc, floatConstant(b, loc, f64, 6.283185307179586476925286766559),
        u1);
    return arith::MulFOp::create(b, loc, radius,
                                 math::CosOp::create(b, loc, angle));
  }
};
} // namespace

/// The significand bits of a uniform of `element` (as fillBox): 24 (f32),
/// 11 (f16), 8 (bf16).
static unsigned uniformBits(Type element) {
  if (element.isF16())
    return 11;
  if (element.isBF16())
    return 8;
  return 24;
}

/// An f64 value rounded to `element` as fillBox stores it: to f32, then
/// from f32 to f16 or bf16.
static Value roundSample(OpBuilder &b, Location loc, Value value,
                         Type element) {
  Value f32 = arith::TruncFOp::create(b, loc, b.getF32Type(), value);
  return round(b, loc, f32, element);
}

using DrawBody = llvm::function_ref<Value(ElementDraws &, ValueRange)>;

/// A parallel generic over `shape` with result `element` whose body draws
/// from the op's stream: `inputs` are read elementwise (same shape).
static Value createRandomMap(OpEmitter &emitter, ArrayRef<int64_t> shape,
                             Type element, ValueRange inputs, DrawBody body) {
  OpBuilder &b = emitter.builder;
  Value key = emitStreamKey(emitter);
  // Row-major strides of the global shape.
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  SmallVector<AffineMap> maps(inputs.size(),
                              identityMap(b.getContext(), shape.size()));
  return createMap(
      b, emitter.loc, shape, element, inputs, maps,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        Value index = i64Constant(nested, loc, 0);
        for (auto [d, stride] : llvm::enumerate(strides)) {
          Value position = arith::IndexCastOp::create(
              nested, loc, nested.getI64Type(),
              linalg::IndexOp::create(nested, loc, d));
          Value term = stride == 1
                           ? position
                           : Value(arith::MulIOp::create(
                                 nested, loc, position,
                                 i64Constant(nested, loc, stride)));
          index = arith::AddIOp::create(nested, loc, index, term);
        }
        ElementDraws draws{nested, loc, key, index};
        return SmallVector<Value>{body(draws, args)};
      });
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// The dtype attribute of a random result (default `defaultDtype`): f32,
/// f16 or bf16.
static FailureOr<Type> getRandomDtype(OpEmitter &emitter,
                                      std::optional<Type> defaultDtype) {
  FailureOr<Type> dtype =
      defaultDtype && !emitter.has("dtype")
          ? FailureOr<Type>(*defaultDtype)
          : getDtypeAttr(emitter, "dtype", StringRef("f32"));
  if (failed(dtype))
    return failure();
  if (!isFloatDtype(*dtype))
    return emitter.emitAttrError("dtype")
           << emitter.opName() << " draws floating-point values (f32, f16 or "
           << "bf16), not " << formatDtype(*dtype);
  return dtype;
}

/// A probability attribute `key` in [0, 1] (default `defaultValue`).
static FailureOr<double> getProbability(OpEmitter &emitter, StringRef key,
                                        std::optional<double> defaultValue) {
  FailureOr<double> p = emitter.getNumber(key, defaultValue);
  if (failed(p))
    return failure();
  if (!(*p >= 0.0 && *p <= 1.0))
    return emitter.emitAttrError(key)
           << key << " is a probability, between 0 and 1; got "
           << formatNumber(*p);
  return p;
}

//===----------------------------------------------------------------------===//
// rand, randn, rand_like
//===----------------------------------------------------------------------===//

/// Uniform [0, 1) (`normal` false) or standard normal values of `shape`.
static Value createDraws(OpEmitter &emitter, ArrayRef<int64_t> shape,
                         Type element, bool normal) {
  return createRandomMap(
      emitter, shape, element, ValueRange(),
      [&](ElementDraws &draws, ValueRange) {
        Value sample = normal ? draws.normal()
                              : draws.uniform(0, uniformBits(element));
        return roundSample(draws.b, draws.loc, sample, element);
      });
}

static EmitResult emitFactory(OpEmitter &emitter, bool normal) {
  FailureOr<SmallVector<int64_t>> shape = getShapeAttr(emitter);
  if (failed(shape))
    return failure();
  FailureOr<Type> dtype = getRandomDtype(emitter, std::nullopt);
  if (failed(dtype))
    return failure();
  return SmallVector<Value>{createDraws(emitter, *shape, *dtype, normal)};
}

EmitResult ops::emitRand(OpEmitter &emitter) {
  return emitFactory(emitter, /*normal=*/false);
}

EmitResult ops::emitRandn(OpEmitter &emitter) {
  return emitFactory(emitter, /*normal=*/true);
}

EmitResult ops::emitRandLike(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  if (!emitter.has("dtype") && !isFloatDtype(type.getElementType()))
    return emitter.emitInputError(0)
           << "input '" << emitter.inputName(0) << "' has dtype "
           << formatDtype(type.getElementType())
           << "; rand_like draws floating-point values: give a dtype (f32, "
              "f16 or bf16)";
  FailureOr<Type> dtype = getRandomDtype(emitter, type.getElementType());
  if (failed(dtype))
    return failure();
  return SmallVector<Value>{
      createDraws(emitter, type.getShape(), *dtype, /*normal=*/false)};
}

//===----------------------------------------------------------------------===//
// dropout, bernoulli
//===----------------------------------------------------------------------===//

/// The uniform a mask compares with its probability: the f32 `rand` of the
/// element, in f64.
static Value maskUniform(ElementDraws &draws) { return draws.uniform(0, 24); }

EmitResult ops::emitDropout(OpEmitter &emitter) {
  if (failed(checkFloatInput(emitter, 0)))
    return failure();
  FailureOr<double> p = getProbability(emitter, "p", 0.5);
  if (failed(p))
    return failure();
  FailureOr<bool> training = emitter.getBool("training", true);
  if (failed(training))
    return failure();
  if (!*training)
    return SmallVector<Value>{emitter.input(0)};
  // PyTorch: x * noise, noise = (kept ? 1 / (1 - p) : 0) in x's dtype; an
  // element is kept when its uniform is at least p (probability 1 - p).
  RankedTensorType type = emitter.inputType(0);
  Type element = type.getElementType();
  Type compute = getComputeType(element);
  double scale = *p < 1.0 ? 1.0 / (1.0 - *p) : 0.0;
  return SmallVector<Value>{createRandomMap(
      emitter, type.getShape(), element, emitter.input(0),
      [&](ElementDraws &draws, ValueRange args) {
        OpBuilder &b = draws.b;
        Location loc = draws.loc;
        Value kept = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OGE, maskUniform(draws),
            floatConstant(b, loc, b.getF64Type(), *p));
        Value keptScale =
            extend(b, loc, floatConstant(b, loc, element, scale));
        Value noise = arith::SelectOp::create(
            b, loc, kept, keptScale, floatConstant(b, loc, compute, 0.0));
        Value product =
            arith::MulFOp::create(b, loc, extend(b, loc, args[0]), noise);
        return round(b, loc, product, element);
      })};
}

EmitResult ops::emitBernoulli(OpEmitter &emitter) {
  if (failed(checkFloatInput(emitter, 0)))
    return failure();
  std::optional<double> p;
  if (emitter.has("p")) {
    FailureOr<double> given = getProbability(emitter, "p", std::nullopt);
    if (failed(given))
      return failure();
    p = *given;
  }
  // torch.bernoulli: 1 where the element's uniform is below its
  // probability (the input's element, or `p` for all), else 0.
  RankedTensorType type = emitter.inputType(0);
  Type element = type.getElementType();
  SmallVector<Value> inputs;
  if (!p)
    inputs.push_back(emitter.input(0));
  return SmallVector<Value>{createRandomMap(
      emitter, type.getShape(), element, inputs,
      [&](ElementDraws &draws, ValueRange args) {
        OpBuilder &b = draws.b;
        Location loc = draws.loc;
        Value probability =
            p ? floatConstant(b, loc, b.getF64Type(), *p)
              : Value(arith::ExtFOp::create(b, loc, b.getF64Type(), args[0]));
        Value hit = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                          maskUniform(draws), probability);
        return arith::SelectOp::create(b, loc, hit,
                                       floatConstant(b, loc, element, 1.0),
                                       floatConstant(b, loc, element, 0.0))
            .getResult();
      })};
}

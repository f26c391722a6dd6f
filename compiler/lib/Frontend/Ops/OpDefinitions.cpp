//===- OpDefinitions.cpp - The op kinds of the model plan -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one table of the plan's op kinds: what the importer checks and calls,
// and what docs/model-plan.schema.json, docs/model-plan-op-table.md, the
// exporter (python/dtensor_export) and the PyTorch reference
// (python/dtensor_testing/torch_model.py) are checked against by the tests
// under test/Docs, test/Frontend/schema and test/Export. The attributes of
// an entry are those its emit function reads (FrontendOpsTest checks that
// no emitter reads one the table lacks).
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

namespace {
constexpr unsigned kAnyNumber = kAnyNumberOfInputs;

using K = PlanAttrKind;
constexpr bool kRequired = true;
constexpr bool kOptional = false;

// The attributes of each op kind (or family of kinds that share them).
const PlanOpAttr kBinaryAttrs[] = {{"scalar", K::Number}};
const PlanOpAttr kPowAttrs[] = {{"exponent", K::Number, kRequired}};
const PlanOpAttr kGeluAttrs[] = {
    {"approximate", K::String, kOptional, "\"none\""}};
const PlanOpAttr kCastAttrs[] = {{"dtype", K::Dtype, kRequired}};
const PlanOpAttr kMaskedFillAttrs[] = {{"value", K::Number, kRequired}};
const PlanOpAttr kSoftmaxAttrs[] = {{"dim", K::Integer, kOptional, "-1"}};
const PlanOpAttr kCrossEntropyAttrs[] = {
    {"reduction", K::String, kOptional, "\"mean\""},
    {"ignore_index", K::Integer, kOptional, "-100"}};
/// normalized_shape defaults to the last dim; rms_norm's eps to the machine
/// epsilon of the dtype (torch.nn.RMSNorm).
const PlanOpAttr kLayerNormAttrs[] = {{"normalized_shape", K::IntOrIntList},
                                      {"eps", K::Number, kOptional, "1e-05"}};
const PlanOpAttr kRmsNormAttrs[] = {{"normalized_shape", K::IntOrIntList},
                                    {"eps", K::Number}};
const PlanOpAttr kIndexSelectAttrs[] = {{"dim", K::Integer, kRequired}};
const PlanOpAttr kTransposeAttrs[] = {{"dim0", K::Integer, kRequired},
                                      {"dim1", K::Integer, kRequired}};
const PlanOpAttr kPermuteAttrs[] = {{"dims", K::IntList, kRequired}};
const PlanOpAttr kReshapeAttrs[] = {{"shape", K::Shape, kRequired}};
const PlanOpAttr kUnsqueezeAttrs[] = {{"dim", K::Integer, kRequired}};
/// Without dim: every size-1 dim.
const PlanOpAttr kSqueezeAttrs[] = {{"dim", K::IntOrIntList}};
const PlanOpAttr kRepeatInterleaveAttrs[] = {{"repeats", K::Integer, kRequired},
                                             {"dim", K::Integer, kRequired}};
const PlanOpAttr kConcatAttrs[] = {{"dim", K::Integer, kOptional, "0"}};
const PlanOpAttr kSplitAttrs[] = {
    {"split_size_or_sections", K::IntOrIntList, kRequired},
    {"dim", K::Integer, kOptional, "0"}};
/// end defaults to the dim's size.
const PlanOpAttr kSliceAttrs[] = {{"dim", K::Integer, kOptional, "0"},
                                  {"start", K::Integer, kOptional, "0"},
                                  {"end", K::Integer},
                                  {"step", K::Integer, kOptional, "1"}};
const PlanOpAttr kRotaryAttrs[] = {
    {"theta", K::Number, kOptional, "10000.0"},
    {"seq_dim", K::Integer, kOptional, "-3"},
    {"position_offset", K::Integer, kOptional, "0"}};
/// scale defaults to 1/sqrt(E).
const PlanOpAttr kAttentionAttrs[] = {
    {"is_causal", K::Boolean, kOptional, "false"},
    {"scale", K::Number},
    {"enable_gqa", K::Boolean, kOptional, "false"},
    {"query_positions", K::Boolean, kOptional, "false"}};
/// Without dim: every dim.
const PlanOpAttr kReductionAttrs[] = {
    {"dim", K::IntOrIntList}, {"keepdim", K::Boolean, kOptional, "false"}};
const PlanOpAttr kArgmaxAttrs[] = {{"dim", K::Integer, kRequired},
                                   {"keepdim", K::Boolean, kOptional, "false"}};
/// dtype defaults to i64 when start, end and step are integers, else f32.
const PlanOpAttr kArangeAttrs[] = {{"start", K::Number, kOptional, "0"},
                                   {"end", K::Number, kRequired},
                                   {"step", K::Number, kOptional, "1"},
                                   {"dtype", K::Dtype}};
const PlanOpAttr kFullAttrs[] = {{"shape", K::Shape, kRequired},
                                 {"value", K::Number, kRequired},
                                 {"dtype", K::Dtype, kOptional, "\"f32\""}};
const PlanOpAttr kFillAttrs[] = {{"shape", K::Shape, kRequired},
                                 {"dtype", K::Dtype, kOptional, "\"f32\""}};
const PlanOpAttr kRandAttrs[] = {{"shape", K::Shape, kRequired},
                                 {"dtype", K::Dtype, kOptional, "\"f32\""}};
/// dtype defaults to the input's (which must then be floating-point).
const PlanOpAttr kRandLikeAttrs[] = {{"dtype", K::Dtype}};
const PlanOpAttr kDropoutAttrs[] = {
    {"p", K::Number, kOptional, "0.5"},
    {"training", K::Boolean, kOptional, "true"}};
/// Without p: the input holds the probabilities.
const PlanOpAttr kBernoulliAttrs[] = {{"p", K::Number}};

constexpr llvm::ArrayRef<PlanOpAttr> kNone = {};
// floatOutput, differentiable.
constexpr bool kFloat = true, kNotFloat = false;
constexpr bool kGradient = true, kNoGradient = false;

/// Sorted by name (lookupOpDefinition searches it).
const OpDefinition kDefinitions[] = {
    {"add", 1, 2, 1, emitAdd, "a, b", kBinaryAttrs, kFloat, kGradient},
    {"arange", 0, 0, 1, emitArange, "", kArangeAttrs, kFloat, kNoGradient},
    {"argmax", 1, 1, 1, emitArgmax, "x", kArgmaxAttrs, kNotFloat, kNoGradient},
    {"bernoulli", 1, 1, 1, emitBernoulli, "probs", kBernoulliAttrs, kFloat,
     kNoGradient},
    {"bmm", 2, 2, 1, emitBmm, "a, b", kNone, kFloat, kGradient},
    {"cache_write", 4, 4, 1, emitCacheWrite, "cache, values, slots, positions",
     kNone, kFloat, kGradient},
    {"cast", 1, 1, 1, emitCast, "x", kCastAttrs, kFloat, kGradient},
    {"concat", 1, kAnyNumber, 1, emitConcat, "tensors", kConcatAttrs, kFloat,
     kGradient},
    {"cos", 1, 1, 1, emitCos, "x", kNone, kFloat, kGradient},
    {"cross_entropy", 2, 2, 1, emitCrossEntropy, "logits, target",
     kCrossEntropyAttrs, kFloat, kGradient},
    {"div", 1, 2, 1, emitDiv, "a, b", kBinaryAttrs, kFloat, kGradient},
    {"dropout", 1, 1, 1, emitDropout, "x", kDropoutAttrs, kFloat, kGradient},
    {"embedding", 2, 2, 1, emitEmbedding, "ids, table", kNone, kFloat,
     kGradient},
    {"exp", 1, 1, 1, emitExp, "x", kNone, kFloat, kGradient},
    {"expand", 1, 1, 1, emitExpand, "x", kReshapeAttrs, kFloat, kGradient},
    {"full", 0, 0, 1, emitFull, "", kFullAttrs, kFloat, kNoGradient},
    {"gelu", 1, 1, 1, emitGelu, "x", kGeluAttrs, kFloat, kGradient},
    {"index_select", 2, 2, 1, emitIndexSelect, "x, index", kIndexSelectAttrs,
     kFloat, kGradient},
    {"layer_norm", 1, 3, 1, emitLayerNorm, "x, weight, bias", kLayerNormAttrs,
     kFloat, kGradient},
    {"linear", 2, 3, 1, emitLinear, "x, weight, bias", kNone, kFloat,
     kGradient},
    {"log_softmax", 1, 1, 1, emitLogSoftmax, "x", kSoftmaxAttrs, kFloat,
     kGradient},
    {"masked_fill", 2, 2, 1, emitMaskedFill, "x, mask", kMaskedFillAttrs,
     kFloat, kGradient},
    {"matmul", 2, 2, 1, emitMatmul, "a, b", kNone, kFloat, kGradient},
    {"max", 1, 1, 1, emitMax, "x", kReductionAttrs, kFloat, kGradient},
    {"mean", 1, 1, 1, emitMean, "x", kReductionAttrs, kFloat, kGradient},
    {"mul", 1, 2, 1, emitMul, "a, b", kBinaryAttrs, kFloat, kGradient},
    {"neg", 1, 1, 1, emitNeg, "x", kNone, kFloat, kGradient},
    {"ones", 0, 0, 1, emitOnes, "", kFillAttrs, kFloat, kNoGradient},
    {"permute", 1, 1, 1, emitPermute, "x", kPermuteAttrs, kFloat, kGradient},
    {"pow", 1, 1, 1, emitPow, "x", kPowAttrs, kFloat, kGradient},
    {"rand", 0, 0, 1, emitRand, "", kRandAttrs, kFloat, kNoGradient},
    {"rand_like", 1, 1, 1, emitRandLike, "x", kRandLikeAttrs, kFloat,
     kNoGradient},
    {"randn", 0, 0, 1, emitRandn, "", kRandAttrs, kFloat, kNoGradient},
    {"relu", 1, 1, 1, emitRelu, "x", kNone, kFloat, kGradient},
    {"repeat_interleave", 1, 1, 1, emitRepeatInterleave, "x",
     kRepeatInterleaveAttrs, kFloat, kGradient},
    {"reshape", 1, 1, 1, emitReshape, "x", kReshapeAttrs, kFloat, kGradient},
    {"rms_norm", 1, 2, 1, emitRmsNorm, "x, weight", kRmsNormAttrs, kFloat,
     kGradient},
    {"rotary", 1, 2, 1, emitRotary, "x, positions", kRotaryAttrs, kFloat,
     kGradient},
    {"rsqrt", 1, 1, 1, emitRsqrt, "x", kNone, kFloat, kGradient},
    {"scaled_dot_product_attention", 3, 4, 1, emitScaledDotProductAttention,
     "q, k, v, mask_or_positions", kAttentionAttrs, kFloat, kGradient},
    {"sigmoid", 1, 1, 1, emitSigmoid, "x", kNone, kFloat, kGradient},
    {"silu", 1, 1, 1, emitSilu, "x", kNone, kFloat, kGradient},
    {"sin", 1, 1, 1, emitSin, "x", kNone, kFloat, kGradient},
    {"slice", 1, 1, 1, emitSlice, "x", kSliceAttrs, kFloat, kGradient},
    {"softmax", 1, 1, 1, emitSoftmax, "x", kSoftmaxAttrs, kFloat, kGradient},
    {"split", 1, 1, 0, emitSplit, "x", kSplitAttrs, kFloat, kGradient},
    {"sqrt", 1, 1, 1, emitSqrt, "x", kNone, kFloat, kGradient},
    {"squeeze", 1, 1, 1, emitSqueeze, "x", kSqueezeAttrs, kFloat, kGradient},
    {"sub", 1, 2, 1, emitSub, "a, b", kBinaryAttrs, kFloat, kGradient},
    {"sum", 1, 1, 1, emitSum, "x", kReductionAttrs, kFloat, kGradient},
    {"tanh", 1, 1, 1, emitTanh, "x", kNone, kFloat, kGradient},
    {"transpose", 1, 1, 1, emitTranspose, "x", kTransposeAttrs, kFloat,
     kGradient},
    {"unsqueeze", 1, 1, 1, emitUnsqueeze, "x", kUnsqueezeAttrs, kFloat,
     kGradient},
    {"where", 3, 3, 1, emitWhere, "cond, a, b", kNone, kFloat, kGradient},
    {"zeros", 0, 0, 1, emitZeros, "", kFillAttrs, kFloat, kNoGradient},
};

/// Other names of op kinds (PyTorch spells some two ways).
const std::pair<llvm::StringRef, llvm::StringRef> kAliases[] = {
    {"cat", "concat"},
    {"to", "cast"},
    {"view", "reshape"},
};
} // namespace

llvm::ArrayRef<OpDefinition> dtensor::frontend::getOpDefinitions() {
  return kDefinitions;
}

llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>>
dtensor::frontend::getOpAliases() {
  return kAliases;
}

const OpDefinition *
dtensor::frontend::lookupOpDefinition(llvm::StringRef name) {
  for (const auto &[alias, target] : kAliases)
    if (name == alias)
      name = target;
  const OpDefinition *it =
      llvm::partition_point(kDefinitions, [&](const OpDefinition &definition) {
        return definition.name < name;
      });
  if (it == std::end(kDefinitions) || it->name != name)
    return nullptr;
  return it;
}

llvm::SmallVector<llvm::StringRef> OpDefinition::getInputNames() const {
  llvm::SmallVector<llvm::StringRef> names;
  llvm::SmallVector<llvm::StringRef> pieces;
  inputNames.split(pieces, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef piece : pieces)
    names.push_back(piece.trim());
  return names;
}

const PlanOpAttr *OpDefinition::getAttribute(llvm::StringRef name) const {
  for (const PlanOpAttr &attribute : attributes)
    if (attribute.name == name)
      return &attribute;
  return nullptr;
}

llvm::StringRef dtensor::frontend::getPlanAttrKindName(PlanAttrKind kind) {
  switch (kind) {
  case PlanAttrKind::Integer:
    return "integer";
  case PlanAttrKind::Number:
    return "number";
  case PlanAttrKind::Boolean:
    return "boolean";
  case PlanAttrKind::String:
    return "string";
  case PlanAttrKind::Dtype:
    return "dtype";
  case PlanAttrKind::IntList:
    return "integer[]";
  case PlanAttrKind::IntOrIntList:
    return "integer|integer[]";
  case PlanAttrKind::Shape:
    return "shape";
  }
  llvm_unreachable("unknown attribute kind");
}

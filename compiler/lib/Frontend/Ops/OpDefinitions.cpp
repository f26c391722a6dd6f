//===- OpDefinitions.cpp - The op kinds of the model plan -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpKinds.h"

#include <limits>

using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

namespace {
constexpr unsigned kAnyNumber = std::numeric_limits<unsigned>::max();

/// Sorted by name (lookupOpDefinition searches it).
const OpDefinition kDefinitions[] = {
    {"add", 1, 2, 1, emitAdd},
    {"arange", 0, 0, 1, emitArange},
    {"argmax", 1, 1, 1, emitArgmax},
    {"bernoulli", 1, 1, 1, emitBernoulli},
    {"bmm", 2, 2, 1, emitBmm},
    {"cache_write", 4, 4, 1, emitCacheWrite},
    {"cast", 1, 1, 1, emitCast},
    {"concat", 1, kAnyNumber, 1, emitConcat},
    {"cos", 1, 1, 1, emitCos},
    {"cross_entropy", 2, 2, 1, emitCrossEntropy},
    {"div", 1, 2, 1, emitDiv},
    {"dropout", 1, 1, 1, emitDropout},
    {"embedding", 2, 2, 1, emitEmbedding},
    {"exp", 1, 1, 1, emitExp},
    {"expand", 1, 1, 1, emitExpand},
    {"full", 0, 0, 1, emitFull},
    {"gelu", 1, 1, 1, emitGelu},
    {"index_select", 2, 2, 1, emitIndexSelect},
    {"layer_norm", 1, 3, 1, emitLayerNorm},
    {"linear", 2, 3, 1, emitLinear},
    {"log_softmax", 1, 1, 1, emitLogSoftmax},
    {"masked_fill", 2, 2, 1, emitMaskedFill},
    {"matmul", 2, 2, 1, emitMatmul},
    {"max", 1, 1, 1, emitMax},
    {"mean", 1, 1, 1, emitMean},
    {"mul", 1, 2, 1, emitMul},
    {"neg", 1, 1, 1, emitNeg},
    {"ones", 0, 0, 1, emitOnes},
    {"permute", 1, 1, 1, emitPermute},
    {"pow", 1, 1, 1, emitPow},
    {"rand", 0, 0, 1, emitRand},
    {"rand_like", 1, 1, 1, emitRandLike},
    {"randn", 0, 0, 1, emitRandn},
    {"relu", 1, 1, 1, emitRelu},
    {"repeat_interleave", 1, 1, 1, emitRepeatInterleave},
    {"reshape", 1, 1, 1, emitReshape},
    {"rms_norm", 1, 2, 1, emitRmsNorm},
    {"rotary", 1, 2, 1, emitRotary},
    {"rsqrt", 1, 1, 1, emitRsqrt},
    {"scaled_dot_product_attention", 3, 4, 1, emitScaledDotProductAttention},
    {"sigmoid", 1, 1, 1, emitSigmoid},
    {"silu", 1, 1, 1, emitSilu},
    {"sin", 1, 1, 1, emitSin},
    {"slice", 1, 1, 1, emitSlice},
    {"softmax", 1, 1, 1, emitSoftmax},
    {"split", 1, 1, 0, emitSplit},
    {"sqrt", 1, 1, 1, emitSqrt},
    {"squeeze", 1, 1, 1, emitSqueeze},
    {"sub", 1, 2, 1, emitSub},
    {"sum", 1, 1, 1, emitSum},
    {"tanh", 1, 1, 1, emitTanh},
    {"transpose", 1, 1, 1, emitTranspose},
    {"unsqueeze", 1, 1, 1, emitUnsqueeze},
    {"where", 3, 3, 1, emitWhere},
    {"zeros", 0, 0, 1, emitZeros},
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

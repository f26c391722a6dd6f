//===- OpKinds.h - The emit function of each op kind ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One function per op kind of docs/model-plan.md; OpDefinitions.cpp lists
// them with their input and output counts.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_OPS_OPKINDS_H
#define DTENSOR_COMPILER_FRONTEND_OPS_OPKINDS_H

#include "EmitSupport.h"

namespace dtensor::frontend::ops {

// LinearOps.cpp
EmitResult emitLinear(OpEmitter &emitter);
EmitResult emitMatmul(OpEmitter &emitter);
EmitResult emitBmm(OpEmitter &emitter);

// ElementwiseOps.cpp
EmitResult emitAdd(OpEmitter &emitter);
EmitResult emitSub(OpEmitter &emitter);
EmitResult emitMul(OpEmitter &emitter);
EmitResult emitDiv(OpEmitter &emitter);
EmitResult emitNeg(OpEmitter &emitter);
EmitResult emitExp(OpEmitter &emitter);
EmitResult emitTanh(OpEmitter &emitter);
EmitResult emitRelu(OpEmitter &emitter);
EmitResult emitSilu(OpEmitter &emitter);
EmitResult emitGelu(OpEmitter &emitter);
EmitResult emitSqrt(OpEmitter &emitter);
EmitResult emitRsqrt(OpEmitter &emitter);
EmitResult emitSigmoid(OpEmitter &emitter);
EmitResult emitCos(OpEmitter &emitter);
EmitResult emitSin(OpEmitter &emitter);
EmitResult emitPow(OpEmitter &emitter);
EmitResult emitCast(OpEmitter &emitter);
EmitResult emitWhere(OpEmitter &emitter);
EmitResult emitMaskedFill(OpEmitter &emitter);

// NormOps.cpp
EmitResult emitLayerNorm(OpEmitter &emitter);
EmitResult emitRmsNorm(OpEmitter &emitter);

// SoftmaxOps.cpp
EmitResult emitSoftmax(OpEmitter &emitter);
EmitResult emitLogSoftmax(OpEmitter &emitter);
EmitResult emitCrossEntropy(OpEmitter &emitter);

// ReductionOps.cpp
EmitResult emitSum(OpEmitter &emitter);
EmitResult emitMean(OpEmitter &emitter);
EmitResult emitMax(OpEmitter &emitter);
EmitResult emitArgmax(OpEmitter &emitter);

// CacheOps.cpp
EmitResult emitCacheWrite(OpEmitter &emitter);

// EmbeddingOps.cpp
EmitResult emitEmbedding(OpEmitter &emitter);
EmitResult emitIndexSelect(OpEmitter &emitter);

// ShapeOps.cpp
EmitResult emitTranspose(OpEmitter &emitter);
EmitResult emitPermute(OpEmitter &emitter);
EmitResult emitReshape(OpEmitter &emitter);
EmitResult emitUnsqueeze(OpEmitter &emitter);
EmitResult emitSqueeze(OpEmitter &emitter);
EmitResult emitExpand(OpEmitter &emitter);
EmitResult emitRepeatInterleave(OpEmitter &emitter);
EmitResult emitConcat(OpEmitter &emitter);
EmitResult emitSplit(OpEmitter &emitter);
EmitResult emitSlice(OpEmitter &emitter);

// FactoryOps.cpp
EmitResult emitArange(OpEmitter &emitter);
EmitResult emitFull(OpEmitter &emitter);
EmitResult emitZeros(OpEmitter &emitter);
EmitResult emitOnes(OpEmitter &emitter);

// RandomOps.cpp
EmitResult emitRand(OpEmitter &emitter);
EmitResult emitRandn(OpEmitter &emitter);
EmitResult emitRandLike(OpEmitter &emitter);
EmitResult emitDropout(OpEmitter &emitter);
EmitResult emitBernoulli(OpEmitter &emitter);

// AttentionOps.cpp
EmitResult emitRotary(OpEmitter &emitter);
EmitResult emitScaledDotProductAttention(OpEmitter &emitter);

} // namespace dtensor::frontend::ops

#endif // DTENSOR_COMPILER_FRONTEND_OPS_OPKINDS_H

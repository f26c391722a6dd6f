//===- DecomposeAttention.cpp - dtensor.attention as linalg ops -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The linalg form of attention, loops (B, H, l, ...) over the operands in
// logical order:
//
//   scores  = contraction q[B,H,l,e] k[B,H,s,e]            (in f32)
//   logits  = scores * scale [+ mask] [causal: -inf where s > l, or
//             s > positions[B] + l]
//   weights = softmax over s (a query that sees no key: weights 0)
//   out     = contraction weights[B,H,l,s] v[B,H,s,ev], rounded
//
// Key/value heads read by several query heads are repeated first; operands
// or a result read through a permutation are transposed. An op that gives
// its log-sum-exp gets it from the logits too:
//
//   lse     = max_s logits + log(sum_s exp(logits - max_s logits))
//
// dtensor.attention_backward's form is DecomposeAttentionBackward.cpp's.
//
//===----------------------------------------------------------------------===//

#include "AttentionLogits.h"

#include "dtensor/Attention/Decompose.h"
#include "dtensor/Attention/Passes.h"
#include "dtensor/Builders/LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

namespace dtensor {
#define GEN_PASS_DEF_DECOMPOSEATTENTION
#include "dtensor/Attention/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-decompose-attention"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::builders;
using dtensor::detail::batchedMap;

namespace {
constexpr int64_t kRank = 4;
} // namespace

bool dtensor::hasAttentionKernelForm(AttentionOp op) {
  return op.getQuery().getType().getElementType().isF32();
}

FailureOr<SmallVector<Value>> dtensor::decomposeAttention(OpBuilder &b,
                                                          AttentionOp op) {
  if (op.getRows())
    return op.emitOpError("reads key/value rows by slot (a KV cache read in "
                          "place); only an attention kernel computes that "
                          "form, which has no linalg decomposition");
  if (op.getAccumulate())
    return op.emitOpError("accumulates into its inits (a step of ring "
                          "attention); only an attention kernel computes "
                          "that form, which has no linalg decomposition");
  for (Value operand : op->getOperands())
    if (!cast<RankedTensorType>(operand.getType()).hasStaticShape())
      return op.emitOpError(
          "has dynamic sizes; decompose attention before partitioning (the "
          "distribute pipeline does so for a target without an attention "
          "kernel)");

  Location loc = op.getLoc();
  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  Type element = resultType.getElementType();

  // The operands in logical order, the key/value heads repeated for the
  // query heads that read them.
  Value query = createTranspose(b, loc, op.getQuery(), op.getQueryDims());
  Value key = createTranspose(b, loc, op.getKey(), op.getKeyDims());
  Value value = createTranspose(b, loc, op.getValue(), op.getValueDims());
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  int64_t heads = q.getDimSize(1), keyHeads = k.getDimSize(1);
  if (keyHeads != 0 && heads != keyHeads) {
    key = repeatHeads(b, loc, key, heads / keyHeads);
    value = repeatHeads(b, loc, value, heads / keyHeads);
  }
  int64_t queries = q.getDimSize(2), keys = k.getDimSize(2);
  int64_t features = q.getDimSize(3), values = v.getDimSize(3);
  SmallVector<int64_t> scoresShape(q.getShape().drop_back());
  scoresShape.push_back(keys);

  // scores[B, H, l, s] = sum_e q[B, H, l, e] k[B, H, s, e], loops
  // (B, H, l, s, e).
  unsigned l = 2, s = 3, e = 4;
  SmallVector<int64_t> loops(q.getShape().take_front(2));
  loops.append({queries, keys, features});
  Value scores = createContraction(
      b, loc, loops, {e}, query, batchedMap(context, 5, {l, e}), key,
      batchedMap(context, 5, {s, e}), batchedMap(context, 5, {l, s}));

  // Scaled, then masked: by the additive mask, or -inf above the diagonal
  // (shifted by each row's query position).
  Value logits = detail::createAttentionLogits(
      b, loc, scores, op.getMask(), op.getPositions(),
      op.getScale().convertToDouble(), op.getCausal(), f32);

  // Softmax over s as reductions, in f32; a query whose keys are all masked
  // gets weights 0 and so an output of 0, as in PyTorch.
  Value weights = createSoftmax(b, loc, logits, s, f32,
                                /*zeroMaskedRows=*/true);

  // out[B, H, l, ev] = sum_s weights[B, H, l, s] v[B, H, s, ev], loops
  // (B, H, l, ev, s).
  unsigned ev = 3, sv = 4;
  SmallVector<int64_t> outLoops(q.getShape().take_front(2));
  outLoops.append({queries, values, keys});
  Value out = createContraction(
      b, loc, outLoops, {sv}, weights, batchedMap(context, 5, {l, sv}), value,
      batchedMap(context, 5, {sv, ev}), batchedMap(context, 5, {l, ev}));
  out = roundTensor(b, loc, out, element);
  // The result in its own order: its dim result_dims[i] is logical dim i.
  ArrayRef<int64_t> resultDims = op.getResultDims();
  SmallVector<int64_t> toPhysical(kRank);
  for (auto [logical, dim] : llvm::enumerate(resultDims))
    toPhysical[dim] = logical;
  SmallVector<Value> results{createTranspose(b, loc, out, toPhysical)};
  if (!op.getLogSumExp())
    return results;

  // lse[B, H, l] = max + log(sum_s exp(logits - max)), -inf for a query
  // that sees no key (its max is -inf: the shift is 0 and the sum 0).
  Value max = createRowMax(b, loc, logits, s);
  AffineMap identity = identityMap(context, kRank);
  AffineMap rowMap = dropDims(context, kRank, {s});
  SmallVector<int64_t> rowShape(scoresShape.begin(), scoresShape.end() - 1);
  auto shiftOf = [](OpBuilder &nested, Location bodyLoc, Value rowMax) {
    Value minusInf = arith::ConstantOp::create(
        nested, bodyLoc, getNeutral(rowMax.getType(), Combiner::Max));
    Value none = arith::CmpFOp::create(
        nested, bodyLoc, arith::CmpFPredicate::OEQ, rowMax, minusInf);
    return arith::SelectOp::create(
        nested, bodyLoc, none,
        floatConstant(nested, bodyLoc, rowMax.getType(), 0), rowMax);
  };
  Value sum =
      createReduction(
          b, loc, {scoresShape, {s}, {f32}, Combiner::Sum}, {logits, max},
          {identity, rowMap},
          [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
            Value shifted = arith::SubFOp::create(
                nested, bodyLoc, args[0], shiftOf(nested, bodyLoc, args[1]));
            return SmallVector<Value>{
                math::ExpOp::create(nested, bodyLoc, shifted)};
          })
          .front();
  AffineMap rows = identityMap(context, kRank - 1);
  Value lse = createMap(
      b, loc, rowShape, element, {max, sum}, {rows, rows},
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value log = math::LogOp::create(nested, bodyLoc, args[1]);
        Value total = arith::AddFOp::create(
            nested, bodyLoc, shiftOf(nested, bodyLoc, args[0]), log);
        return SmallVector<Value>{round(nested, bodyLoc, total, element)};
      });
  results.push_back(lse);
  return results;
}

namespace {

/// Replaces the results of `op` by `results` and erases it, and the empty
/// tensors that were its inits.
void replaceAndErase(Operation *op, ValueRange results) {
  op->replaceAllUsesWith(results);
  SmallVector<Value> inits(cast<DestinationStyleOpInterface>(op).getDpsInits());
  op->erase();
  for (Value init : inits)
    if (Operation *producer = init.getDefiningOp())
      if (producer->use_empty() && isa<tensor::EmptyOp>(producer))
        producer->erase();
}

struct DecomposeAttention
    : dtensor::impl::DecomposeAttentionBase<DecomposeAttention> {
  using DecomposeAttentionBase::DecomposeAttentionBase;

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    bool failedAny = false;
    for (AttentionOp op : ops) {
      if (kernel && hasAttentionKernelForm(op)) {
        LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": kept " << op.getLoc()
                                << " for the target's attention kernel\n");
        continue;
      }
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> results = decomposeAttention(b, op);
      if (failed(results)) {
        failedAny = true;
        continue;
      }
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": decomposed " << op.getLoc()
                              << " into linalg ops\n");
      replaceAndErase(op, *results);
    }
    // The gradients of attention: kept for the kernel in f32 or f64 (the
    // runtime's backward kernel takes both), decomposed otherwise.
    SmallVector<AttentionBackwardOp> backwards;
    getOperation().walk(
        [&](AttentionBackwardOp op) { backwards.push_back(op); });
    for (AttentionBackwardOp op : backwards) {
      if (kernel && hasAttentionBackwardKernelForm(op)) {
        LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": kept " << op.getLoc()
                                << " for the target's attention kernel\n");
        continue;
      }
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> results = decomposeAttentionBackward(b, op);
      if (failed(results)) {
        failedAny = true;
        continue;
      }
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": decomposed " << op.getLoc()
                              << " into linalg ops\n");
      replaceAndErase(op, *results);
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace

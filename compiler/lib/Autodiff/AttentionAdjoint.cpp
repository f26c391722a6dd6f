//===- AttentionAdjoint.cpp - The closed-form adjoint of attention --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor.attention is differentiated whole: its forward gives its
// log-sum-exp, and its adjoint is one dtensor.attention_backward, which
// recomputes the probabilities from it (FlashAttention-2's backward). No
// [L, S] tensor is stored between the forward and the backward, so the
// memory of training grows linearly with the sequence.
//
// The mask gets no gradient from that op. An attention whose mask is
// differentiated (a learnt additive bias: its gradient is itself [L, S]) is
// written as linalg first and differentiated through that form.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Attention/Decompose.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;

namespace {

/// An empty tensor of the type of `like`, its dynamic sizes read from it.
Value emptyLike(OpBuilder &b, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, like),
                                 type.getElementType());
}

/// `op` rebuilt with a log-sum-exp result (an empty [B, H, L] init).
void addLogSumExp(AttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value query = op.getQuery();
  ArrayRef<int64_t> dims = op.getQueryDims();
  SmallVector<OpFoldResult> sizes;
  for (int64_t dim = 0; dim < 3; ++dim)
    sizes.push_back(tensor::getMixedSize(b, loc, query, dims[dim]));
  Value lseInit = tensor::EmptyOp::create(
      b, loc, sizes, cast<RankedTensorType>(query.getType()).getElementType());
  auto rebuilt = AttentionOp::create(
      b, loc, op.getResult().getType(), lseInit.getType(), query, op.getKey(),
      op.getValue(), op.getMask(), /*rows=*/Value(), op.getPositions(),
      op.getInit(), lseInit, op.getScaleAttr(), op.getCausalAttr(),
      /*accumulate=*/UnitAttr(), op.getQueryDimsAttr(), op.getKeyDimsAttr(),
      op.getValueDimsAttr(), op.getResultDimsAttr());
  rebuilt->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  op.getResult().replaceAllUsesWith(rebuilt.getResult());
  op->erase();
}

} // namespace

LogicalResult
dtensor::autodiff::prepareAttentions(func::FuncOp function,
                                     const llvm::DenseSet<Value> &varied) {
  SmallVector<AttentionOp> attentions;
  function.walk([&](AttentionOp op) { attentions.push_back(op); });
  for (AttentionOp op : attentions) {
    // Rows and accumulation are inference forms: the adjoint refuses them
    // if the sweep reaches them.
    if (op.getRows() || op.getLogSumExpInit())
      continue;
    if (op.getMask() && varied.contains(op.getMask())) {
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> decomposed = decomposeAttention(b, op);
      if (failed(decomposed))
        return failure();
      op.getResult().replaceAllUsesWith(decomposed->front());
      op->erase();
      continue;
    }
    addLogSumExp(op);
  }
  return success();
}

LogicalResult dtensor::autodiff::differentiateAttention(AttentionOp op,
                                                        Adjoints &adjoints) {
  if (op.getRows())
    return op.emitOpError("reads key/value rows by slot (a KV cache, "
                          "inference only) and has no gradient");
  if (op.getAccumulate())
    return op.emitOpError("accumulates into its inits (a step of ring "
                          "attention, inference only) and has no gradient");
  if (Value lse = op.getLogSumExp(); lse && adjoints.lookup(lse))
    return op.emitOpError("gives its log-sum-exp to a value the loss depends "
                          "on; the gradient through the log-sum-exp is not "
                          "built");
  if (!op.getLogSumExp())
    return op.emitOpError("has no log-sum-exp, which its gradient reads");
  if (op.getMask() && adjoints.isActive(op.getMask()))
    return op.emitOpError("has a mask that needs a gradient; "
                          "--dtensor-differentiate writes such an attention "
                          "as linalg first");
  Value dOut = adjoints.lookup(op.getResult());
  if (!dOut)
    return success();
  OpBuilder &b = adjoints.builder;
  Location loc = op.getLoc();
  Value query = op.getQuery(), key = op.getKey(), value = op.getValue();
  auto backward = AttentionBackwardOp::create(
      b, loc, query.getType(), key.getType(), value.getType(), query, key,
      value, op.getResult(), dOut, op.getLogSumExp(), op.getMask(),
      op.getPositions(), emptyLike(b, loc, query), emptyLike(b, loc, key),
      emptyLike(b, loc, value), op.getScaleAttr(), op.getCausalAttr(),
      op.getQueryDimsAttr(), op.getKeyDimsAttr(), op.getValueDimsAttr(),
      op.getResultDimsAttr());
  Value operands[] = {query, key, value};
  for (auto [operand, gradient] :
       llvm::zip_equal(operands, backward.getResults()))
    if (adjoints.isActive(operand))
      adjoints.add(loc, operand, gradient);
  return success();
}

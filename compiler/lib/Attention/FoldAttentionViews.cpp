//===- FoldAttentionViews.cpp - Views folded into dtensor.attention -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kernel of dtensor.attention reads its operands through strides and a
// key/value row per batch row, so the views that the frontend and the
// models put around attention need not be copied: transposes of the
// operands and of the result become the op's dims, the repeat of key/value
// heads for grouped-query attention is dropped, and a gather of KV-cache
// rows becomes the op's rows.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Attention/Passes.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Debug.h"

namespace dtensor {
#define GEN_PASS_DEF_FOLDATTENTIONVIEWS
#include "dtensor/Attention/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-fold-attention-views"

using namespace mlir;
using namespace dtensor;

namespace {

constexpr int64_t kRank = 4;

/// The ops of `op`'s body other than constants and the terminator.
SmallVector<Operation *> bodyOps(linalg::GenericOp op) {
  SmallVector<Operation *> ops;
  for (Operation &inner : op.getBody()->without_terminator())
    if (!isa<arith::ConstantOp>(inner))
      ops.push_back(&inner);
  return ops;
}

/// The value `op` yields (its single result's).
Value yielded(linalg::GenericOp op) {
  return op.getBody()->getTerminator()->getOperand(0);
}

/// `value`'s defining generic with `inputs` inputs, one f32 result of rank
/// `rank`, the given iterator kinds (`reductionLoop` the only reduction, or
/// -1) and indexing maps, or null.
linalg::GenericOp getGeneric(Value value, unsigned inputs, unsigned loops,
                             int64_t reductionLoop, ArrayRef<AffineMap> maps) {
  auto op = value.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != inputs || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != loops || op->getNumResults() != 1)
    return {};
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.getElementType().isF32())
    return {};
  for (auto [loop, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    if ((static_cast<int64_t>(loop) == reductionLoop) !=
        (kind == utils::IteratorType::reduction))
      return {};
  if (!maps.empty() && op.getIndexingMapsArray() != maps)
    return {};
  return op;
}

/// The map over `loops` loops reading `dims`.
AffineMap mapOf(MLIRContext *context, unsigned loops, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> results;
  for (unsigned dim : dims)
    results.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(loops, 0, results, context);
}

/// An operand read through a permutation (logical dim i is dim dims[i]).
struct Viewed {
  Value value;
  SmallVector<int64_t> dims{0, 1, 2, 3};
  Value rows;
};

/// `value` seen through a linalg.transpose, if it comes from one.
Viewed throughTranspose(Value value) {
  Viewed viewed{value};
  if (auto transpose = value.getDefiningOp<linalg::TransposeOp>()) {
    viewed.value = transpose.getInput();
    viewed.dims.assign(transpose.getPermutation().begin(),
                       transpose.getPermutation().end());
  }
  return viewed;
}

/// The key/value heads before a grouped-query repeat (a broadcast generic
/// [B, Hkv, groups, S, E] collapsed to [B, Hkv * groups, S, E]), or
/// `value` itself.
Value throughHeadRepeat(Value value) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return value;
  SmallVector<ReassociationIndices> expected{{0}, {1, 2}, {3}, {4}};
  if (collapse.getReassociationIndices() != expected)
    return value;
  MLIRContext *context = value.getContext();
  linalg::GenericOp repeat = getGeneric(
      collapse.getSrc(), 1, 5, -1,
      {mapOf(context, 5, {0, 1, 3, 4}), mapOf(context, 5, {0, 1, 2, 3, 4})});
  if (!repeat || !bodyOps(repeat).empty() ||
      yielded(repeat) != repeat.getBody()->getArgument(0))
    return value;
  return repeat.getDpsInputOperand(0)->get();
}

/// `viewed` seen through a tensor.gather of rows of dim 0 by a [B] i64
/// tensor (expanded to [B, 1]): the gather's source and the rows.
Viewed throughRowGather(Viewed viewed) {
  auto gather = viewed.value.getDefiningOp<tensor::GatherOp>();
  if (!gather || gather.getGatherDims() != ArrayRef<int64_t>{0} ||
      viewed.dims[0] != 0)
    return viewed;
  auto expand = gather.getIndices().getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand)
    return viewed;
  auto rows = dyn_cast<RankedTensorType>(expand.getSrc().getType());
  auto result = gather.getResult().getType();
  if (!rows || rows.getRank() != 1 || !rows.getElementType().isInteger(64) ||
      expand.getResultType().getShape() !=
          ArrayRef<int64_t>{rows.getDimSize(0), 1} ||
      result.getRank() != kRank ||
      result.getShape().drop_front() !=
          gather.getSource().getType().getShape().drop_front())
    return viewed;
  viewed.value = gather.getSource();
  viewed.rows = expand.getSrc();
  return viewed;
}

/// Erases `ops` and what only they used, once unused.
void eraseDead(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> worklist(ops.begin(), ops.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op->use_empty() || !isPure(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        worklist.push_back(producer);
    op->erase();
    // An operand may be listed twice: drop the erased op from the list.
    llvm::erase(worklist, op);
  }
}

/// `viewed` read through `dims` first: logical dim i is dim dims[i] of the
/// operand, which is dim viewed.dims[dims[i]] of the viewed value.
Viewed composed(Viewed viewed, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> composedDims;
  for (int64_t dim : dims)
    composedDims.push_back(viewed.dims[dim]);
  viewed.dims = composedDims;
  return viewed;
}

bool isIdentity(ArrayRef<int64_t> dims) {
  for (auto [index, dim] : llvm::enumerate(dims))
    if (dim != static_cast<int64_t>(index))
      return false;
  return true;
}

/// Folds the views around `op` into a new op; leaves `op` alone when none
/// folds or the new op does not verify.
void fold(AttentionOp op) {
  if (op.getLogSumExpInit() || op.getRows())
    return;
  Viewed query = composed(throughTranspose(op.getQuery()), op.getQueryDims());
  // The head repeat is recognised on operands in logical order (the
  // frontend's), its collapse merging the heads dim 1.
  auto throughRepeat = [](Value operand, ArrayRef<int64_t> dims) {
    return isIdentity(dims) ? throughHeadRepeat(operand) : operand;
  };
  Viewed key =
      composed(throughTranspose(throughRepeat(op.getKey(), op.getKeyDims())),
               op.getKeyDims());
  Viewed value = composed(
      throughTranspose(throughRepeat(op.getValue(), op.getValueDims())),
      op.getValueDims());
  Viewed keyRows = throughRowGather(key), valueRows = throughRowGather(value);
  if (keyRows.rows && keyRows.rows == valueRows.rows) {
    key = keyRows;
    value = valueRows;
  }
  // The result, transposed in place when its only user is a transpose.
  SmallVector<int64_t> resultDims(op.getResultDims());
  Operation *replaced = op;
  Value init = op.getInit();
  OpBuilder b(op);
  Value result = op.getResult();
  if (result.hasOneUse())
    if (auto transpose =
            dyn_cast<linalg::TransposeOp>(*result.getUsers().begin())) {
      // Logical dim i, dim resultDims[i] of the op's result, is dim p of
      // the transpose's, where permutation[p] == resultDims[i].
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      SmallVector<int64_t> inverse(kRank);
      for (auto [position, dim] : llvm::enumerate(permutation))
        inverse[dim] = position;
      for (int64_t &dim : resultDims)
        dim = inverse[dim];
      init = transpose.getInit();
      replaced = transpose;
      b.setInsertionPoint(transpose);
    }
  if (query.value == op.getQuery() && key.value == op.getKey() &&
      value.value == op.getValue() && replaced == op)
    return;
  auto folded = AttentionOp::create(
      b, op.getLoc(), init.getType(), /*log_sum_exp=*/Type(), query.value,
      key.value, value.value, op.getMask(), key.rows, op.getPositions(), init,
      /*log_sum_exp_init=*/Value(), op.getScaleAttr(), op.getCausalAttr(),
      /*accumulate=*/UnitAttr(), b.getDenseI64ArrayAttr(query.dims),
      b.getDenseI64ArrayAttr(key.dims), b.getDenseI64ArrayAttr(value.dims),
      b.getDenseI64ArrayAttr(resultDims));
  if (failed(mlir::verify(folded))) {
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": left the views of " << op.getLoc()
                            << ": the folded op does not verify\n");
    folded->erase();
    return;
  }
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": folded the views of " << op.getLoc()
                          << " into " << folded << "\n");
  replaced->getResult(0).replaceAllUsesWith(folded.getResult());
  SmallVector<Operation *> dead{replaced};
  if (replaced != op)
    dead.push_back(op);
  eraseDead(dead);
}

struct FoldAttentionViews
    : dtensor::impl::FoldAttentionViewsBase<FoldAttentionViews> {
  void getDependentDialects(DialectRegistry &registry) const override {
    FoldAttentionViewsBase::getDependentDialects(registry);
    registry.insert<DTensorDialect>();
  }

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      fold(op);
  }
};

} // namespace

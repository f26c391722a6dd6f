//===- FuseAttention.cpp - Attention's linalg ops as dtensor.attention ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Matches, from the last contraction backwards, the ops that
// emitScaledDotProductAttention (compiler/lib/Frontend/Ops/AttentionOps.cpp)
// and createSoftmax emit for a rank-4 f32 attention, loops (B, H, l, ...):
//
//   scores  = contraction q[B,H,l,e] k[B,H,s,e]      (zero fill, mulf/addf)
//   logits  = scores * scale [+ mask] [causal select]   (all parallel;
//             the query row may be offset by partition: positions)
//   max     = reduce maximumf over s                  (fill -inf)
//   exp     = exp(logits - (max == -inf ? 0 : max))
//   sum     = reduce addf over s                      (fill 0)
//   weights = exp * (sum == 0 ? 0 : 1 / sum)
//   out     = contraction weights[B,H,l,s] v[B,H,s,ev] (zero fill, mulf/addf)
//
// Each body is checked op by op, so that a variant (a softmax without the
// masked-row rule, key indices offset by partition, an extension of a
// half-precision operand) is left alone. The operands are then traced
// back through views the kernel reads in place (see the pass description).
//
//===----------------------------------------------------------------------===//

#include "dtensor/Attention/Passes.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Partition/DimSlices.h"
#include "dtensor/Partition/QueryPositions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <optional>

namespace dtensor {
#define GEN_PASS_DEF_FUSEATTENTION
#include "dtensor/Attention/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-fuse-attention"

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

/// True when `value` is a float constant equal to `expected`.
bool isFloatConstant(Value value, double expected) {
  FloatAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  double got = attr.getValueAsDouble();
  return got == expected;
}

/// True when `value` is a linalg.fill of `expected`.
bool isFillOf(Value value, double expected) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && isFloatConstant(fill.value(), expected);
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

/// True when `op` is `out + in0 * in1` over its block arguments.
bool isMultiplyAdd(linalg::GenericOp op) {
  SmallVector<Operation *> ops = bodyOps(op);
  if (ops.size() != 2)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(ops[0]);
  auto add = dyn_cast<arith::AddFOp>(ops[1]);
  Block *body = op.getBody();
  return mul && add && mul.getLhs() == body->getArgument(0) &&
         mul.getRhs() == body->getArgument(1) &&
         add.getLhs() == body->getArgument(2) &&
         add.getRhs() == mul.getResult() && yielded(op) == add.getResult();
}

/// True when `ops` have the names `names`, in order.
bool hasOps(ArrayRef<Operation *> ops, ArrayRef<StringRef> names) {
  if (ops.size() != names.size())
    return false;
  for (auto [op, name] : llvm::zip_equal(ops, names))
    if (op->getName().getStringRef() != name)
      return false;
  return true;
}

/// What the logits' body says.
struct Logits {
  double scale = 1;
  bool causal = false;
  Value mask;      // the mask input, before broadcasting
  Value positions; // the query positions input
  /// Added to the query's row index by partition: the global position of
  /// the rank's first query when the query's sequence is sharded (context
  /// parallelism), an index defined outside the body.
  Value rowOffset;
  /// Query rows held in two pieces by partition (a head-tail shard, context
  /// parallelism's load balancing): rows below `headRows` are at
  /// rowOffset + row, the others at `tailShift` + row. Indices defined
  /// outside the body; null otherwise.
  Value headRows;
  Value tailShift;
};

/// `value` is `linalg.index dim`.
bool isIndex(Value value, int64_t dim) {
  auto index = value.getDefiningOp<linalg::IndexOp>();
  return index && index.getDim() == static_cast<uint64_t>(dim);
}

/// `value` is `arith.index_cast (linalg.index dim)` to i64.
bool isIndexAsI64(Value value, int64_t dim) {
  auto cast = value.getDefiningOp<arith::IndexCastOp>();
  return cast && cast.getType().isInteger(64) && isIndex(cast.getIn(), dim);
}

/// `value` is an index defined outside `body`.
bool isOutsideIndex(Value value, Block *body) {
  return value && value.getParentBlock() != body && value.getType().isIndex();
}

/// The index added to `linalg.index dim` by `add`, or null.
Value addedToIndex(arith::AddIOp add, int64_t dim) {
  if (!add)
    return {};
  return isIndex(add.getLhs(), dim)   ? add.getRhs()
         : isIndex(add.getRhs(), dim) ? add.getLhs()
                                      : Value();
}

/// Parses the logits generic (loops B, H, l, s; input 0 the scores).
std::optional<Logits> matchLogits(linalg::GenericOp op) {
  Block *body = op.getBody();
  MLIRContext *context = op.getContext();
  Logits logits;
  size_t expectedOps = 1;
  Value value = yielded(op);
  // Causal: select(column > row (+ position), -inf, value).
  if (auto select = value.getDefiningOp<arith::SelectOp>()) {
    if (!isFloatConstant(select.getTrueValue(),
                         -std::numeric_limits<double>::infinity()))
      return std::nullopt;
    auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      return std::nullopt;
    auto offsetRow = cmp.getRhs().getDefiningOp<arith::AddIOp>();
    auto pieceRow = cmp.getRhs().getDefiningOp<arith::SelectOp>();
    auto inHead = pieceRow
                      ? pieceRow.getCondition().getDefiningOp<arith::CmpIOp>()
                      : arith::CmpIOp();
    if (cmp.getPredicate() == arith::CmpIPredicate::ugt &&
        isIndex(cmp.getLhs(), 3) && isIndex(cmp.getRhs(), 2)) {
      expectedOps += 4; // index, index, cmpi, select
    } else if (cmp.getPredicate() == arith::CmpIPredicate::ugt &&
               isIndex(cmp.getLhs(), 3) && pieceRow && inHead) {
      // Query rows in two pieces (head-tail): row < head ? row + offset :
      // row + shift, all three computed outside the body.
      Value offset = addedToIndex(
          pieceRow.getTrueValue().getDefiningOp<arith::AddIOp>(), 2);
      Value shift = addedToIndex(
          pieceRow.getFalseValue().getDefiningOp<arith::AddIOp>(), 2);
      if (inHead.getPredicate() != arith::CmpIPredicate::ult ||
          !isIndex(inHead.getLhs(), 2) ||
          !isOutsideIndex(inHead.getRhs(), body) ||
          !isOutsideIndex(offset, body) || !isOutsideIndex(shift, body))
        return std::nullopt;
      logits.rowOffset = offset;
      logits.headRows = inHead.getRhs();
      logits.tailShift = shift;
      // index, addi, cmpi, addi, select, index, cmpi, select; the row's
      // three users may share one linalg.index or read their own.
      expectedOps += 8;
      SmallPtrSet<Operation *, 3> rowIndices;
      for (Value v : {inHead.getLhs(),
                      pieceRow.getTrueValue().getDefiningOp()->getOperand(0),
                      pieceRow.getTrueValue().getDefiningOp()->getOperand(1),
                      pieceRow.getFalseValue().getDefiningOp()->getOperand(0),
                      pieceRow.getFalseValue().getDefiningOp()->getOperand(1)})
        if (isIndex(v, 2))
          rowIndices.insert(v.getDefiningOp());
      expectedOps += rowIndices.size() - 1;
    } else if (cmp.getPredicate() == arith::CmpIPredicate::ugt &&
               isIndex(cmp.getLhs(), 3) && offsetRow) {
      // Query rows offset by partition: row + offset, the offset computed
      // outside the body.
      Value offset = isIndex(offsetRow.getLhs(), 2)   ? offsetRow.getRhs()
                     : isIndex(offsetRow.getRhs(), 2) ? offsetRow.getLhs()
                                                      : Value();
      if (!offset || offset.getParentBlock() == body ||
          !offset.getType().isIndex())
        return std::nullopt;
      logits.rowOffset = offset;
      expectedOps += 5; // index, index, addi, cmpi, select
    } else if (cmp.getPredicate() == arith::CmpIPredicate::sgt &&
               isIndexAsI64(cmp.getLhs(), 3)) {
      auto add = cmp.getRhs().getDefiningOp<arith::AddIOp>();
      if (!add || !isIndexAsI64(add.getRhs(), 2) || op.getNumDpsInputs() != 2 ||
          add.getLhs() != body->getArgument(1) ||
          !add.getLhs().getType().isInteger(64) ||
          op.getIndexingMapsArray()[1] != mapOf(context, kRank, {0}))
        return std::nullopt;
      logits.positions = op.getDpsInputOperand(1)->get();
      expectedOps += 7; // index x2, index_cast x2, addi, cmpi, select
    } else {
      return std::nullopt;
    }
    logits.causal = true;
    value = select.getFalseValue();
  }
  // Mask: value + mask.
  if (auto add = value.getDefiningOp<arith::AddFOp>()) {
    if (logits.positions || op.getNumDpsInputs() != 2 ||
        add.getRhs() != body->getArgument(1))
      return std::nullopt;
    logits.mask = op.getDpsInputOperand(1)->get();
    value = add.getLhs();
    ++expectedOps;
  }
  auto mul = value.getDefiningOp<arith::MulFOp>();
  FloatAttr scale;
  if (!mul || mul.getLhs() != body->getArgument(0) ||
      !matchPattern(mul.getRhs(), m_Constant(&scale)))
    return std::nullopt;
  logits.scale = scale.getValueAsDouble();
  unsigned inputs = 1 + (logits.mask || logits.positions);
  if (op.getNumDpsInputs() != inputs || bodyOps(op).size() != expectedOps)
    return std::nullopt;
  return logits;
}

/// The mask as a rank-4 tensor in logical order (size-1 dims broadcast),
/// from the mask input and its broadcast map onto (B, H, l, s); null when
/// the map is not a plain broadcast.
Value getRank4Mask(OpBuilder &b, Location loc, Value mask, AffineMap map) {
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  if (!type || !type.getElementType().isF32() || type.getRank() < 1 ||
      type.getRank() > kRank)
    return {};
  int64_t missing = kRank - type.getRank();
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    if (auto loop = dyn_cast<AffineDimExpr>(expr)) {
      if (loop.getPosition() != missing + dim)
        return {};
    } else if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      if (constant.getValue() != 0 || type.getDimSize(dim) != 1)
        return {};
    } else {
      return {};
    }
  }
  if (missing == 0)
    return mask;
  SmallVector<int64_t> shape(missing, 1);
  llvm::append_range(shape, type.getShape());
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    groups.push_back({missing + dim});
  for (int64_t dim = 0; dim < missing; ++dim)
    groups.front().insert(groups.front().begin() + dim, dim);
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), mask,
      groups);
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

/// An empty tensor of `out`'s result type to write the fused result into,
/// shaped as the tensor the zero fill of `out`'s accumulator (checked by
/// fuse) writes: dynamic sizes (uneven shards) are those of the tensor.empty
/// under it, defined before `out`, else read off the filled tensor.
Value createResultInit(OpBuilder &b, Location loc, linalg::GenericOp out) {
  auto type = cast<RankedTensorType>(out->getResult(0).getType());
  Value filled = out.getDpsInitOperand(0)
                     ->get()
                     .getDefiningOp<linalg::FillOp>()
                     .getOutputs()[0];
  auto empty = filled.getDefiningOp<tensor::EmptyOp>();
  SmallVector<OpFoldResult> sizes =
      empty ? empty.getMixedSizes() : tensor::getMixedSizes(b, loc, filled);
  return tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
}

/// The attention of queries held in two pieces (a head-tail shard): one
/// kernel call on the first `headRows` query rows with positions starting
/// at the first piece's offset, one on the rest starting at the second
/// piece's (tailShift + headRows), each into its rows of `init`. Fails,
/// leaving nothing behind, when the kernel calls do not verify.
FailureOr<Value> fusePieces(OpBuilder &b, Location loc, const Logits &logits,
                            const Viewed &query, const Viewed &key,
                            const Viewed &value, Value init,
                            ArrayRef<int64_t> resultDims) {
  SmallVector<Operation *> created;
  auto track = [&](Value v) {
    if (Operation *op = v.getDefiningOp())
      created.push_back(op);
    return v;
  };
  auto positionsFrom = [&](Value start) {
    return createQueryPositions(b, loc, query.value, query.dims[0], start,
                                &created);
  };
  Value rows = track(tensor::DimOp::create(b, loc, query.value, query.dims[2]));
  Value rest = track(arith::SubIOp::create(b, loc, rows, logits.headRows));
  Value tailStart =
      track(arith::AddIOp::create(b, loc, logits.tailShift, logits.headRows));
  int64_t queryRow = query.dims[2], resultRow = resultDims[2];
  struct Piece {
    OpFoldResult offset, size;
    Value start;
  };
  Piece pieces[2] = {{b.getIndexAttr(0), logits.headRows, logits.rowOffset},
                     {logits.headRows, rest, tailStart}};
  Value result = init;
  SmallVector<AttentionOp> calls;
  for (const Piece &piece : pieces) {
    Value q = track(
        sliceDim(b, loc, query.value, queryRow, piece.offset, piece.size));
    Value pieceInit =
        track(sliceDim(b, loc, init, resultRow, piece.offset, piece.size));
    auto call = AttentionOp::create(
        b, loc, pieceInit.getType(), /*log_sum_exp=*/Type(), q, key.value,
        value.value, Value(), key.rows, positionsFrom(piece.start), pieceInit,
        /*log_sum_exp_init=*/Value(), b.getF64FloatAttr(logits.scale),
        logits.causal ? b.getUnitAttr() : UnitAttr(), /*accumulate=*/UnitAttr(),
        b.getDenseI64ArrayAttr(query.dims), b.getDenseI64ArrayAttr(key.dims),
        b.getDenseI64ArrayAttr(value.dims), b.getDenseI64ArrayAttr(resultDims));
    created.push_back(call);
    calls.push_back(call);
    result = track(
        insertDim(b, loc, call.getResult(), result, resultRow, piece.offset));
  }
  if (llvm::any_of(
          calls, [](AttentionOp call) { return failed(mlir::verify(call)); })) {
    for (Operation *op : llvm::reverse(created))
      op->erase();
    return failure();
  }
  return result;
}

/// Replaces the attention ending in `out`, if it is one.
/// Leaves the attention ending in `out` to the linalg lowering, saying why
/// under -debug-only=dtensor-fuse-attention.
LogicalResult reject(linalg::GenericOp out, llvm::StringRef reason) {
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": left the contraction at "
                          << out.getLoc() << " as linalg: " << reason << "\n");
  (void)out;
  (void)reason;
  return failure();
}

LogicalResult fuse(linalg::GenericOp out) {
  MLIRContext *context = out.getContext();
  // out[B, H, l, ev] = sum_s weights[B, H, l, s] v[B, H, s, ev].
  if (!getGeneric(out->getResult(0), 2, 5, 4,
                  {mapOf(context, 5, {0, 1, 2, 4}),
                   mapOf(context, 5, {0, 1, 4, 3}),
                   mapOf(context, 5, {0, 1, 2, 3})}) ||
      !isMultiplyAdd(out) || !isFillOf(out.getDpsInitOperand(0)->get(), 0))
    return failure();
  AffineMap identity = mapOf(context, kRank, {0, 1, 2, 3});
  AffineMap rowMap = mapOf(context, kRank, {0, 1, 2});
  linalg::GenericOp weights =
      getGeneric(out.getDpsInputOperand(0)->get(), 2, kRank, -1,
                 {identity, rowMap, identity});
  if (!weights || !hasOps(bodyOps(weights), {"arith.divf", "arith.cmpf",
                                             "arith.select", "arith.mulf"}))
    return reject(out,
                  "the weights are not the softmax division of the frontend");
  linalg::GenericOp exp = getGeneric(weights.getDpsInputOperand(0)->get(), 2,
                                     kRank, -1, {identity, rowMap, identity});
  linalg::GenericOp sum = getGeneric(weights.getDpsInputOperand(1)->get(), 1,
                                     kRank, 3, {identity, rowMap});
  if (!exp || !sum ||
      !hasOps(bodyOps(exp),
              {"arith.cmpf", "arith.select", "arith.subf", "math.exp"}) ||
      !hasOps(bodyOps(sum), {"arith.addf"}) ||
      sum.getDpsInputOperand(0)->get() != exp->getResult(0) ||
      !isFillOf(sum.getDpsInitOperand(0)->get(), 0))
    return reject(
        out,
        "the exponentials or their sum are not the softmax of the frontend");
  linalg::GenericOp max = getGeneric(exp.getDpsInputOperand(1)->get(), 1, kRank,
                                     3, {identity, rowMap});
  Value logitsValue = exp.getDpsInputOperand(0)->get();
  if (!max || !hasOps(bodyOps(max), {"arith.maximumf"}) ||
      max.getDpsInputOperand(0)->get() != logitsValue ||
      !isFillOf(max.getDpsInitOperand(0)->get(),
                -std::numeric_limits<double>::infinity()))
    return reject(out, "the row maximum is not the softmax of the frontend");
  // The logits: the scores and an optional mask or positions input.
  linalg::GenericOp logitsOp = getGeneric(logitsValue, 1, kRank, -1, {});
  if (!logitsOp)
    logitsOp = getGeneric(logitsValue, 2, kRank, -1, {});
  if (!logitsOp || logitsOp.getIndexingMapsArray().front() != identity ||
      logitsOp.getIndexingMapsArray().back() != identity)
    return reject(out, "the logits are not the scaled scores of the frontend");
  std::optional<Logits> logits = matchLogits(logitsOp);
  if (!logits)
    return reject(
        out,
        "the logits' scale, mask or causal rule is not one the kernel takes");
  // scores[B, H, l, s] = sum_e q[B, H, l, e] k[B, H, s, e].
  linalg::GenericOp scores = getGeneric(
      logitsOp.getDpsInputOperand(0)->get(), 2, 5, 4,
      {mapOf(context, 5, {0, 1, 2, 4}), mapOf(context, 5, {0, 1, 3, 4}),
       mapOf(context, 5, {0, 1, 2, 3})});
  if (!scores || !isMultiplyAdd(scores) ||
      !isFillOf(scores.getDpsInitOperand(0)->get(), 0))
    return reject(out, "the scores are not a contraction of query and key");
  Value q = scores.getDpsInputOperand(0)->get();
  Value k = scores.getDpsInputOperand(1)->get();
  Value v = out.getDpsInputOperand(1)->get();
  for (Value operand : {q, k, v})
    if (!cast<RankedTensorType>(operand.getType()).getElementType().isF32())
      return reject(out, "an operand is not f32");

  // The operands where they are.
  Viewed query = throughTranspose(q);
  Viewed key = throughTranspose(throughHeadRepeat(k));
  Viewed value = throughTranspose(throughHeadRepeat(v));
  Viewed keyRows = throughRowGather(key), valueRows = throughRowGather(value);
  if (keyRows.rows && keyRows.rows == valueRows.rows) {
    key = keyRows;
    value = valueRows;
  }

  OpBuilder b(out);
  Location loc = out.getLoc();
  Value mask;
  if (logits->mask) {
    mask =
        getRank4Mask(b, loc, logits->mask, logitsOp.getIndexingMapsArray()[1]);
    if (!mask)
      return reject(out, "the mask does not broadcast to [B, H, L, S]");
  }
  // Query rows offset by partition: every batch row's queries start at the
  // offset, the kernel's positions (query i sees key j iff j <= offset + i).
  Value positions = logits->positions;
  SmallVector<Operation *> created;
  // Queries in two pieces: one kernel call per piece (fusePieces); a mask
  // would have to be cut the same way, which is not done.
  if (logits->headRows && mask) {
    if (mask != logits->mask)
      mask.getDefiningOp()->erase();
    return reject(out, "a mask with queries held in two pieces (head-tail)");
  }
  if (logits->rowOffset && !logits->headRows)
    positions = createQueryPositions(b, loc, query.value, query.dims[0],
                                     logits->rowOffset, &created);
  // The result, transposed in place when its only user is a transpose.
  Value result = out->getResult(0);
  SmallVector<int64_t> resultDims{0, 1, 2, 3};
  Operation *replaced = out;
  Value init;
  if (result.hasOneUse())
    if (auto transpose =
            dyn_cast<linalg::TransposeOp>(*result.getUsers().begin())) {
      b.setInsertionPoint(transpose);
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      for (auto [position, dim] : llvm::enumerate(permutation))
        resultDims[dim] = position;
      init = transpose.getInit();
      replaced = transpose;
    }
  if (!init)
    init = createResultInit(b, loc, out);
  if (logits->headRows) {
    FailureOr<Value> pieces =
        fusePieces(b, loc, *logits, query, key, value, init, resultDims);
    if (failed(pieces)) {
      for (Operation *op : llvm::reverse(created))
        op->erase();
      return reject(out, "the queries in pieces (head-tail) did not fuse");
    }
    LLVM_DEBUG(llvm::dbgs()
               << DEBUG_TYPE ": fused the attention ending at " << out.getLoc()
               << " into one op per query piece\n");
    replaced->getResult(0).replaceAllUsesWith(*pieces);
    SmallVector<Operation *> dead{replaced};
    if (replaced != out)
      dead.push_back(out);
    eraseDead(dead);
    return success();
  }
  auto fused = AttentionOp::create(
      b, loc, init.getType(), /*log_sum_exp=*/Type(), query.value, key.value,
      value.value, mask, key.rows, positions, init,
      /*log_sum_exp_init=*/Value(), b.getF64FloatAttr(logits->scale),
      logits->causal ? b.getUnitAttr() : UnitAttr(), /*accumulate=*/UnitAttr(),
      b.getDenseI64ArrayAttr(query.dims), b.getDenseI64ArrayAttr(key.dims),
      b.getDenseI64ArrayAttr(value.dims), b.getDenseI64ArrayAttr(resultDims));
  if (failed(mlir::verify(fused))) {
    fused->erase();
    if (mask && mask != logits->mask)
      mask.getDefiningOp()->erase();
    for (Operation *op : llvm::reverse(created))
      op->erase();
    return reject(out, "the fused op does not verify");
  }
  replaced->getResult(0).replaceAllUsesWith(fused.getResult());
  SmallVector<Operation *> dead{replaced};
  if (replaced != out)
    dead.push_back(out);
  eraseDead(dead);
  LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": fused the attention ending at "
                          << out.getLoc() << " into " << fused << "\n");
  return success();
}

struct FuseAttention : dtensor::impl::FuseAttentionBase<FuseAttention> {
  void getDependentDialects(DialectRegistry &registry) const override {
    FuseAttentionBase::getDependentDialects(registry);
    registry.insert<DTensorDialect>();
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk(
        [&](linalg::GenericOp op) { candidates.push_back(op); });
    // A fused chain erases only ops before its last contraction, which
    // the walk has passed.
    for (linalg::GenericOp op : candidates)
      (void)fuse(op);
  }
};

} // namespace

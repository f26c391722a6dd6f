//===- AttentionOps.cpp - rotary, scaled_dot_product_attention ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Rotary keeps every batch dim (batch, heads, sequence) a parallel loop of
// each op it emits, so heads or sequence may be sharded. Its positions come
// from linalg.index, which partition offsets by the rank's shard: a sharded
// sequence still sees global positions. Positions given as a tensor (its
// second input) are read through an indexing map over the batch (and
// sequence) loops only, so they follow the batch and never block the heads
// from being sharded.
//
// Attention stays one dtensor.attention (on [B, H, L, E] views of its
// operands), which its own sharding rule lets propagation and partitioning
// handle whole (a causal one over a piece of the queries gets the piece's
// offset as its positions), which a target's kernel runs, and which
// --dtensor-decompose-attention writes as linalg for a target without one.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

//===----------------------------------------------------------------------===//
// rotary
//===----------------------------------------------------------------------===//

/// The inverse frequencies theta^(-2i/D), i < D/2, computed in f32 as
/// Hugging Face's Llama does: 1 / theta ** (arange(0, D, 2).float() / D).
static SmallVector<float> getInverseFrequencies(double theta, int64_t headDim) {
  SmallVector<float> values;
  for (int64_t i = 0; i < headDim / 2; ++i) {
    float exponent = static_cast<float>(2 * i) / static_cast<float>(headDim);
    values.push_back(1.0f / std::pow(static_cast<float>(theta), exponent));
  }
  return values;
}

/// The largest cos/sin table (positions x D/2 elements, each of cos and sin)
/// that rotary keeps as a constant of the program: 512 KiB of f32 each.
/// Longer sequences compute their table once per step instead.
static constexpr int64_t kMaxConstantTableElements = int64_t{1} << 17;

/// The cos and sin of each position's angles, f32, and the map through
/// which the rotation reads them.
struct RotaryTables {
  Value cos, sin;
  AffineMap map;
};

/// cos[s, i] and sin[s, i] of the angles (s + offset) * frequencies[i] for
/// the positions s < `length` of the sequence, as constants: the angle is
/// rounded to f32 as the rotation would compute it, its cos and sin
/// computed in double and rounded once.
static std::pair<DenseElementsAttr, DenseElementsAttr>
getConstantTables(OpBuilder &b, ArrayRef<float> frequencies, int64_t length,
                  int64_t offset) {
  int64_t half = frequencies.size();
  SmallVector<float> cosValues, sinValues;
  cosValues.reserve(length * half);
  sinValues.reserve(length * half);
  for (int64_t s = 0; s < length; ++s) {
    float position = static_cast<float>(s + offset);
    for (float frequency : frequencies) {
      double angle = static_cast<double>(position * frequency);
      cosValues.push_back(static_cast<float>(std::cos(angle)));
      sinValues.push_back(static_cast<float>(std::sin(angle)));
    }
  }
  auto type = RankedTensorType::get({length, half}, b.getF32Type());
  return {DenseElementsAttr::get(type, ArrayRef<float>(cosValues)),
          DenseElementsAttr::get(type, ArrayRef<float>(sinValues))};
}

/// How rotary reads its optional positions input over the loops (x's dims
/// without the last, then the half p and the index i): `[B]` holds the
/// first position of each row of dim 0 (token s of row b is at
/// positions[b] + s), a tensor of x's batch-and-sequence shape
/// (x.shape[0 .. seq_dim], size-1 dims broadcast) each token's own
/// position. Null when the shape is neither.
static std::optional<std::pair<AffineMap, bool>>
getPositionsMap(MLIRContext *context, ArrayRef<int64_t> shape,
                ArrayRef<int64_t> positions, int64_t seqDim) {
  int64_t numLoops = shape.size() + 1;
  if (seqDim > 0 && positions.size() == 1) {
    if (positions[0] != shape[0])
      return std::nullopt;
    return std::make_pair(
        AffineMap::get(numLoops, 0, getAffineDimExpr(0, context)), true);
  }
  if (static_cast<int64_t>(positions.size()) != seqDim + 1)
    return std::nullopt;
  SmallVector<AffineExpr> results;
  for (int64_t dim = 0; dim <= seqDim; ++dim) {
    if (positions[dim] != shape[dim] && positions[dim] != 1)
      return std::nullopt;
    results.push_back(positions[dim] == shape[dim]
                          ? getAffineDimExpr(dim, context)
                          : getAffineConstantExpr(0, context));
  }
  return std::make_pair(AffineMap::get(numLoops, 0, results, context), false);
}

EmitResult ops::emitRotary(OpEmitter &emitter) {
  if (failed(checkFloatInput(emitter, 0)) ||
      failed(checkMinRank(emitter, 0, 2, "[..., S, H, D]")))
    return failure();
  RankedTensorType type = emitter.inputType(0);
  int64_t rank = type.getRank();
  FailureOr<int64_t> seqDim = emitter.getDim("seq_dim", rank, -3);
  FailureOr<double> theta = emitter.getNumber("theta", 10000.0);
  FailureOr<int64_t> offset = emitter.getInt("position_offset", 0);
  if (failed(seqDim) || failed(theta) || failed(offset))
    return failure();
  if (*seqDim == rank - 1)
    return emitter.emitAttrError("seq_dim")
           << "seq_dim " << *seqDim
           << " is the last dim, which holds the rotated features";
  if (*theta <= 0)
    return emitter.emitAttrError("theta")
           << "theta " << formatNumber(*theta) << " must be positive";
  // Positions from a tensor: [B] (each row's start) or x's
  // batch-and-sequence shape (each token's own).
  bool hasPositions = emitter.inputs().size() == 2;
  std::optional<std::pair<AffineMap, bool>> positionsMap;
  if (hasPositions) {
    if (emitter.has("position_offset"))
      return emitter.emitAttrError("position_offset")
             << "position_offset and a positions input together: the "
                "positions input holds absolute positions";
    if (failed(checkIntInput(emitter, 1)))
      return failure();
    ArrayRef<int64_t> positions = emitter.inputType(1).getShape();
    positionsMap = getPositionsMap(emitter.builder.getContext(),
                                   type.getShape(), positions, *seqDim);
    if (!positionsMap) {
      InFlightDiagnostic diag = emitter.emitInputError(1);
      diag << "positions '" << emitter.inputName(1) << "' has shape "
           << formatShape(positions) << "; expected ";
      if (*seqDim > 0)
        diag << "[" << type.getDimSize(0)
             << "] (the first position of each row of dim 0) or ";
      diag << formatShape(type.getShape().take_front(*seqDim + 1))
           << " (the position of each token: input '" << emitter.inputName(0)
           << "' " << formatShape(type.getShape()) << " up to seq_dim "
           << *seqDim << ", size-1 dims broadcast)";
      return diag;
    }
  }
  int64_t headDim = type.getShape().back();
  if (headDim % 2 != 0)
    return emitter.emitInputError(0)
           << "input '" << emitter.inputName(0) << "' has shape "
           << formatShape(type.getShape()) << "; its last dim " << headDim
           << " must be even (it is rotated in two halves)";

  // x[..., D] viewed as x[..., 2, D/2]: the two halves rotate_half swaps.
  OpBuilder &b = emitter.builder;
  MLIRContext *context = b.getContext();
  Location loc = emitter.loc;
  int64_t half = headDim / 2;
  Type element = type.getElementType();
  SmallVector<int64_t> shape(type.getShape().drop_back());
  shape.append({2, half});
  SmallVector<ReassociationIndices> groups;
  for (int64_t dim = 0; dim + 1 < rank; ++dim)
    groups.push_back({dim});
  groups.push_back({rank - 1, rank});
  Value halves = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, element), emitter.input(0), groups);
  SmallVector<float> frequencies = getInverseFrequencies(*theta, headDim);
  Type f32 = b.getF32Type();
  int64_t seqLoop = *seqDim;
  int64_t positionOffset = *offset;
  int64_t length = type.getDimSize(seqLoop);

  // The cos/sin tables, computed once per position rather than once per
  // element of x (every head and both halves read one entry): constants of
  // the program when the positions are the sequence index (plus
  // position_offset) and the table is small, else one generic per step
  // over the positions (the sequence, or x's batch-and-sequence dims for a
  // positions input). The rotation reads them through `tables.map`.
  RotaryTables tables;
  if (!hasPositions && length * half <= kMaxConstantTableElements) {
    auto [cosTable, sinTable] =
        getConstantTables(b, frequencies, length, positionOffset);
    tables.cos = arith::ConstantOp::create(b, loc, cosTable);
    tables.sin = arith::ConstantOp::create(b, loc, sinTable);
    tables.map = AffineMap::get(
        rank + 1, 0,
        {getAffineDimExpr(seqLoop, context), getAffineDimExpr(rank, context)},
        context);
  } else {
    // Loops (positions..., i): the sequence alone, or x's dims up to
    // seq_dim for a positions input, of size 1 where all positions are
    // equal (the dims between the batch and the sequence for each row's
    // start, the broadcast dims of each token's own).
    bool rowStarts = hasPositions && positionsMap->second;
    SmallVector<int64_t> tableShape;
    if (hasPositions) {
      ArrayRef<int64_t> positions = emitter.inputType(1).getShape();
      for (int64_t dim = 0; dim <= seqLoop; ++dim) {
        bool varies =
            rowStarts ? dim == 0 || dim == seqLoop : positions[dim] != 1;
        tableShape.push_back(varies ? type.getDimSize(dim) : 1);
      }
    } else {
      tableShape.push_back(length);
    }
    tableShape.push_back(half);
    int64_t tableLoops = tableShape.size();
    int64_t tableSeqLoop = hasPositions ? seqLoop : 0;
    Value frequencyTensor = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({half}, f32),
                               ArrayRef<float>(frequencies)));
    SmallVector<Value> inputs{frequencyTensor};
    SmallVector<AffineMap> maps{AffineMap::get(
        tableLoops, 0, getAffineDimExpr(tableLoops - 1, context))};
    if (hasPositions) {
      // The same reading of the positions as over x's loops, over the
      // table's (x's dims up to seq_dim, then i).
      auto positions =
          getPositionsMap(context, ArrayRef<int64_t>(tableShape).drop_back(),
                          emitter.inputType(1).getShape(), seqLoop);
      inputs.push_back(emitter.input(1));
      maps.push_back(positions->first);
    }
    auto angle = [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
      Type i64 = nested.getI64Type();
      Value position;
      if (!hasPositions || rowStarts) {
        Value seq = linalg::IndexOp::create(nested, bodyLoc, tableSeqLoop);
        position = arith::IndexCastOp::create(nested, bodyLoc, i64, seq);
      }
      if (hasPositions) {
        Value given = args[1];
        if (given.getType() != i64)
          given = arith::ExtSIOp::create(nested, bodyLoc, i64, given);
        position = position
                       ? arith::AddIOp::create(nested, bodyLoc, position, given)
                             .getResult()
                       : given;
      }
      if (positionOffset != 0)
        position = arith::AddIOp::create(
            nested, bodyLoc, position,
            arith::ConstantOp::create(
                nested, bodyLoc, nested.getI64IntegerAttr(positionOffset)));
      Value positionF = arith::SIToFPOp::create(nested, bodyLoc, f32, position);
      return arith::MulFOp::create(nested, bodyLoc, positionF, args[0])
          .getResult();
    };
    tables.cos =
        createMap(b, loc, tableShape, f32, inputs, maps,
                  [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                    return SmallVector<Value>{math::CosOp::create(
                        nested, bodyLoc, angle(nested, bodyLoc, args))};
                  });
    tables.sin =
        createMap(b, loc, tableShape, f32, inputs, maps,
                  [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                    return SmallVector<Value>{math::SinOp::create(
                        nested, bodyLoc, angle(nested, bodyLoc, args))};
                  });
    SmallVector<AffineExpr> results;
    for (int64_t dim = hasPositions ? 0 : seqLoop; dim <= seqLoop; ++dim)
      results.push_back(hasPositions && tableShape[dim] == 1
                            ? getAffineConstantExpr(0, context)
                            : getAffineDimExpr(dim, context));
    results.push_back(getAffineDimExpr(rank, context));
    tables.map = AffineMap::get(rank + 1, 0, results, context);
  }

  // Loops (..., p, i): out[..., p, i] from x1 = x[..., 0, i] and
  // x2 = x[..., 1, i]: x1 cos - x2 sin for p = 0, x2 cos + x1 sin for p = 1.
  int64_t numLoops = rank + 1;
  auto halfMap = [&](int64_t which) {
    SmallVector<AffineExpr> results;
    for (int64_t dim = 0; dim + 1 < rank; ++dim)
      results.push_back(getAffineDimExpr(dim, context));
    results.push_back(getAffineConstantExpr(which, context));
    results.push_back(getAffineDimExpr(rank, context));
    return AffineMap::get(numLoops, 0, results, context);
  };
  SmallVector<Value> inputs{halves, halves, tables.cos, tables.sin};
  SmallVector<AffineMap> maps{halfMap(0), halfMap(1), tables.map, tables.map};
  Value rotated = createMap(
      b, loc, shape, element, inputs, maps,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value cos = args[2];
        Value sin = args[3];
        Value x1 = extend(nested, bodyLoc, args[0]);
        Value x2 = extend(nested, bodyLoc, args[1]);
        Value first = arith::SubFOp::create(
            nested, bodyLoc, arith::MulFOp::create(nested, bodyLoc, x1, cos),
            arith::MulFOp::create(nested, bodyLoc, x2, sin));
        Value second = arith::AddFOp::create(
            nested, bodyLoc, arith::MulFOp::create(nested, bodyLoc, x2, cos),
            arith::MulFOp::create(nested, bodyLoc, x1, sin));
        Value which = linalg::IndexOp::create(nested, bodyLoc, rank - 1);
        Value isFirst = arith::CmpIOp::create(
            nested, bodyLoc, arith::CmpIPredicate::eq, which,
            arith::ConstantIndexOp::create(nested, bodyLoc, 0));
        Value value =
            arith::SelectOp::create(nested, bodyLoc, isFirst, first, second);
        return SmallVector<Value>{round(nested, bodyLoc, value, element)};
      });
  return SmallVector<Value>{
      tensor::CollapseShapeOp::create(b, loc, type, rotated, groups)};
}

//===----------------------------------------------------------------------===//
// scaled_dot_product_attention
//===----------------------------------------------------------------------===//

/// Checks q, k, v (and the mask: the first `numFloat` inputs) against each
/// other. With `gqa`, k and v may have fewer heads (dim -3) than q, a
/// divisor of q's.
static LogicalResult checkAttentionInputs(OpEmitter &emitter, bool gqa,
                                          unsigned numFloat) {
  static const char *const roles[] = {"query", "key", "value", "mask"};
  static const char *const forms[] = {"[..., L, E]", "[..., S, E]",
                                      "[..., S, Ev]"};
  for (unsigned i = 0; i < numFloat; ++i)
    if (failed(checkFloatInput(emitter, i)) ||
        (i > 0 && failed(checkSameDtype(emitter, i, 0))))
      return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(checkMinRank(emitter, i, 2, forms[i])))
      return failure();
  RankedTensorType q = emitter.inputType(0);
  if (gqa && q.getRank() < 3)
    return emitter.emitAttrError("enable_gqa")
           << "enable_gqa needs a heads dim: query '" << emitter.inputName(0)
           << "' has shape " << formatShape(q.getShape())
           << ", expected [..., H, L, E] (rank 3 or more)";
  ArrayRef<int64_t> batch = q.getShape().drop_back(2);
  auto mismatch = [&](unsigned i, StringRef what) {
    RankedTensorType type = emitter.inputType(i);
    return emitter.emitInputError(i)
           << roles[i] << " '" << emitter.inputName(i) << "' has shape "
           << formatShape(type.getShape()) << " but query '"
           << emitter.inputName(0) << "' has " << formatShape(q.getShape())
           << "; " << what;
  };
  // Equal batch dims, except (with gqa) the heads dim, checked below.
  int64_t heads = batch.size() - 1;
  for (unsigned i = 1; i < 3; ++i) {
    ArrayRef<int64_t> other = emitter.inputType(i).getShape().drop_back(2);
    bool equal = other.size() == batch.size();
    for (int64_t dim = 0; equal && dim < static_cast<int64_t>(batch.size());
         ++dim)
      equal = other[dim] == batch[dim] || (gqa && dim == heads);
    if (equal)
      continue;
    // Only the heads differ, as grouped-query attention allows: say so.
    bool onlyHeads = !gqa && !batch.empty() && other.size() == batch.size() &&
                     other.drop_back() == batch.drop_back() &&
                     other.back() != 0 && batch.back() % other.back() == 0;
    return mismatch(i, onlyHeads ? "their batch dims must be equal (fewer "
                                   "key/value heads need enable_gqa)"
                                 : "their batch dims must be equal");
  }
  RankedTensorType k = emitter.inputType(1);
  RankedTensorType v = emitter.inputType(2);
  if (gqa) {
    int64_t queryHeads = batch.back(), keyHeads = k.getDimSize(heads);
    bool multiple =
        keyHeads == 0 ? queryHeads == 0 : queryHeads % keyHeads == 0;
    if (!multiple)
      return mismatch(1, ("with enable_gqa the query heads (dim -3, " +
                          Twine(queryHeads) +
                          ") must be a multiple of the key/value heads (" +
                          Twine(keyHeads) + ")")
                             .str());
    if (v.getDimSize(heads) != keyHeads)
      return emitter.emitInputError(2)
             << "value '" << emitter.inputName(2) << "' has shape "
             << formatShape(v.getShape()) << " but key '"
             << emitter.inputName(1) << "' has " << formatShape(k.getShape())
             << "; they need the same number of heads (dim -3)";
  }
  if (k.getShape().back() != q.getShape().back())
    return mismatch(1, "key and query need the same last dim E");
  if (v.getDimSize(v.getRank() - 2) != k.getDimSize(k.getRank() - 2))
    return emitter.emitInputError(2)
           << "value '" << emitter.inputName(2) << "' has shape "
           << formatShape(v.getShape()) << " but key '" << emitter.inputName(1)
           << "' has " << formatShape(k.getShape())
           << "; they need the same sequence length S";
  return success();
}

/// How an attention operand `[..., L, E]` of rank `rank` is seen as the
/// `[B, H, L, E]` of dtensor.attention: rank 4 as itself, rank 3 `[X, L, E]`
/// as `[X, 1, L, E]` (X the batch, which query positions index), rank 2 as
/// `[1, 1, L, E]`, and a higher rank `[A0, A1, ..., L, E]` as
/// `[A0, A1 * ..., L, E]` (the dims between the first and the last two
/// merged into the heads), by reshapes that move no data.
struct AttentionView {
  int64_t rank;

  /// Groups of the rank-`rank` dims that make each of the 4 dims; a rank
  /// below 4 is expanded (the groups of the rank-4 dims instead).
  SmallVector<ReassociationIndices> groups() const {
    if (rank == 2)
      return {{0, 1, 2}, {3}};
    if (rank == 3)
      return {{0, 1}, {2}, {3}};
    ReassociationIndices heads;
    for (int64_t dim = 1; dim < rank - 2; ++dim)
      heads.push_back(dim);
    return {{0}, heads, {rank - 2}, {rank - 1}};
  }

  /// `value`, which broadcasts to `full` (of rank `rank`; a mask), as
  /// rank 4: leading unit dims first, then the reshape. Merged dims that are
  /// partly broadcast are materialised first, since a reshape cannot merge
  /// them.
  Value toRank4(OpBuilder &b, Location loc, Value value,
                ArrayRef<int64_t> full) const {
    auto type = cast<RankedTensorType>(value.getType());
    Type element = type.getElementType();
    int64_t missing = rank - type.getRank();
    if (missing > 0) {
      SmallVector<int64_t> shape(missing, 1);
      llvm::append_range(shape, type.getShape());
      SmallVector<ReassociationIndices> groups;
      for (int64_t dim = 0; dim < type.getRank(); ++dim)
        groups.push_back({missing + dim});
      if (!groups.empty())
        for (int64_t dim = 0; dim < missing; ++dim)
          groups.front().insert(groups.front().begin() + dim, dim);
      value = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, element), value, groups);
      type = cast<RankedTensorType>(value.getType());
    }
    if (rank == 4)
      return value;
    if (rank < 4) {
      SmallVector<int64_t> shape(4 - rank, 1);
      llvm::append_range(shape, type.getShape());
      if (rank == 3)
        shape = {type.getDimSize(0), 1, type.getDimSize(1), type.getDimSize(2)};
      return tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, element), value, groups());
    }
    SmallVector<int64_t> shape(type.getShape());
    bool allOne = true, allFull = true;
    for (int64_t dim = 1; dim < rank - 2; ++dim) {
      allOne &= shape[dim] == 1;
      allFull &= shape[dim] == full[dim];
    }
    if (!allOne && !allFull) {
      SmallVector<int64_t> broadcast(shape);
      for (int64_t dim = 1; dim < rank - 2; ++dim)
        broadcast[dim] = full[dim];
      value = createMap(b, loc, broadcast, element, {value},
                        {getBroadcastMap(b.getContext(), shape, broadcast)},
                        [](OpBuilder &, Location, ValueRange args) {
                          return SmallVector<Value>{args[0]};
                        });
      shape = broadcast;
    }
    int64_t heads = 1;
    for (int64_t dim = 1; dim < rank - 2; ++dim)
      heads *= shape[dim];
    SmallVector<int64_t> collapsed{shape[0], heads, shape[rank - 2],
                                   shape[rank - 1]};
    return tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(collapsed, element), value, groups());
  }

  /// The rank-4 result `value` back as `shape` (of rank `rank`).
  Value fromRank4(OpBuilder &b, Location loc, Value value,
                  ArrayRef<int64_t> shape) const {
    if (rank == 4)
      return value;
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(value.getType()).getElementType());
    if (rank < 4)
      return tensor::CollapseShapeOp::create(b, loc, type, value, groups());
    return tensor::ExpandShapeOp::create(b, loc, type, value, groups());
  }
};

/// Checks the query positions, input 3: `[B]` of an integer dtype, B the
/// query's dim 0.
static LogicalResult checkQueryPositions(OpEmitter &emitter) {
  RankedTensorType q = emitter.inputType(0);
  if (q.getRank() < 3)
    return emitter.emitAttrError("query_positions")
           << "query_positions needs a batch dim: query '"
           << emitter.inputName(0) << "' has shape "
           << formatShape(q.getShape())
           << ", expected [B, ..., L, E] (rank 3 or more)";
  if (failed(checkIntInput(emitter, 3)))
    return failure();
  RankedTensorType positions = emitter.inputType(3);
  if (positions.getShape() != ArrayRef<int64_t>{q.getDimSize(0)})
    return emitter.emitInputError(3)
           << "query positions '" << emitter.inputName(3) << "' has shape "
           << formatShape(positions.getShape()) << "; expected ["
           << q.getDimSize(0) << "], the position of the first query of each "
           << "row of query '" << emitter.inputName(0) << "' "
           << formatShape(q.getShape());
  return success();
}

EmitResult ops::emitScaledDotProductAttention(OpEmitter &emitter) {
  FailureOr<bool> gqa = emitter.getBool("enable_gqa", false);
  FailureOr<bool> queryPositions = emitter.getBool("query_positions", false);
  if (failed(gqa) || failed(queryPositions))
    return failure();
  // With query_positions the last input is the positions, not a mask.
  bool hasPositions = *queryPositions;
  if (hasPositions && emitter.inputs().size() != 4)
    return emitter.emitAttrError("query_positions")
           << "query_positions takes the positions as a fourth input "
              "(q, k, v, positions[B]); got "
           << emitter.inputs().size() << " inputs";
  unsigned numFloat = hasPositions ? 3 : emitter.inputs().size();
  if (failed(checkAttentionInputs(emitter, *gqa, numFloat)))
    return failure();
  RankedTensorType q = emitter.inputType(0);
  Value key = emitter.input(1), value = emitter.input(2);
  RankedTensorType k = emitter.inputType(1);
  RankedTensorType v = emitter.inputType(2);
  int64_t rank = q.getRank();
  int64_t keys = k.getDimSize(rank - 2);
  int64_t features = q.getShape().back(), values = v.getShape().back();
  SmallVector<int64_t> scoresShape(q.getShape().drop_back());
  scoresShape.push_back(keys);
  bool hasMask = emitter.inputs().size() == 4 && !hasPositions;
  if (hasMask && !broadcastsTo(emitter.inputType(3).getShape(), scoresShape))
    return emitter.emitInputError(3)
           << "mask '" << emitter.inputName(3) << "' has shape "
           << formatShape(emitter.inputType(3).getShape())
           << ", which does not broadcast to the scores "
           << formatShape(scoresShape) << " ([..., L, S])";
  FailureOr<bool> causal = emitter.getBool("is_causal", false);
  FailureOr<double> scale = emitter.getNumber(
      "scale", 1.0 / std::sqrt(static_cast<double>(features)));
  if (failed(causal) || failed(scale))
    return failure();
  if (*causal && hasMask)
    return emitter.emitAttrError("is_causal")
           << "takes either a mask or is_causal, not both";
  if (hasPositions && !*causal)
    return emitter.emitAttrError("query_positions")
           << "query_positions place the causal mask (query i of row b sees "
              "key j iff j <= positions[b] + i); it needs is_causal: true";
  if (hasPositions && failed(checkQueryPositions(emitter)))
    return failure();

  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;

  // Grouped-query attention: k and v with each head repeated for the query
  // heads that read it (see RepeatHeads.cpp for why a repeat), so that the
  // op's heads are sharded like the query's.
  int64_t keyHeads = rank >= 3 ? k.getDimSize(rank - 3) : 0;
  if (*gqa && keyHeads != 0 && q.getDimSize(rank - 3) != keyHeads) {
    int64_t groups = q.getDimSize(rank - 3) / keyHeads;
    key = repeatHeads(b, loc, key, groups);
    value = repeatHeads(b, loc, value, groups);
  }

  // One dtensor.attention on [B, H, L, E] views of the operands; the
  // attention stage decomposes it into linalg where the target has no
  // kernel for it (--dtensor-decompose-attention).
  AttentionView view{rank};
  Value mask;
  if (hasMask)
    mask = view.toRank4(b, loc, emitter.input(3), scoresShape);
  Value positions;
  if (hasPositions) {
    positions = emitter.input(3);
    if (!emitter.inputType(3).getElementType().isInteger(64))
      positions =
          createMap(b, loc, {q.getDimSize(0)}, b.getI64Type(), {positions},
                    {identityMap(b.getContext(), 1)},
                    [](OpBuilder &nested, Location bodyLoc, ValueRange args) {
                      return SmallVector<Value>{convertElement(
                          nested, bodyLoc, args[0], nested.getI64Type())};
                    });
  }
  SmallVector<int64_t> resultShape(q.getShape().drop_back());
  resultShape.push_back(values);
  Value q4 = view.toRank4(b, loc, emitter.input(0), q.getShape());
  Value k4 = view.toRank4(b, loc, key,
                          cast<RankedTensorType>(key.getType()).getShape());
  Value v4 = view.toRank4(b, loc, value,
                          cast<RankedTensorType>(value.getType()).getShape());
  auto q4Type = cast<RankedTensorType>(q4.getType());
  SmallVector<int64_t> init4Shape(q4Type.getShape().drop_back());
  init4Shape.push_back(values);
  Value init = tensor::EmptyOp::create(b, loc, init4Shape, q.getElementType());
  DenseI64ArrayAttr identity = b.getDenseI64ArrayAttr({0, 1, 2, 3});
  Value out =
      AttentionOp::create(
          b, loc, init.getType(), /*log_sum_exp=*/Type(), q4, k4, v4, mask,
          /*rows=*/Value(), positions, init, /*log_sum_exp_init=*/Value(),
          b.getF64FloatAttr(*scale), *causal ? b.getUnitAttr() : UnitAttr(),
          /*accumulate=*/UnitAttr(), identity, identity, identity, identity)
          .getResult();
  return SmallVector<Value>{view.fromRank4(b, loc, out, resultShape)};
}

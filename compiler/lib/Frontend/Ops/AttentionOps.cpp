//===- AttentionOps.cpp - rotary, scaled_dot_product_attention ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Both keep every batch dim (batch, heads, sequence) a parallel loop of each
// op they emit, so heads or sequence may be sharded. Positions come from
// linalg.index, which partition offsets by the rank's shard: a sharded
// sequence still sees global positions and a global causal mask. Positions
// given as a tensor (rotary's second input, attention's query_positions for
// a KV cache) are read through an indexing map over the batch (and
// sequence) loops only, so they follow the batch and never block the heads
// from being sharded.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

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
static SmallVector<float> getInverseFrequencies(double theta,
                                                int64_t headDim) {
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
        bool varies = rowStarts ? dim == 0 || dim == seqLoop
                                : positions[dim] != 1;
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
      auto positions = getPositionsMap(
          context, ArrayRef<int64_t>(tableShape).drop_back(),
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
        position = position ? arith::AddIOp::create(nested, bodyLoc,
                                                    position, given)
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
    tables.cos = createMap(
        b, loc, tableShape, f32, inputs, maps,
        [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
          return SmallVector<Value>{math::CosOp::create(
              nested, bodyLoc, angle(nested, bodyLoc, args))};
        });
    tables.sin = createMap(
        b, loc, tableShape, f32, inputs, maps,
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

/// The map reading dims `dims` (loop positions) after the `batch` leading
/// batch loops, over `numLoops` loops.
static AffineMap batchedMap(MLIRContext *context, unsigned numLoops,
                            unsigned batch, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> results;
  for (unsigned dim = 0; dim < batch; ++dim)
    results.push_back(getAffineDimExpr(dim, context));
  for (unsigned dim : dims)
    results.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(numLoops, 0, results, context);
}

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
    bool multiple = keyHeads == 0 ? queryHeads == 0
                                  : queryHeads % keyHeads == 0;
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

/// k or v `[..., Hkv, S, E]` with each head repeated `groups` times,
/// `[..., Hkv * groups, S, E]`, head h holding head h / groups (PyTorch's
/// repeat_interleave): a broadcast to `[..., Hkv, groups, S, E]`, then a
/// collapse of the heads with the groups.
///
/// Why a repeat, and not one of the two other ways to write grouped-query
/// attention:
/// - reading k at head `h floordiv groups` in the score contraction: the
///   sharding rule of a linalg op (LinalgRules.cpp) ties a tensor dim to a
///   loop only through a plain loop index, so k's heads dim would have no
///   factor and k would always be replicated (all-gathered when the heads
///   are sharded);
/// - q viewed as `[..., Hkv, groups, L, E]`: the reshape rule lets only the
///   major dim Hkv of the expanded heads be sharded, with an even split, so
///   on a TP size that does not divide Hkv the query heads could not stay
///   sharded.
/// The repeat is sharded on Hkv, the collapse's major dim, when the TP size
/// divides Hkv: each rank then repeats exactly the KV heads its query heads
/// read. Otherwise k and v are replicated and the partitioner slices the
/// rank's query heads out of the repeated ones, without communication.
static Value repeatHeads(OpBuilder &b, Location loc, Value kv, int64_t groups) {
  auto type = cast<RankedTensorType>(kv.getType());
  int64_t rank = type.getRank(), heads = rank - 3;
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + heads + 1, groups);
  SmallVector<AffineExpr> results;
  for (int64_t dim = 0; dim <= rank; ++dim)
    if (dim != heads + 1)
      results.push_back(getAffineDimExpr(dim, b.getContext()));
  Value repeated = createMap(
      b, loc, shape, type.getElementType(), {kv},
      {AffineMap::get(rank + 1, 0, results, b.getContext())},
      [](OpBuilder &, Location, ValueRange args) {
        return SmallVector<Value>{args[0]};
      });
  SmallVector<ReassociationIndices> groupsOfDims;
  for (int64_t dim = 0; dim <= rank; ++dim) {
    if (dim == heads + 1)
      continue;
    if (dim == heads)
      groupsOfDims.push_back({dim, dim + 1});
    else
      groupsOfDims.push_back({dim});
  }
  SmallVector<int64_t> collapsed(type.getShape());
  collapsed[heads] *= groups;
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(collapsed, type.getElementType()),
      repeated, groupsOfDims);
}

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
  unsigned batch = rank - 2;
  int64_t queries = q.getDimSize(batch), keys = k.getDimSize(batch);
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
  MLIRContext *context = b.getContext();
  Location loc = emitter.loc;
  Type f32 = b.getF32Type();

  // Grouped-query attention: k and v with each head repeated for the query
  // heads that read it.
  int64_t keyHeads = rank >= 3 ? k.getDimSize(rank - 3) : 0;
  if (*gqa && keyHeads != 0 && q.getDimSize(rank - 3) != keyHeads) {
    int64_t groups = q.getDimSize(rank - 3) / keyHeads;
    key = repeatHeads(b, loc, key, groups);
    value = repeatHeads(b, loc, value, groups);
  }

  // scores[..., l, s] = sum_e q[..., l, e] k[..., s, e], loops (..., l, s, e).
  unsigned l = batch, s = batch + 1, e = batch + 2;
  SmallVector<int64_t> loops(q.getShape().drop_back(2));
  loops.append({queries, keys, features});
  Value scores = createContraction(
      b, loc, loops, {e}, emitter.input(0),
      batchedMap(context, batch + 3, batch, {l, e}), key,
      batchedMap(context, batch + 3, batch, {s, e}),
      batchedMap(context, batch + 3, batch, {l, s}));

  // Scaled, then masked: by the additive mask, or -inf above the diagonal
  // (shifted by each row's query position).
  AffineMap identity = identityMap(context, rank);
  SmallVector<Value> inputs{scores};
  SmallVector<AffineMap> maps{identity};
  if (hasMask) {
    inputs.push_back(emitter.input(3));
    maps.push_back(
        getBroadcastMap(context, emitter.inputType(3).getShape(), scoresShape));
  }
  if (hasPositions) {
    inputs.push_back(emitter.input(3));
    maps.push_back(AffineMap::get(rank, 0, getAffineDimExpr(0, context)));
  }
  double scaleValue = *scale;
  bool isCausal = *causal;
  Value logits = createMap(
      b, loc, scoresShape, f32, inputs, maps,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange args) {
        Value value = arith::MulFOp::create(
            nested, bodyLoc, args[0],
            floatConstant(nested, bodyLoc, f32, scaleValue));
        if (hasMask)
          value = arith::AddFOp::create(nested, bodyLoc, value,
                                        extend(nested, bodyLoc, args[1]));
        if (isCausal) {
          Value row = linalg::IndexOp::create(nested, bodyLoc, batch);
          Value column = linalg::IndexOp::create(nested, bodyLoc, batch + 1);
          Value above;
          if (hasPositions) {
            // Key j is masked iff j > positions[b] + i, in i64: a negative
            // position masks the query's whole row.
            Type i64 = nested.getI64Type();
            Value start = args[1];
            if (start.getType() != i64)
              start = arith::ExtSIOp::create(nested, bodyLoc, i64, start);
            Value position = arith::AddIOp::create(
                nested, bodyLoc, start,
                arith::IndexCastOp::create(nested, bodyLoc, i64, row));
            above = arith::CmpIOp::create(
                nested, bodyLoc, arith::CmpIPredicate::sgt,
                arith::IndexCastOp::create(nested, bodyLoc, i64, column),
                position);
          } else {
            above = arith::CmpIOp::create(
                nested, bodyLoc, arith::CmpIPredicate::ugt, column, row);
          }
          Value minusInf = arith::ConstantOp::create(
              nested, bodyLoc, getNeutral(f32, Combiner::Max));
          value =
              arith::SelectOp::create(nested, bodyLoc, above, minusInf, value);
        }
        return SmallVector<Value>{value};
      });

  // Softmax over s as reductions, in f32; a query whose keys are all masked
  // gets weights 0 and so an output of 0, as in PyTorch.
  Value weights = createSoftmax(b, loc, logits, s, f32,
                                /*zeroMaskedRows=*/true);

  // out[..., l, ev] = sum_s weights[..., l, s] v[..., s, ev], loops
  // (..., l, ev, s).
  unsigned ev = batch + 1, sv = batch + 2;
  SmallVector<int64_t> outLoops(q.getShape().drop_back(2));
  outLoops.append({queries, values, keys});
  Value out = createContraction(b, loc, outLoops, {sv}, weights,
                                batchedMap(context, batch + 3, batch, {l, sv}),
                                value,
                                batchedMap(context, batch + 3, batch, {sv, ev}),
                                batchedMap(context, batch + 3, batch, {l, ev}));
  return SmallVector<Value>{roundTensor(b, loc, out, q.getElementType())};
}

//===- RingAttention.cpp - Attention over a ring of key blocks ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --dtensor-ring-attention: a dtensor.attention whose key and value are
// all-gathered along their sequence over one mesh dim becomes n attentions,
// one per rank's key/value block, the blocks passed around the group by
// dtensor.shift and the results merged through the log-sum-exp
// (`accumulate`). Step t attends to the block of group index (g - t) mod n,
// whose keys start at that index's torch.chunk offset: the causal positions
// and an additive mask's key columns are shifted by it, so every step sees
// the keys at their global positions.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Analysis/ElementBytes.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Partition/DimSlices.h"
#include "dtensor/Partition/Passes.h"

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

namespace dtensor {
#define GEN_PASS_DEF_RINGATTENTION
#include "dtensor/Partition/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-ring-attention"

using namespace mlir;
using namespace dtensor;

namespace {

/// The all-gather of a key or value operand along its logical sequence dim
/// over one mesh dim, and the operand's position among its results.
struct GatheredOperand {
  AllGatherOp gather;
  unsigned index = 0;
  Value local() { return gather.getInputs()[index]; }
};

std::optional<GatheredOperand> getGathered(Value operand,
                                           ArrayRef<int64_t> dims) {
  auto result = dyn_cast<OpResult>(operand);
  auto gather = result ? dyn_cast<AllGatherOp>(result.getOwner()) : nullptr;
  if (!gather || gather.getMeshDims().size() != 1 ||
      static_cast<int64_t>(gather.getGatherDim()) != dims[2])
    return std::nullopt;
  return GatheredOperand{gather, result.getResultNumber()};
}

/// Bytes of a tensor type with static sizes, or nullopt.
std::optional<int64_t> getStaticBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  std::optional<int64_t> element =
      getStoredElementBytes(tensor.getElementType());
  if (!tensor.hasStaticShape() || !element)
    return std::nullopt;
  return tensor.getNumElements() * *element;
}

/// The type of a block: `local` with the sequence dim `dim` of the piece
/// size, static only when every piece has it.
RankedTensorType getBlockType(Value local, int64_t dim, bool even,
                              int64_t chunk) {
  auto type = cast<RankedTensorType>(local.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = even ? chunk : ShapedType::kDynamic;
  return RankedTensorType::get(shape, type.getElementType());
}

class RingBuilder {
public:
  RingBuilder(OpBuilder &b, AttentionOp attention, GatheredOperand key,
              GatheredOperand value, int64_t groupSize, int64_t sequence)
      : b(b), loc(attention.getLoc()), attention(attention), key(key),
        value(value), n(groupSize), sequence(sequence),
        chunk((sequence + groupSize - 1) / groupSize),
        even(sequence % groupSize == 0) {}

  /// Builds the ring before `attention` and returns its output.
  Value build();

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// The first key of the block of group index (g - step) mod n.
  Value blockStart(Value coord, int64_t step);
  /// `positions` (or 0 when there are none) minus `start`, as [B] i64.
  Value shiftedPositions(Value start);
  /// The mask's columns of the block [start, start + size).
  Value maskColumns(Value start, Value size);

  OpBuilder &b;
  Location loc;
  AttentionOp attention;
  GatheredOperand key, value;
  int64_t n, sequence, chunk;
  bool even;
};

Value RingBuilder::blockStart(Value coord, int64_t step) {
  // (g - step) mod n as (g + n - step mod n) mod n, in index arithmetic.
  Value shifted = arith::AddIOp::create(b, loc, coord, index(n - step % n));
  Value source = arith::RemUIOp::create(b, loc, shifted, index(n));
  Value start = arith::MulIOp::create(b, loc, source, index(chunk));
  return arith::MinUIOp::create(b, loc, start, index(sequence));
}

Value RingBuilder::shiftedPositions(Value start) {
  Value query = attention.getQuery();
  int64_t batchDim = attention.getQueryDims()[0];
  OpFoldResult batch = tensor::getMixedSize(b, loc, query, batchDim);
  Type i64 = b.getI64Type();
  Value empty = tensor::EmptyOp::create(b, loc, {batch}, i64);
  Value offset = arith::IndexCastOp::create(b, loc, i64, start);
  Value positions = attention.getPositions();
  if (!positions) {
    Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
    Value negated = arith::SubIOp::create(b, loc, zero, offset);
    return linalg::FillOp::create(b, loc, negated, empty).getResult(0);
  }
  AffineMap identity = b.getMultiDimIdentityMap(1);
  return linalg::GenericOp::create(
             b, loc, TypeRange{empty.getType()}, ValueRange{positions},
             ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               Value difference =
                   arith::SubIOp::create(nested, nestedLoc, args[0], offset);
               linalg::YieldOp::create(nested, nestedLoc, difference);
             })
      .getResult(0);
}

Value RingBuilder::maskColumns(Value start, Value size) {
  Value mask = attention.getMask();
  if (cast<RankedTensorType>(mask.getType()).getDimSize(3) == 1)
    return mask; // broadcast over the keys
  return sliceDim(b, loc, mask, 3, start,
                  even ? OpFoldResult(b.getIndexAttr(chunk))
                       : OpFoldResult(size));
}

Value RingBuilder::build() {
  AllGatherOp gather = key.gather;
  StringRef mesh = gather.getMesh();
  int64_t meshDim = gather.getMeshDims()[0];
  Value coord = MeshCoordOp::create(b, loc, TypeRange{b.getIndexType()}, mesh,
                                    b.getDenseI64ArrayAttr({meshDim}))
                    .getResult(0);

  // The log-sum-exp of each query, [B, H, L] in logical order.
  Value query = attention.getQuery();
  ArrayRef<int64_t> queryDims = attention.getQueryDims();
  SmallVector<OpFoldResult> lseSizes;
  for (int64_t dim = 0; dim < 3; ++dim)
    lseSizes.push_back(tensor::getMixedSize(b, loc, query, queryDims[dim]));
  Type element = attention.getQuery().getType().getElementType();
  Value lse = tensor::EmptyOp::create(b, loc, lseSizes, element);

  int64_t keyDim = attention.getKeyDims()[2];
  int64_t valueDim = attention.getValueDims()[2];
  Value keyBlock = key.local(), valueBlock = value.local();
  Value out = attention.getInit();
  for (int64_t step = 0; step < n; ++step) {
    if (step > 0) {
      // The block held now goes to the next rank; the one of the rank
      // before arrives. Key and value in one call when they share the dim.
      auto shift = [&](ValueRange blocks, int64_t dim) {
        SmallVector<Type> types;
        for (Value block : blocks)
          types.push_back(getBlockType(block, dim, even, chunk));
        return ShiftOp::create(b, loc, types, blocks, dim, sequence, step - 1,
                               mesh, ArrayRef<int64_t>{meshDim})
            .getResults();
      };
      if (keyDim == valueDim) {
        ValueRange next = shift({keyBlock, valueBlock}, keyDim);
        keyBlock = next[0];
        valueBlock = next[1];
      } else {
        keyBlock = shift({keyBlock}, keyDim)[0];
        valueBlock = shift({valueBlock}, valueDim)[0];
      }
    }
    Value start = blockStart(coord, step);
    Value positions = attention.getCausal() ? shiftedPositions(start) : Value();
    Value mask;
    if (attention.getMask()) {
      Value size =
          even ? Value()
               : tensor::DimOp::create(b, loc, keyBlock, keyDim).getResult();
      mask = maskColumns(start, size);
    }
    auto ring = AttentionOp::create(
        b, loc, out.getType(), lse.getType(), query, keyBlock, valueBlock, mask,
        /*rows=*/Value(), positions, out, lse, attention.getScaleAttr(),
        attention.getCausalAttr(), step > 0 ? b.getUnitAttr() : UnitAttr(),
        attention.getQueryDimsAttr(), attention.getKeyDimsAttr(),
        attention.getValueDimsAttr(), attention.getResultDimsAttr());
    out = ring.getResult();
    lse = ring.getLogSumExp();
  }
  return out;
}

struct RingAttention : dtensor::impl::RingAttentionBase<RingAttention> {
  using RingAttentionBase::RingAttentionBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    RingAttentionBase::getDependentDialects(registry);
    registry.insert<DTensorDialect>();
  }

  /// Whether to ring an attention whose key and value gather into
  /// `gathered` tensors.
  bool chooseRing(ModuleOp module, ArrayRef<Value> gathered) const {
    if (module)
      if (auto method = module->getAttrOfType<StringAttr>(
              DTensorDialect::getRotateMethodAttrName()))
        return method.getValue() == "alltoall";
    int64_t bytes = 0;
    for (Value tensor : gathered) {
      std::optional<int64_t> size = getStaticBytes(tensor.getType());
      if (!size)
        return false;
      bytes += *size;
    }
    return bytes >= minGatheredBytes;
  }

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    auto module = function->getParentOfType<ModuleOp>();
    SmallVector<AttentionOp> candidates;
    function.walk([&](AttentionOp op) { candidates.push_back(op); });
    for (AttentionOp attention : candidates) {
      auto skip = [&](llvm::StringRef reason) {
        LLVM_DEBUG(llvm::dbgs()
                   << DEBUG_TYPE ": kept the attention at "
                   << attention.getLoc() << ": " << reason << "\n");
        (void)reason;
      };
      if (attention.getRows() || attention.getLogSumExpInit()) {
        skip("it reads KV-cache rows or has a log-sum-exp already");
        continue;
      }
      std::optional<GatheredOperand> key =
          getGathered(attention.getKey(), attention.getKeyDims());
      std::optional<GatheredOperand> value =
          getGathered(attention.getValue(), attention.getValueDims());
      if (!key || !value || value->gather.getMesh() != key->gather.getMesh() ||
          value->gather.getMeshDims() != key->gather.getMeshDims()) {
        skip("key and value are not gathered along their sequence over the "
             "same mesh dim");
        continue;
      }
      MeshOp mesh = lookupMesh(attention, key->gather.getMeshAttr());
      if (!mesh)
        continue;
      int64_t groupSize = mesh.getGroupSize(key->gather.getMeshDims());
      int64_t sequence = cast<RankedTensorType>(attention.getKey().getType())
                             .getDimSize(attention.getKeyDims()[2]);
      if (groupSize <= 1 || ShapedType::isDynamic(sequence)) {
        skip("a group of one rank or a dynamic gathered sequence");
        continue;
      }
      if (!chooseRing(module, {attention.getKey(), attention.getValue()})) {
        skip("dtensor.rotate_method or the gathered bytes keep the "
             "all-gather");
        continue;
      }
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": a ring of " << groupSize
                              << " blocks for the attention at "
                              << attention.getLoc() << "\n");
      OpBuilder b(attention);
      Value out =
          RingBuilder(b, attention, *key, *value, groupSize, sequence).build();
      attention.getResult().replaceAllUsesWith(out);
      attention.erase();
      SmallPtrSet<Operation *, 2> gathers{key->gather, value->gather};
      for (Operation *gather : gathers)
        if (gather->use_empty())
          gather->erase();
    }
  }
};

} // namespace

//===- EmulateLocalMaps.cpp - a local map on one device -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The single-device form of a dtensor.local_map runs its body once per mesh
// position, on the piece of each input that position holds, and assembles
// the results as their output layouts say: shards placed at their offsets,
// partial values reduced, replicated values taken from the first position.
// A Partial(sum) input gives its value to the first position of its group
// and zeros to the others (partitioning's Replicate -> Partial(sum)); the
// other partial kinds give every position the value.
//
//===----------------------------------------------------------------------===//

#include "EmulateLocalMaps.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace dtensor;

static Value createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                          Attribute value) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType());
  Value scalar = arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// The static slice of `value` at `offsets` of `sizes`.
static Value slice(OpBuilder &b, Location loc, Value value,
                   ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> strides(offsets.size(), 1);
  auto type = cast<RankedTensorType>(value.getType());
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(sizes, type.getElementType()), value,
      ValueRange(), ValueRange(), ValueRange(), offsets, sizes, strides);
}

static Value insert(OpBuilder &b, Location loc, Value piece, Value into,
                    ArrayRef<int64_t> offsets) {
  auto type = cast<RankedTensorType>(piece.getType());
  SmallVector<int64_t> strides(offsets.size(), 1);
  return tensor::InsertSliceOp::create(b, loc, piece, into, ValueRange(),
                                       ValueRange(), ValueRange(), offsets,
                                       type.getShape(), strides);
}

/// `a` combined with `b` elementwise by `kind`.
static Value combine(OpBuilder &b, Location loc, layout::ReduceKind kind,
                     Value lhs, Value rhs) {
  auto type = cast<RankedTensorType>(lhs.getType());
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType());
  ValueRange ins{lhs, rhs};
  switch (kind) {
  case layout::ReduceKind::Max:
    return linalg::MaxOp::create(b, loc, ins, init).getResult(0);
  case layout::ReduceKind::Min:
    return linalg::MinOp::create(b, loc, ins, init).getResult(0);
  default:
    return linalg::AddOp::create(b, loc, ins, init).getResult(0);
  }
}

static bool isPartial(const layout::Placement &placement) {
  return placement.isPartial();
}

static void emulate(LocalMapOp op, MeshOp meshOp) {
  layout::Mesh mesh = meshOp.getLayoutMesh();
  OpBuilder b(op);
  Location loc = op.getLoc();
  Block &body = op.getBody().front();

  // The body's results at each position, in their static per-position types.
  std::vector<SmallVector<Value>> pieces;
  for (int64_t position = 0; position < mesh.size(); ++position) {
    std::vector<int64_t> coord = mesh.coordOfIndex(position);
    IRMapping mapping;
    for (auto [index, input] : llvm::enumerate(op.getInputs())) {
      auto type = cast<RankedTensorType>(input.getType());
      std::vector<layout::Placement> placements =
          op.getInLayout(index)
              .getNormalized(type.getRank())
              .getLayoutPlacements();
      layout::Shard shard = layout::localShard(
          std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
          placements, mesh, coord);
      Value piece = slice(b, loc, input, shard.offset, shard.shape);
      // Partial(sum): the value at the first position of each group.
      bool zero = false;
      for (auto [meshDim, placement] : llvm::enumerate(placements))
        zero |= isPartial(placement) &&
                placement.reduce == layout::ReduceKind::Sum &&
                coord[meshDim] != 0;
      if (zero)
        piece = createFilled(b, loc, cast<RankedTensorType>(piece.getType()),
                             b.getZeroAttr(type.getElementType()));
      Type argType = body.getArgument(index).getType();
      if (piece.getType() != argType)
        piece = tensor::CastOp::create(b, loc, argType, piece);
      mapping.map(body.getArgument(index), piece);
    }
    for (Operation &inner : body.without_terminator()) {
      // The rank's coordinates are this position's.
      if (auto coords = dyn_cast<MeshCoordOp>(inner)) {
        for (auto [result, meshDim] :
             llvm::zip_equal(coords.getCoords(), coords.getMeshDims()))
          mapping.map(result, arith::ConstantIndexOp::create(
                                  b, loc, coord[meshDim]));
        continue;
      }
      b.clone(inner, mapping);
    }
    SmallVector<Value> results;
    for (auto [index, value] : llvm::enumerate(op.getYield().getValues())) {
      auto type = cast<RankedTensorType>(op.getResult(index).getType());
      std::vector<layout::Placement> placements =
          op.getOutLayout(index)
              .getNormalized(type.getRank())
              .getLayoutPlacements();
      layout::Shard shard = layout::localShard(
          std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
          placements, mesh, coord);
      Value piece = mapping.lookupOrDefault(value);
      auto pieceType = RankedTensorType::get(shard.shape,
                                             type.getElementType());
      if (piece.getType() != pieceType)
        piece = tensor::CastOp::create(b, loc, pieceType, piece);
      results.push_back(piece);
    }
    pieces.push_back(std::move(results));
  }

  // Assemble each result from the pieces of the positions at coordinate 0
  // of its Replicate mesh dims; partial pieces reduced.
  SmallVector<Value> assembled;
  for (auto [index, result] : llvm::enumerate(op.getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    std::vector<layout::Placement> placements =
        op.getOutLayout(index).getNormalized(type.getRank()).getLayoutPlacements();
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    Value value = tensor::EmptyOp::create(b, loc, type.getShape(),
                                          type.getElementType());
    // First the positions that start each partial group, then the others.
    for (bool first : {true, false}) {
      for (int64_t position = 0; position < mesh.size(); ++position) {
        std::vector<int64_t> coord = mesh.coordOfIndex(position);
        bool skip = false, starts = true;
        for (auto [meshDim, placement] : llvm::enumerate(placements)) {
          if (placement.isReplicate())
            skip |= coord[meshDim] != 0;
          if (isPartial(placement))
            starts &= coord[meshDim] == 0;
        }
        if (skip || starts != first)
          continue;
        layout::Shard shard =
            layout::localShard(shape, placements, mesh, coord);
        Value piece = pieces[position][index];
        if (!first) {
          layout::ReduceKind kind = layout::ReduceKind::Sum;
          for (const layout::Placement &placement : placements)
            if (isPartial(placement))
              kind = placement.reduce;
          piece = combine(b, loc, kind,
                          slice(b, loc, value, shard.offset, shard.shape),
                          piece);
        }
        value = insert(b, loc, piece, value, shard.offset);
      }
    }
    // Partial(avg): the sum over the group, divided by its size.
    int64_t averaged = 1;
    for (auto [meshDim, placement] : llvm::enumerate(placements))
      if (isPartial(placement) && placement.reduce == layout::ReduceKind::Avg)
        averaged *= mesh.dimSize(meshDim);
    if (averaged > 1) {
      Type element = type.getElementType();
      Attribute count = isa<FloatType>(element)
                            ? Attribute(b.getFloatAttr(element, averaged))
                            : Attribute(b.getIntegerAttr(element, averaged));
      Value divisor = createFilled(b, loc, type, count);
      Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element);
      value = linalg::DivOp::create(b, loc, ValueRange{value, divisor}, init)
                  .getResult(0);
    }
    assembled.push_back(value);
  }
  op.replaceAllUsesWith(assembled);
  op.erase();
}

LogicalResult dtensor::emulateLocalMaps(ModuleOp module) {
  SmallVector<LocalMapOp> localMaps;
  module.walk([&](LocalMapOp op) { localMaps.push_back(op); });
  for (LocalMapOp op : localMaps) {
    // Without results it computes nothing.
    if (op.getOutLayouts().empty()) {
      op.erase();
      continue;
    }
    // The verifier checked that the layouts name one mesh.
    LayoutAttr layoutAttr = op.getOutLayout(0);
    MeshOp mesh = lookupMesh(op, layoutAttr.getMesh());
    if (!mesh)
      return op.emitOpError("names no mesh");
    emulate(op, mesh);
  }
  return success();
}

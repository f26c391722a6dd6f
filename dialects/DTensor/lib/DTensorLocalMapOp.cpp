//===- DTensorLocalMapOp.cpp - dtensor.local_map ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-rank code inside a global program: the body runs on each rank's local
// pieces of the inputs and returns its pieces of the results. The verifier
// checks the counts, the body's per-rank types against the layouts, and
// that the body is self-contained per-rank code.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>

using namespace mlir;
using namespace dtensor;

YieldOp LocalMapOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult LocalMapOp::verifyRegions() {
  if (getInLayouts().size() != getInputs().size())
    return emitOpError() << "has " << getInputs().size() << " input(s) but "
                         << getInLayouts().size() << " input layout(s)";
  if (getOutLayouts().size() != getResults().size())
    return emitOpError() << "has " << getResults().size() << " result(s) but "
                         << getOutLayouts().size() << " output layout(s)";
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body takes " << body.getNumArguments()
                         << " argument(s) for " << getInputs().size()
                         << " input(s)";
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end in dtensor.yield");
  if (yield.getValues().size() != getResults().size())
    return emitOpError() << "body yields " << yield.getValues().size()
                         << " value(s) for " << getResults().size()
                         << " result(s)";
  // Layout ops belong to the global program around the body.
  WalkResult nested = body.walk([&](Operation *op) {
    if (isa<DistributeOp, ToLayoutOp, RedistributeOp, LocalMapOp>(op)) {
      emitOpError() << "body holds '" << op->getName()
                    << "'; the body is per-rank code, layouts belong to the "
                       "program around it";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (nested.wasInterrupted())
    return failure();
  return success();
}

/// The per-rank type of `global` laid out as `layout` on `mesh`.
static RankedTensorType getLocalType(RankedTensorType global, LayoutAttr layout,
                                     MeshOp mesh) {
  std::vector<int64_t> shape(global.getShape().begin(),
                             global.getShape().end());
  std::vector<int64_t> local = layout::localShapeType(
      shape, layout.getNormalized(global.getRank()).getLayoutPlacements(),
      mesh.getLayoutMesh());
  SmallVector<int64_t> sizes;
  for (int64_t size : local)
    sizes.push_back(size == layout::kDynamic ? ShapedType::kDynamic : size);
  return global.clone(sizes);
}

/// Checks `layout` against `global` and that the body's per-rank type
/// `local` is the one the layout gives every rank.
static LogicalResult verifyPiece(LocalMapOp op, StringRef what, unsigned index,
                                 LayoutAttr layout, RankedTensorType global,
                                 Type local, SymbolTableCollection &tables) {
  MeshOp mesh = lookupMesh(op, layout.getMesh(), &tables);
  if (!mesh)
    return op.emitOpError() << what << " layout #" << index << " refers to "
                            << layout.getMesh()
                            << ", which is not a dtensor.mesh";
  if (failed(layout.verifyFor(
          [&] {
            return op.emitOpError() << what << " layout #" << index << ": ";
          },
          global, mesh)))
    return failure();
  LayoutAttr normalized = layout.getNormalized(global.getRank());
  for (const layout::Placement &placement : normalized.getLayoutPlacements())
    if (placement.isHeadTail())
      return op.emitOpError()
             << what << " layout #" << index << " shards dim " << placement.dim
             << " head_tail; a local map's pieces are one block per rank";
  for (int64_t dim = 0; dim < global.getRank(); ++dim)
    if (global.isDynamicDim(dim) &&
        !layout::shardingMeshDims(normalized.getLayoutPlacements(), dim)
             .empty())
      return op.emitOpError()
             << what << " #" << index << " shards dim " << dim
             << ", whose global size is dynamic; sharded dims need static "
                "sizes";
  RankedTensorType expected = getLocalType(global, layout, mesh);
  if (local != expected)
    return op.emitOpError()
           << "the body's " << what << " #" << index << " is " << local
           << ", but " << layout << " gives " << global << " the per-rank type "
           << expected;
  return success();
}

LogicalResult LocalMapOp::verifySymbolUses(SymbolTableCollection &tables) {
  // The counts are checked by verifyRegions, which runs first.
  Block &body = getBody().front();
  FlatSymbolRefAttr meshRef;
  auto checkMesh = [&](LayoutAttr layout) -> LogicalResult {
    if (!meshRef)
      meshRef = layout.getMesh();
    if (layout.getMesh() == meshRef)
      return success();
    return emitOpError() << "uses meshes " << meshRef << " and "
                         << layout.getMesh() << "; a local map is on one mesh";
  };
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    LayoutAttr layout = getInLayout(index);
    if (failed(checkMesh(layout)) ||
        failed(verifyPiece(*this, "input", index, layout,
                           cast<RankedTensorType>(input.getType()),
                           body.getArgument(index).getType(), tables)))
      return failure();
  }
  for (auto [index, result] : llvm::enumerate(getResults())) {
    LayoutAttr layout = getOutLayout(index);
    if (failed(checkMesh(layout)) ||
        failed(verifyPiece(*this, "result", index, layout,
                           cast<RankedTensorType>(result.getType()),
                           getYield().getValues()[index].getType(), tables)))
      return failure();
  }
  return success();
}

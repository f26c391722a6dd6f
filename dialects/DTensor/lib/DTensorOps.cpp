//===- DTensorOps.cpp - dtensor operations ----------------------*- C++ -*-===//

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dtensor;

MeshOp dtensor::lookupMesh(Operation *from, FlatSymbolRefAttr symbol,
                           SymbolTableCollection *tables) {
  if (tables)
    return tables->lookupNearestSymbolFrom<MeshOp>(from, symbol);
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, symbol);
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> shape = getShape();
  if (shape.empty())
    return emitOpError("needs at least one mesh dim");
  for (auto [dim, size] : llvm::enumerate(shape))
    if (size <= 0)
      return emitOpError() << "mesh dim " << dim << " has size " << size
                           << "; sizes must be positive";

  if (std::optional<ArrayAttr> names = getDimNames()) {
    if (static_cast<int64_t>(names->size()) != getRank())
      return emitOpError() << "has " << names->size() << " dim names for "
                           << getRank() << " mesh dims";
    llvm::SmallDenseSet<StringRef> seen;
    for (StringAttr name : names->getAsRange<StringAttr>()) {
      if (name.getValue().empty())
        return emitOpError("dim names must not be empty");
      if (!seen.insert(name.getValue()).second)
        return emitOpError() << "dim name '" << name.getValue()
                             << "' is used twice";
    }
  }

  int64_t numDevices = 1;
  for (int64_t size : shape)
    if (llvm::MulOverflow(numDevices, size, numDevices))
      return emitOpError("has more devices than a 64-bit integer can count");

  if (std::optional<ArrayRef<int64_t>> ids = getDeviceIds()) {
    if (static_cast<int64_t>(ids->size()) != numDevices)
      return emitOpError() << "lists " << ids->size() << " device ids for "
                           << numDevices << " mesh positions";
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t id : *ids) {
      if (id < 0 || id >= numDevices)
        return emitOpError() << "device id " << id << " is out of range [0, "
                             << numDevices << ")";
      if (!seen.insert(id).second)
        return emitOpError() << "device id " << id << " appears twice";
    }
  }
  return success();
}

int64_t MeshOp::getNumDevices() {
  // The verifier rejects meshes whose device count overflows.
  int64_t numDevices = 1;
  for (int64_t size : getShape())
    numDevices *= size;
  return numDevices;
}

int64_t MeshOp::getGroupSize(ArrayRef<int64_t> meshDims) {
  int64_t groupSize = 1;
  for (int64_t meshDim : meshDims)
    groupSize *= getShape()[meshDim];
  return groupSize;
}

layout::Mesh MeshOp::getLayoutMesh() {
  std::vector<int64_t> ids;
  if (std::optional<ArrayRef<int64_t>> deviceIds = getDeviceIds())
    ids.assign(deviceIds->begin(), deviceIds->end());
  return layout::Mesh(std::vector<int64_t>(getShape().begin(),
                                           getShape().end()),
                      std::move(ids));
}

//===----------------------------------------------------------------------===//
// Global-level ops
//===----------------------------------------------------------------------===//

/// Resolves the mesh of `layout` and checks the layout against `type`.
static LogicalResult verifyLayoutUse(Operation *op, StringRef what,
                                     LayoutAttr layout, ShapedType type,
                                     SymbolTableCollection &tables) {
  MeshOp mesh = lookupMesh(op, layout.getMesh(), &tables);
  if (!mesh)
    return op->emitOpError() << what << " refers to " << layout.getMesh()
                             << ", which is not a dtensor.mesh";
  return layout.verifyFor(
      [&] { return op->emitOpError() << what << " "; }, type, mesh);
}

LogicalResult DistributeOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLayoutUse(*this, "layout", getLayout(), getType(), tables);
}

/// Rewrites `layout` with non-negative shard dims; true when it changed.
static bool normalizeInPlace(Operation *op, StringRef name, LayoutAttr layout,
                             int64_t rank) {
  LayoutAttr normalized = layout.getNormalized(rank);
  if (normalized == layout)
    return false;
  op->setAttr(name, normalized);
  return true;
}

OpFoldResult DistributeOp::fold(FoldAdaptor) {
  // The annotation itself never folds away; only its spelling is normalised.
  if (normalizeInPlace(*this, getLayoutAttrName(), getLayout(),
                       getType().getRank()))
    return getResult();
  return {};
}

LogicalResult RedistributeOp::verify() {
  if (getSource().getMesh() != getTarget().getMesh())
    return emitOpError() << "source layout is on " << getSource().getMesh()
                         << " but target layout is on "
                         << getTarget().getMesh()
                         << "; both must use the same mesh";
  return success();
}

LogicalResult
RedistributeOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (failed(verifyLayoutUse(*this, "source layout", getSource(), getType(),
                             tables)))
    return failure();
  return verifyLayoutUse(*this, "target layout", getTarget(), getType(),
                         tables);
}

OpFoldResult RedistributeOp::fold(FoldAdaptor) {
  int64_t rank = getType().getRank();
  bool changed =
      normalizeInPlace(*this, getSourceAttrName(), getSource(), rank);
  changed |= normalizeInPlace(*this, getTargetAttrName(), getTarget(), rank);
  if (getSource() == getTarget())
    return getInput();
  return changed ? getResult() : OpFoldResult();
}

//===----------------------------------------------------------------------===//
// Local-level ops
//===----------------------------------------------------------------------===//

LogicalResult dtensor::detail::verifyMeshDimList(Operation *op,
                                                 ArrayRef<int64_t> meshDims) {
  if (meshDims.empty())
    return op->emitOpError("needs at least one mesh dim");
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t meshDim : meshDims) {
    if (meshDim < 0)
      return op->emitOpError() << "mesh dim " << meshDim << " is negative";
    if (!seen.insert(meshDim).second)
      return op->emitOpError() << "mesh dim " << meshDim << " is listed twice";
  }
  return success();
}

template <typename OpT>
LogicalResult
dtensor::detail::verifyMeshGroupOp(OpT op, SymbolTableCollection &tables) {
  MeshOp mesh = lookupMesh(op, op.getMeshAttr(), &tables);
  if (!mesh)
    return op.emitOpError() << op.getMeshAttr()
                            << " does not name a dtensor.mesh";
  ArrayRef<int64_t> meshDims = op.getMeshDims();
  for (int64_t meshDim : meshDims)
    if (meshDim < 0 || meshDim >= mesh.getRank())
      return op.emitOpError()
             << "mesh dim " << meshDim << " is out of range for mesh @"
             << mesh.getSymName() << " with " << mesh.getRank() << " dims";
  // Symbol uses are checked after every op's own verifier, so the mesh's
  // device count is known not to overflow here.
  return op.verifyGroupShapes(mesh, mesh.getGroupSize(meshDims));
}

/// Checks that `dim` names a dim of a rank-`rank` tensor.
static LogicalResult verifyTensorDim(Operation *op, StringRef name,
                                     int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << name << " " << dim
                             << " is out of range for a rank-" << rank
                             << " tensor";
  return success();
}

/// Checks that input and result differ at most in their dim sizes.
static LogicalResult verifySameRankAndElementType(Operation *op,
                                                  RankedTensorType input,
                                                  RankedTensorType result) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError() << "result element type "
                             << result.getElementType()
                             << " differs from input element type "
                             << input.getElementType();
  if (input.getRank() != result.getRank())
    return op->emitOpError() << "result rank " << result.getRank()
                             << " differs from input rank " << input.getRank();
  return success();
}

/// Checks the shape of a collective's result: dim `grown` (if any) is the
/// input's multiplied by the group size, dim `shrunk` (if any) divided by it,
/// every other dim unchanged. Static sizes claim the same size on every rank,
/// so a split that is uneven across the group needs a dynamic result dim.
static LogicalResult verifyRegroupedShape(Operation *op,
                                          RankedTensorType input,
                                          RankedTensorType result,
                                          int64_t groupSize,
                                          std::optional<int64_t> grown,
                                          std::optional<int64_t> shrunk) {
  for (int64_t dim = 0, rank = input.getRank(); dim < rank; ++dim) {
    int64_t in = input.getDimSize(dim);
    int64_t out = result.getDimSize(dim);
    bool bothStatic = !ShapedType::isDynamic(in) && !ShapedType::isDynamic(out);
    if (dim == grown) {
      int64_t gathered;
      if (!ShapedType::isDynamic(in) &&
          llvm::MulOverflow(in, groupSize, gathered))
        return op->emitOpError()
               << "result dim " << dim << " would hold " << in << " on each of "
               << groupSize << " ranks, more than a 64-bit size can hold";
      if (bothStatic && out != gathered)
        return op->emitOpError()
               << "result dim " << dim << " has size " << out << "; expected "
               << in * groupSize << " (" << in << " on each of " << groupSize
               << " ranks)";
      continue;
    }
    if (dim == shrunk) {
      if (!bothStatic)
        continue;
      if (in % groupSize != 0)
        return op->emitOpError()
               << "input dim " << dim << " of size " << in
               << " does not split evenly over " << groupSize
               << " ranks; the result dim must be dynamic";
      if (out != in / groupSize)
        return op->emitOpError()
               << "result dim " << dim << " has size " << out << "; expected "
               << in / groupSize << " (" << in << " split over " << groupSize
               << " ranks)";
      continue;
    }
    if (in != out)
      return op->emitOpError() << "result dim " << dim << " differs from the "
                               << "input; only the communicated dim may change";
  }
  return success();
}

LogicalResult AllReduceOp::verifyGroupShapes(MeshOp, int64_t) {
  return success();
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifySameRankAndElementType(*this, getInput().getType(),
                                          getType())))
    return failure();
  return verifyTensorDim(*this, "gather_dim", getGatherDim(),
                         getType().getRank());
}

LogicalResult AllGatherOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  return verifyRegroupedShape(*this, getInput().getType(), getType(),
                              groupSize, getGatherDim(), std::nullopt);
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifySameRankAndElementType(*this, getInput().getType(),
                                          getType())))
    return failure();
  return verifyTensorDim(*this, "scatter_dim", getScatterDim(),
                         getType().getRank());
}

LogicalResult ReduceScatterOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  return verifyRegroupedShape(*this, getInput().getType(), getType(),
                              groupSize, std::nullopt, getScatterDim());
}

LogicalResult AllToAllOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(verifySameRankAndElementType(*this, getInput().getType(),
                                          getType())) ||
      failed(verifyTensorDim(*this, "split_dim", getSplitDim(), rank)) ||
      failed(verifyTensorDim(*this, "concat_dim", getConcatDim(), rank)))
    return failure();
  if (getSplitDim() == getConcatDim())
    return emitOpError("split_dim and concat_dim must differ");
  return success();
}

LogicalResult AllToAllOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  return verifyRegroupedShape(*this, getInput().getType(), getType(),
                              groupSize, getConcatDim(), getSplitDim());
}

LogicalResult BroadcastOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  int64_t root = getRootAttr().getInt();
  if (root < 0 || root >= groupSize)
    return emitOpError() << "root " << root
                         << " is out of range for a group of " << groupSize
                         << " ranks";
  return success();
}

LogicalResult ChunkOp::verify() {
  if (failed(verifySameRankAndElementType(*this, getInput().getType(),
                                          getType())))
    return failure();
  return verifyTensorDim(*this, "dim", getDim(), getType().getRank());
}

LogicalResult ChunkOp::verifyGroupShapes(MeshOp, int64_t groupSize) {
  return verifyRegroupedShape(*this, getInput().getType(), getType(),
                              groupSize, std::nullopt, getDim());
}

LogicalResult MeshCoordOp::verifyGroupShapes(MeshOp, int64_t) {
  return success();
}

LogicalResult MeshCoordOp::verify() {
  if (getCoords().size() != getMeshDims().size())
    return emitOpError() << "has " << getCoords().size() << " results for "
                         << getMeshDims().size() << " mesh dims";
  return success();
}

#define GET_OP_CLASSES
#include "dtensor/Dialect/DTensor/DTensorOps.cpp.inc"

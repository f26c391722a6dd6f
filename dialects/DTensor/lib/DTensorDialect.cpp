//===- DTensorDialect.cpp - dtensor dialect ---------------------*- C++ -*-===//

#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Dialect/DTensor/DTensorTypes.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace dtensor;

#include "dtensor/Dialect/DTensor/DTensorDialect.cpp.inc"

void DTensorDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dtensor/Dialect/DTensor/DTensorOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

/// Verifies `value`, the layout given to `what` #`index` (of type `type`) by
/// the attribute `attrName` on `op`.
static LogicalResult verifyLayoutOf(Operation *op, Type type, Attribute value,
                                    StringRef attrName, StringRef what,
                                    unsigned index) {
  auto layout = dyn_cast<LayoutAttr>(value);
  if (!layout)
    return op->emitOpError() << "'" << attrName << "' on " << what << " #"
                             << index << " must be a #dtensor.layout attribute";
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return op->emitOpError() << what << " #" << index
                             << " has a layout but is not a ranked tensor";
  MeshOp mesh = lookupMesh(op, layout.getMesh());
  if (!mesh)
    return op->emitOpError() << "layout of " << what << " #" << index
                             << " refers to " << layout.getMesh()
                             << ", which is not a dtensor.mesh";
  return layout.verifyFor(
      [&] {
        return op->emitOpError() << "layout of " << what << " #" << index
                                 << ": ";
      },
      tensorType, mesh);
}

/// Verifies the `dtensor.global_shape` of a per-rank tensor of `type`: its
/// rank, and, when `layout` is given, the local shape that layout gives every
/// rank (a static dim where all ranks agree, dynamic otherwise).
static LogicalResult verifyGlobalShape(Operation *op, Type type,
                                       Attribute value, LayoutAttr layout,
                                       StringRef what, unsigned index) {
  StringRef name = DTensorDialect::getGlobalShapeAttrName();
  auto shape = dyn_cast<DenseI64ArrayAttr>(value);
  if (!shape)
    return op->emitOpError() << "'" << name << "' on " << what << " #"
                             << index << " must be an array<i64: ...>";
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return op->emitOpError() << what << " #" << index
                             << " has a global shape but is not a ranked "
                                "tensor";
  if (static_cast<int64_t>(shape.size()) != tensorType.getRank())
    return op->emitOpError() << "global shape of " << what << " #" << index
                             << " has " << shape.size() << " dims but its "
                             << "type has rank " << tensorType.getRank();
  for (int64_t size : shape.asArrayRef())
    if (size < 0)
      return op->emitOpError() << "global shape of " << what << " #" << index
                               << " has a negative size " << size;
  if (!layout)
    return success();
  MeshOp mesh = lookupMesh(op, layout.getMesh());
  // The layout's own verifier reports a missing mesh or a bad shard dim.
  if (!mesh || failed(layout.verifyFor(
                   [&] { return InFlightDiagnostic(); }, tensorType, mesh)))
    return success();
  std::vector<int64_t> local = layout::localShapeType(
      std::vector<int64_t>(shape.asArrayRef().begin(),
                           shape.asArrayRef().end()),
      layout.getNormalized(tensorType.getRank()).getLayoutPlacements(),
      mesh.getLayoutMesh());
  for (auto [dim, size] : llvm::enumerate(local)) {
    int64_t expected =
        size == layout::kDynamic ? ShapedType::kDynamic : size;
    if (tensorType.getDimSize(dim) != expected)
      return op->emitOpError()
             << what << " #" << index << " has type " << tensorType
             << " but its layout gives dim " << dim << " of global size "
             << shape[dim] << " a local size of "
             << (expected == ShapedType::kDynamic ? std::string("?")
                                                  : std::to_string(expected))
             << " on every rank";
  }
  return success();
}

/// Verifies a dtensor attribute on argument or result `index` of a
/// function-like op: `dtensor.layout` or `dtensor.global_shape`.
static LogicalResult verifyValueAttr(Operation *op, Type type,
                                     NamedAttribute attr, LayoutAttr layout,
                                     StringRef what, unsigned index) {
  if (attr.getName() == DTensorDialect::getGlobalShapeAttrName())
    return verifyGlobalShape(op, type, attr.getValue(), layout, what, index);
  if (attr.getName() != DTensorDialect::getLayoutAttrName())
    return op->emitOpError() << "unknown dtensor attribute '"
                             << attr.getName().getValue() << "' on " << what
                             << " #" << index;
  return verifyLayoutOf(op, type, attr.getValue(), attr.getName().getValue(),
                        what, index);
}

/// Verifies the `dtensor.layouts` attribute of `op`: one entry per result, a
/// layout for each ranked-tensor result and a unit for any other result, so
/// that entries stay positional.
static LogicalResult verifyResultLayouts(Operation *op, Attribute value) {
  StringRef name = DTensorDialect::getResultLayoutsAttrName();
  auto layouts = dyn_cast<ArrayAttr>(value);
  if (!layouts)
    return op->emitOpError()
           << "'" << name << "' must be an array with one entry per result";
  if (layouts.size() != op->getNumResults())
    return op->emitOpError()
           << "'" << name << "' has " << layouts.size()
           << " entries but the op has " << op->getNumResults() << " results";
  for (auto [index, entry, result] :
       llvm::enumerate(layouts.getValue(), op->getResults())) {
    if (!isa<RankedTensorType>(result.getType())) {
      if (!isa<UnitAttr>(entry))
        return op->emitOpError()
               << "result #" << index << " is not a ranked tensor, so its "
               << "entry in '" << name << "' must be a unit attribute";
      continue;
    }
    if (failed(verifyLayoutOf(op, result.getType(), entry, name, "result",
                              index)))
      return failure();
  }
  return success();
}

LogicalResult DTensorDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == getResultLayoutsAttrName())
    return verifyResultLayouts(op, attr.getValue());
  // The mesh and group ids of the runtime calls, recorded on the module by
  // the CPU code generator for the artifact's manifest.
  if (isa<ModuleOp>(op) && isa<ArrayAttr>(attr.getValue()) &&
      (attr.getName() == "dtensor.comm_meshes" ||
       attr.getName() == "dtensor.comm_groups"))
    return success();
  // Any other dtensor attribute on an op would be ignored.
  return op->emitOpError()
         << "'" << attr.getName().getValue()
         << "' is not an operation attribute; the layouts of an op's results "
            "belong in '"
         << getResultLayoutsAttrName()
         << "', a function argument's or result's in its '"
         << getLayoutAttrName() << "'";
}

// MLIR verifies argument and result attributes of function-like ops only.

LogicalResult DTensorDialect::verifyRegionArgAttribute(Operation *op,
                                                       unsigned,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  auto function = cast<FunctionOpInterface>(op);
  return verifyValueAttr(
      op, function.getArgumentTypes()[argIndex], attr,
      function.getArgAttrOfType<LayoutAttr>(argIndex, getLayoutAttrName()),
      "argument", argIndex);
}

LogicalResult DTensorDialect::verifyRegionResultAttribute(
    Operation *op, unsigned, unsigned resultIndex, NamedAttribute attr) {
  auto function = cast<FunctionOpInterface>(op);
  return verifyValueAttr(
      op, function.getResultTypes()[resultIndex], attr,
      function.getResultAttrOfType<LayoutAttr>(resultIndex,
                                               getLayoutAttrName()),
      "result", resultIndex);
}

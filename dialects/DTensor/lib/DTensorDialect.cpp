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

/// Verifies a `dtensor.layout` attribute on argument or result `index` of a
/// function-like op.
static LogicalResult verifyValueLayout(Operation *op, Type type,
                                       NamedAttribute attr, StringRef what,
                                       unsigned index) {
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

/// The type of argument or result `index` of a function-like op. MLIR
/// verifies argument and result attributes of function-like ops only.
static Type getFunctionValueType(Operation *op, unsigned index,
                                 bool isResult) {
  auto function = cast<FunctionOpInterface>(op);
  return isResult ? function.getResultTypes()[index]
                  : function.getArgumentTypes()[index];
}

LogicalResult DTensorDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == getResultLayoutsAttrName())
    return verifyResultLayouts(op, attr.getValue());
  // Any other dtensor attribute on an op would be ignored.
  return op->emitOpError()
         << "'" << attr.getName().getValue()
         << "' is not an operation attribute; the layouts of an op's results "
            "belong in '"
         << getResultLayoutsAttrName()
         << "', a function argument's or result's in its '"
         << getLayoutAttrName() << "'";
}

LogicalResult DTensorDialect::verifyRegionArgAttribute(Operation *op,
                                                       unsigned,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  return verifyValueLayout(op, getFunctionValueType(op, argIndex, false), attr,
                           "argument", argIndex);
}

LogicalResult DTensorDialect::verifyRegionResultAttribute(
    Operation *op, unsigned, unsigned resultIndex, NamedAttribute attr) {
  return verifyValueLayout(op, getFunctionValueType(op, resultIndex, true),
                           attr, "result", resultIndex);
}

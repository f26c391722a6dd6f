//===- DTensorDialect.cpp - dtensor dialect ---------------------*- C++ -*-===//

#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

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
  auto layout = dyn_cast<LayoutAttr>(attr.getValue());
  if (!layout)
    return op->emitOpError()
           << "'" << attr.getName().getValue() << "' on " << what << " #"
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

LogicalResult DTensorDialect::verifyRegionArgAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  Region &region = op->getRegion(regionIndex);
  if (region.empty()) {
    // A declaration: arguments live in the function type.
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function)
      return success();
    return verifyValueLayout(op, function.getArgumentTypes()[argIndex], attr,
                             "argument", argIndex);
  }
  return verifyValueLayout(op, region.getArgument(argIndex).getType(), attr,
                           "argument", argIndex);
}

LogicalResult DTensorDialect::verifyRegionResultAttribute(
    Operation *op, unsigned regionIndex, unsigned resultIndex,
    NamedAttribute attr) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' on a result of an op that is not a function";
  return verifyValueLayout(op, function.getResultTypes()[resultIndex], attr,
                           "result", resultIndex);
}

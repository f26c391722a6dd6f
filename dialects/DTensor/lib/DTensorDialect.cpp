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
  // Layouts of values live on function arguments/results and in the ops of
  // this dialect; a dtensor attribute on an op itself would be ignored.
  return op->emitOpError()
         << "'" << attr.getName().getValue()
         << "' is not an operation attribute; a layout belongs on a function "
            "argument or result ('"
         << getLayoutAttrName() << "') or in dtensor.distribute";
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

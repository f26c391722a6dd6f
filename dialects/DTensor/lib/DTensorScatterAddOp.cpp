//===- DTensorScatterAddOp.cpp - dtensor.scatter_add ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The embedding's gradient: rows of updates added into a table at per-row
// indices. The verifier checks that updates and init agree on everything
// but their first dim, and that the indices give one row per update.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dtensor;

/// True when two dim sizes may be equal: equal, or either one dynamic.
static bool mayBeEqual(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult ScatterAddOp::verify() {
  RankedTensorType updates = getUpdates().getType();
  RankedTensorType init = getInit().getType();
  RankedTensorType indices = getIndices().getType();
  if (init.getRank() < 1)
    return emitOpError() << "init must have rank 1 or more ([rows, ...]), "
                            "not rank 0";
  if (updates.getRank() != init.getRank())
    return emitOpError() << "updates rank " << updates.getRank()
                         << " differs from init rank " << init.getRank();
  if (!isa<FloatType>(init.getElementType()))
    return emitOpError() << "init element type " << init.getElementType()
                         << " is not a float";
  if (updates.getElementType() != init.getElementType())
    return emitOpError() << "updates element type " << updates.getElementType()
                         << " differs from init element type "
                         << init.getElementType();
  for (int64_t dim = 1; dim < init.getRank(); ++dim)
    if (!mayBeEqual(updates.getDimSize(dim), init.getDimSize(dim)))
      return emitOpError() << "updates dim " << dim << " has size "
                           << updates.getDimSize(dim) << " but init dim " << dim
                           << " has size " << init.getDimSize(dim)
                           << "; the dims after the first must match";
  if (indices.getRank() != 1)
    return emitOpError() << "indices must be a 1-D tensor, not rank "
                         << indices.getRank();
  Type element = indices.getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
    return emitOpError() << "indices element type " << element
                         << " is not i32 or i64";
  if (!mayBeEqual(indices.getDimSize(0), updates.getDimSize(0)))
    return emitOpError() << "indices has " << indices.getDimSize(0)
                         << " elements but updates has "
                         << updates.getDimSize(0)
                         << " rows; each row needs one";
  return success();
}

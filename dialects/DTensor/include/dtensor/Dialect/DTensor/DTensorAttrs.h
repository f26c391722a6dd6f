//===- DTensorAttrs.h - placements and layouts ------------------*- C++ -*-===//

#ifndef DTENSOR_DIALECT_DTENSOR_DTENSORATTRS_H
#define DTENSOR_DIALECT_DTENSOR_DTENSORATTRS_H

#include "dtensor/Layout/LayoutMath.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

namespace dtensor {
class MeshOp;
} // namespace dtensor

#include "dtensor/Dialect/DTensor/DTensorEnums.h.inc"

#include "dtensor/Dialect/DTensor/DTensorAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dtensor/Dialect/DTensor/DTensorAttrs.h.inc"

namespace dtensor {
/// The layout-math counterpart of the dialect's reduction kind.
layout::ReduceKind toLayoutReduceKind(ReductionKind kind);
} // namespace dtensor

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORATTRS_H

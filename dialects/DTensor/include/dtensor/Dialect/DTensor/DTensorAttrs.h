//===- DTensorAttrs.h - placements and layouts ------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
/// Converts between the dialect's reduction kind and the layout-math one.
layout::ReduceKind toLayoutReduceKind(ReductionKind kind);
ReductionKind fromLayoutReduceKind(layout::ReduceKind kind);

/// Builds the placement attribute for a layout-math placement.
PlacementAttr getPlacementAttr(mlir::MLIRContext *context,
                               const layout::Placement &placement);

/// Builds the layout attribute on `mesh` for layout-math placements.
LayoutAttr getLayoutAttr(mlir::FlatSymbolRefAttr mesh,
                         const std::vector<layout::Placement> &placements);
} // namespace dtensor

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORATTRS_H

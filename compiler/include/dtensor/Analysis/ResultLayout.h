//===- ResultLayout.h - the layout an op gives its result -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_ANALYSIS_RESULTLAYOUT_H
#define DTENSOR_ANALYSIS_RESULTLAYOUT_H

#include "dtensor/Dialect/DTensor/DTensorAttrs.h"

#include "mlir/IR/Value.h"

namespace dtensor {

/// The layout the op defining `result` gives it: a distribute's layout, a
/// redistribute's target, or the result's entry in `dtensor.layouts`; null
/// when there is none.
LayoutAttr getResultLayout(mlir::OpResult result);

} // namespace dtensor

#endif // DTENSOR_ANALYSIS_RESULTLAYOUT_H

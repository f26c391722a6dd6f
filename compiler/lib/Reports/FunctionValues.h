//===- FunctionValues.h - the tensor values of a function -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the layout reports walk: a function's tensor values with the layout
// each has, in the order the IR printer shows them, and the mesh header.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_REPORTS_FUNCTIONVALUES_H
#define DTENSOR_COMPILER_REPORTS_FUNCTIONVALUES_H

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>
#include <vector>

namespace dtensor {

/// A tensor value and its layout; null when nothing gives it one.
struct ValueLayout {
  mlir::Value value;
  LayoutAttr layout;
};

/// The tensor values of the body of `fn`: arguments (with their
/// `dtensor.layout`) first, then everything defined inside, in order,
/// nested regions included.
std::vector<ValueLayout> collectFunctionValues(mlir::FunctionOpInterface fn);

/// "dtensor.mesh" syntax without the op name: `@m shape [2, 4] names [...]`.
std::string describeMesh(MeshOp mesh);

} // namespace dtensor

#endif // DTENSOR_COMPILER_REPORTS_FUNCTIONVALUES_H

//===- InitAllDialects.h - Dialects of the dtensor tools --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One list of the dialects the dtensor tools and the frontend register: the
// dtensor dialect and the upstream dialects its pipeline produces, from the
// imported global program to the LLVM dialect of both targets.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_INITALLDIALECTS_H
#define DTENSOR_INITALLDIALECTS_H

#include "mlir/IR/DialectRegistry.h"

namespace dtensor {

/// Adds the dtensor dialect and the upstream dialects of its pipeline to
/// `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

} // namespace dtensor

#endif // DTENSOR_INITALLDIALECTS_H

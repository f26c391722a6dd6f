//===- EmulateLocalMaps.h - a local map on one device -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The single-device form of dtensor.local_map, for --dtensor-strip-layouts.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_PARTITION_EMULATELOCALMAPS_H
#define DTENSOR_COMPILER_PARTITION_EMULATELOCALMAPS_H

#include "mlir/IR/BuiltinOps.h"

namespace dtensor {

/// Replaces every dtensor.local_map of `module` by its body run once per
/// mesh position on that position's pieces, the results assembled as the
/// output layouts say (EmulateLocalMaps.cpp).
mlir::LogicalResult emulateLocalMaps(mlir::ModuleOp module);

} // namespace dtensor

#endif // DTENSOR_COMPILER_PARTITION_EMULATELOCALMAPS_H

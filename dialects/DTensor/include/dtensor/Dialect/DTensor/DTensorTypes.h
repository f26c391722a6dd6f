//===- DTensorTypes.h - dtensor types ---------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_DIALECT_DTENSOR_DTENSORTYPES_H
#define DTENSOR_DIALECT_DTENSOR_DTENSORTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "dtensor/Dialect/DTensor/DTensorTypes.h.inc"

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORTYPES_H

//===- DTensorDialect.h - dtensor dialect -----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_DIALECT_DTENSOR_DTENSORDIALECT_H
#define DTENSOR_DIALECT_DTENSOR_DTENSORDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h.inc"

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORDIALECT_H

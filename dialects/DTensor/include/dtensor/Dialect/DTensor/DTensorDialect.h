//===- DTensorDialect.h - dtensor dialect -----------------------*- C++ -*-===//

#ifndef DTENSOR_DIALECT_DTENSOR_DTENSORDIALECT_H
#define DTENSOR_DIALECT_DTENSOR_DTENSORDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h.inc"

#endif // DTENSOR_DIALECT_DTENSOR_DTENSORDIALECT_H

//===- Passes.h - dtensor collective fusion passes --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_COLLECTIVES_PASSES_H
#define DTENSOR_COLLECTIVES_PASSES_H

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace dtensor {

#define GEN_PASS_DECL
#include "dtensor/Collectives/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dtensor/Collectives/Passes.h.inc"

} // namespace dtensor

#endif // DTENSOR_COLLECTIVES_PASSES_H

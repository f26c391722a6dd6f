//===- Passes.h - dtensor training passes ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_TRAINING_PASSES_H
#define DTENSOR_TRAINING_PASSES_H

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace dtensor {

#define GEN_PASS_DECL
#include "dtensor/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dtensor/Training/Passes.h.inc"

} // namespace dtensor

#endif // DTENSOR_TRAINING_PASSES_H

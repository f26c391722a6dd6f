//===- Passes.h - dtensor partitioning passes -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_PARTITION_PASSES_H
#define DTENSOR_PARTITION_PASSES_H

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace dtensor {

#define GEN_PASS_DECL
#include "dtensor/Partition/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dtensor/Partition/Passes.h.inc"

} // namespace dtensor

#endif // DTENSOR_PARTITION_PASSES_H

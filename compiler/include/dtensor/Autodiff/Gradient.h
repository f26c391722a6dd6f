//===- Gradient.h - Building a gradient function ----------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The gradient function of --dtensor-differentiate, for the stages that
// build on it (the training step).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_AUTODIFF_GRADIENT_H
#define DTENSOR_AUTODIFF_GRADIENT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace dtensor::autodiff {

/// A copy of `function` named `name`, not inserted into any module, that
/// returns its result `lossIndex` and then the gradient of that loss with
/// respect to each float argument that `differentiates` selects (by
/// argument number), in argument order, each named `<name>.grad`. Null
/// after an error, reported at the op without a gradient or at `function`.
///
/// With `checkpointOf`, the path of the checkpointed module instance an op
/// of the forward belongs to ("" for none): the tensors such an instance
/// computes are recomputed in the backward from the instance's inputs
/// instead of kept (activation checkpointing, docs/training.md).
mlir::func::FuncOp buildGradientFunction(
    mlir::func::FuncOp function, llvm::StringRef name, unsigned lossIndex,
    llvm::function_ref<bool(unsigned)> differentiates,
    llvm::function_ref<llvm::StringRef(mlir::Operation *)> checkpointOf = {});

} // namespace dtensor::autodiff

#endif // DTENSOR_AUTODIFF_GRADIENT_H

//===- TrainingSection.h - The model plan's training section ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `model.training` (docs/training.md): the loss, the optimizer and its
// groups, the schedule, clipping and accumulation, read into the module's
// `dtensor.training` attribute (dtensor/Training/TrainingAttr.h), from
// which --dtensor-build-train-step compiles train_step and eval_step. Every
// mistake is an error at its JSON position.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_TRAININGSECTION_H
#define DTENSOR_COMPILER_FRONTEND_TRAININGSECTION_H

#include "dtensor/Frontend/JsonTree.h"
#include "dtensor/Frontend/ModelPlan.h"

#include "mlir/IR/BuiltinOps.h"

namespace dtensor::frontend {

/// Reads `node` (the plan's `model.training`) and sets `module`'s
/// `dtensor.training` for `plan`'s function, which the module holds.
mlir::LogicalResult addTrainingPlan(mlir::ModuleOp module,
                                    const ModelPlan &plan, const JsonNode &node,
                                    const JsonLocator &locator);

} // namespace dtensor::frontend

#endif // DTENSOR_COMPILER_FRONTEND_TRAININGSECTION_H

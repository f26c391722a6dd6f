//===- UpdateBuilders.h - The ops of a training step's update ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pieces of `train_step` after the gradients (BuildTrainStep.cpp): the
// step's scalars (schedule, bias corrections, the clipping coefficient) as
// rank-0 generics in f64, and each parameter's update as elementwise
// generics over its shape, so that propagation lays them out as the
// parameter and partitioning runs each rank's shard.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_TRAINING_UPDATEBUILDERS_H
#define DTENSOR_COMPILER_TRAINING_UPDATEBUILDERS_H

#include "dtensor/Training/TrainingPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace dtensor::training {

/// The scalars of one step, rank-0 f64 tensors. `apply` is null without
/// accumulation (every call updates), else 1 on the calls that update and 0
/// on the others; `clipCoefficient` is null without clipping.
struct StepScalars {
  mlir::Value step;   // t, 1-based, of this update
  mlir::Value factor; // the schedule's factor at t
  mlir::Value apply;
  mlir::Value clipCoefficient;
  // AdamW: 1 - beta1^t and sqrt(1 - beta2^t).
  mlir::Value biasCorrection1, biasCorrection2Sqrt;
};

/// A rank-0 f64 tensor computed from rank-0 `inputs` by `body` (which gets
/// their elements converted to f64 and returns one f64).
mlir::Value
createScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange inputs,
             llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                            mlir::ValueRange)>
                 body);

/// The schedule's factor at step `step` (rank-0 f64), as scheduleFactor().
mlir::Value createScheduleFactor(mlir::OpBuilder &b, mlir::Location loc,
                                 const Schedule &schedule, mlir::Value step);

/// The sum of the squares of `gradient`'s elements, a rank-0 f64 tensor.
mlir::Value createSquaredNorm(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value gradient);

/// A parameter, its gradient, its optimizer state (in the order
/// optimizerStateNames gives) and its group's settings.
struct ParameterUpdate {
  mlir::Value parameter, gradient;
  llvm::SmallVector<mlir::Value> state;
  double lr = 0, weightDecay = 0;
};

/// The names of a parameter's optimizer state tensors, suffixes of its
/// name as PyTorch's optimizer state keys ("momentum_buffer", "exp_avg",
/// ...).
llvm::SmallVector<std::string>
optimizerStateNames(const OptimizerConfig &optimizer);

/// The new parameter, then the new values of its state.
llvm::SmallVector<mlir::Value> createParameterUpdate(
    mlir::OpBuilder &b, mlir::Location loc, const OptimizerConfig &optimizer,
    const StepScalars &scalars, const ParameterUpdate &update);

} // namespace dtensor::training

#endif // DTENSOR_COMPILER_TRAINING_UPDATEBUILDERS_H

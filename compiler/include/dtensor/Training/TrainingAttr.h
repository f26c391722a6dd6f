//===- TrainingAttr.h - A training plan as a module attribute ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The `dtensor.training` module attribute holds a TrainingPlan as a
// dictionary with the keys of the model plan's `model.training` section
// (docs/training.md), except that `function` names the forward function and
// `loss` is the index of its loss result:
//
//   {function = "mlp", loss = 0 : i64,
//    optimizer = {kind = "adamw", lr = 1.0e-3 : f64, betas = [0.9, 0.999],
//                 eps = 1.0e-8 : f64, weight_decay = 0.01 : f64,
//                 amsgrad = false},
//    groups = [{params = ["*.bias"], weight_decay = 0.0 : f64}],
//    schedule = {warmup_steps = 2 : i64, decay = "cosine",
//                total_steps = 20 : i64, min_lr_ratio = 0.1 : f64},
//    clip_grad_norm = 1.0 : f64, accumulation_steps = 1 : i64,
//    activation_checkpointing = ["layers.*"]}
//
// Keys left out take the defaults of TrainingPlan.h.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TRAINING_TRAININGATTR_H
#define DTENSOR_TRAINING_TRAININGATTR_H

#include "dtensor/Training/TrainingPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

namespace dtensor::training {

/// The attribute of `plan`, every key written.
mlir::DictionaryAttr encodeTrainingPlan(mlir::MLIRContext *context,
                                        const TrainingPlan &plan);

/// The plan of `attr`; an error at `op` naming the key when a key is
/// unknown, of the wrong kind or out of range.
mlir::FailureOr<TrainingPlan> decodeTrainingPlan(mlir::Operation *op,
                                                 mlir::DictionaryAttr attr);

} // namespace dtensor::training

#endif // DTENSOR_TRAINING_TRAININGATTR_H

//===- TrainingPlan.h - What a training step does ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A training plan (docs/training.md): which result of a forward function is
// the loss, the optimizer and its parameter groups, the learning-rate
// schedule, gradient clipping and accumulation. The frontend reads it from a
// model plan's `model.training` section, the module carries it as the
// `dtensor.training` attribute (TrainingAttr.h), and
// --dtensor-build-train-step compiles it into the entries `train_step` and
// `eval_step`. Plain C++: the checks of its values are shared by both
// readers, which report them at their own positions.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TRAINING_TRAININGPLAN_H
#define DTENSOR_TRAINING_TRAININGPLAN_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::training {

/// torch.optim.SGD or torch.optim.AdamW, with PyTorch's defaults.
struct OptimizerConfig {
  enum class Kind { SGD, AdamW };
  Kind kind = Kind::AdamW;
  double lr = 1e-3;
  // SGD.
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
  // AdamW.
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool amsgrad = false;
  /// SGD: L2 added to the gradient; AdamW: decoupled (0.01 by default).
  double weightDecay = 0.01;
};

/// "sgd" or "adamw".
const char *optimizerKindName(OptimizerConfig::Kind kind);
std::optional<OptimizerConfig::Kind>
parseOptimizerKind(const std::string &name);
/// PyTorch's default weight decay of `kind` (SGD 0, AdamW 0.01).
double defaultWeightDecay(OptimizerConfig::Kind kind);

/// Parameters whose names match one of `patterns` (globs: `*` any text,
/// `?` one character, `[...]` a class) take this group's settings; the first
/// group that matches a parameter wins, and parameters that no group
/// matches take the optimizer's.
struct ParameterGroup {
  std::vector<std::string> patterns;
  std::optional<double> lr;
  std::optional<double> weightDecay;
};

/// The factor on each group's learning rate at step t (1-based): t / W
/// during `warmupSteps` W, then `decay` from 1 at step W to
/// `minLrRatio` at `totalSteps` T (constant: 1 throughout), `minLrRatio`
/// after T.
struct Schedule {
  enum class Decay { Constant, Linear, Cosine };
  int64_t warmupSteps = 0;
  Decay decay = Decay::Constant;
  int64_t totalSteps = 0;
  double minLrRatio = 0.0;
};

const char *decayName(Schedule::Decay decay);
std::optional<Schedule::Decay> parseDecay(const std::string &name);

struct TrainingPlan {
  /// The forward function and the index of its loss result.
  std::string function;
  int64_t loss = 0;
  OptimizerConfig optimizer;
  std::vector<ParameterGroup> groups;
  /// Globs of weights that are not trained (PyTorch's requires_grad=False:
  /// buffers, frozen layers): no gradient, no optimizer state, read-only.
  std::vector<std::string> frozen;
  Schedule schedule;
  /// torch.nn.utils.clip_grad_norm_'s max_norm (the 2-norm over every
  /// gradient); none: no clipping.
  std::optional<double> clipGradNorm;
  /// Micro-batches per optimizer step.
  int64_t accumulationSteps = 1;
  /// Module patterns (ModulePath.h) whose forward the backward recomputes
  /// from the module's inputs instead of keeping its activations
  /// (torch.utils.checkpoint on each matched module); none: nothing is
  /// recomputed. Given, the list is not empty.
  std::optional<std::vector<std::string>> activationCheckpointing;
};

/// A value out of range: the key's path inside the training section (e.g.
/// "optimizer.betas[1]", "groups[0].lr") and what is wrong.
struct PlanProblem {
  std::string path;
  std::string message;
};

/// The first value of `plan` out of its range, if any.
std::optional<PlanProblem> checkTrainingPlan(const TrainingPlan &plan);

/// The schedule's factor at step `step` (1-based), in double precision: what
/// the compiled step computes, for tests and documentation.
double scheduleFactor(const Schedule &schedule, int64_t step);

/// Whether `name` matches the glob `pattern`.
bool matchesPattern(const std::string &pattern, const std::string &name);

} // namespace dtensor::training

#endif // DTENSOR_TRAINING_TRAININGPLAN_H

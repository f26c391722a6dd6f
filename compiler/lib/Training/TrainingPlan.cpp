//===- TrainingPlan.cpp - Checks and meaning of a training plan -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Training/TrainingPlan.h"

#include <cmath>
#include <fnmatch.h>

using namespace dtensor::training;

const char *dtensor::training::optimizerKindName(OptimizerConfig::Kind kind) {
  return kind == OptimizerConfig::Kind::SGD ? "sgd" : "adamw";
}

std::optional<OptimizerConfig::Kind>
dtensor::training::parseOptimizerKind(const std::string &name) {
  if (name == "sgd")
    return OptimizerConfig::Kind::SGD;
  if (name == "adamw")
    return OptimizerConfig::Kind::AdamW;
  return std::nullopt;
}

double dtensor::training::defaultWeightDecay(OptimizerConfig::Kind kind) {
  return kind == OptimizerConfig::Kind::SGD ? 0.0 : 0.01;
}

const char *dtensor::training::decayName(Schedule::Decay decay) {
  switch (decay) {
  case Schedule::Decay::Constant:
    return "constant";
  case Schedule::Decay::Linear:
    return "linear";
  case Schedule::Decay::Cosine:
    return "cosine";
  }
  return "constant";
}

std::optional<Schedule::Decay>
dtensor::training::parseDecay(const std::string &name) {
  if (name == "constant")
    return Schedule::Decay::Constant;
  if (name == "linear")
    return Schedule::Decay::Linear;
  if (name == "cosine")
    return Schedule::Decay::Cosine;
  return std::nullopt;
}

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::optional<PlanProblem> nonNegative(const std::string &path, double value) {
  if (std::isfinite(value) && value >= 0)
    return std::nullopt;
  return PlanProblem{path,
                     "expected a finite number >= 0, got " + number(value)};
}

std::optional<PlanProblem> fraction(const std::string &path, double value) {
  if (value >= 0 && value < 1)
    return std::nullopt;
  return PlanProblem{path, "expected a number in [0, 1), got " + number(value)};
}

} // namespace

std::optional<PlanProblem>
dtensor::training::checkTrainingPlan(const TrainingPlan &plan) {
  const OptimizerConfig &opt = plan.optimizer;
  if (plan.loss < 0)
    return PlanProblem{"loss", "expected a result index >= 0"};
  if (auto problem = nonNegative("optimizer.lr", opt.lr))
    return problem;
  if (auto problem = nonNegative("optimizer.weight_decay", opt.weightDecay))
    return problem;
  if (opt.kind == OptimizerConfig::Kind::SGD) {
    if (auto problem = nonNegative("optimizer.momentum", opt.momentum))
      return problem;
    if (auto problem = nonNegative("optimizer.dampening", opt.dampening))
      return problem;
    // torch.optim.SGD's own rule.
    if (opt.nesterov && (opt.momentum <= 0 || opt.dampening != 0))
      return PlanProblem{"optimizer.nesterov",
                         "nesterov momentum needs a momentum > 0 and zero "
                         "dampening"};
  } else {
    if (auto problem = fraction("optimizer.betas[0]", opt.beta1))
      return problem;
    if (auto problem = fraction("optimizer.betas[1]", opt.beta2))
      return problem;
    if (!(std::isfinite(opt.eps) && opt.eps > 0))
      return PlanProblem{"optimizer.eps", "expected a finite number > 0, got " +
                                              number(opt.eps)};
  }
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const ParameterGroup &group = plan.groups[i];
    std::string at = "groups[" + std::to_string(i) + "]";
    if (group.patterns.empty())
      return PlanProblem{at + ".params", "expected at least one pattern"};
    for (size_t j = 0; j < group.patterns.size(); ++j)
      if (group.patterns[j].empty())
        return PlanProblem{at + ".params[" + std::to_string(j) + "]",
                           "expected a non-empty pattern"};
    if (group.lr)
      if (auto problem = nonNegative(at + ".lr", *group.lr))
        return problem;
    if (group.weightDecay)
      if (auto problem = nonNegative(at + ".weight_decay", *group.weightDecay))
        return problem;
  }
  if (const auto &patterns = plan.activationCheckpointing) {
    if (patterns->empty())
      return PlanProblem{"activation_checkpointing",
                         "expected at least one module pattern"};
    for (size_t j = 0; j < patterns->size(); ++j) {
      std::string at = "activation_checkpointing[" + std::to_string(j) + "]";
      const std::string &pattern = (*patterns)[j];
      if (pattern.empty())
        return PlanProblem{at, "expected a non-empty module pattern (the "
                               "root module's forward would be recomputed "
                               "whole, saving nothing)"};
      for (size_t k = 0; k < j; ++k)
        if ((*patterns)[k] == pattern)
          return PlanProblem{at, "the pattern '" + pattern +
                                     "' is listed twice (also at [" +
                                     std::to_string(k) + "])"};
    }
  }
  const Schedule &schedule = plan.schedule;
  if (schedule.warmupSteps < 0)
    return PlanProblem{"schedule.warmup_steps", "expected an integer >= 0"};
  if (schedule.decay != Schedule::Decay::Constant &&
      schedule.totalSteps <= schedule.warmupSteps)
    return PlanProblem{"schedule.total_steps",
                       "a " + std::string(decayName(schedule.decay)) +
                           " decay needs total_steps > warmup_steps (" +
                           std::to_string(schedule.warmupSteps) + "), got " +
                           std::to_string(schedule.totalSteps)};
  if (schedule.minLrRatio < 0 || schedule.minLrRatio > 1)
    return PlanProblem{"schedule.min_lr_ratio",
                       "expected a number in [0, 1], got " +
                           number(schedule.minLrRatio)};
  if (plan.clipGradNorm &&
      !(std::isfinite(*plan.clipGradNorm) && *plan.clipGradNorm > 0))
    return PlanProblem{"clip_grad_norm", "expected a finite number > 0, got " +
                                             number(*plan.clipGradNorm)};
  if (plan.accumulationSteps < 1)
    return PlanProblem{"accumulation_steps", "expected an integer >= 1"};
  return std::nullopt;
}

double dtensor::training::scheduleFactor(const Schedule &schedule,
                                         int64_t step) {
  double t = static_cast<double>(step);
  double warmup = static_cast<double>(schedule.warmupSteps);
  if (schedule.warmupSteps > 0 && step <= schedule.warmupSteps)
    return t / warmup;
  if (schedule.decay == Schedule::Decay::Constant)
    return 1.0;
  double total = static_cast<double>(schedule.totalSteps);
  double progress = std::min(1.0, (t - warmup) / (total - warmup));
  double low = schedule.minLrRatio;
  if (schedule.decay == Schedule::Decay::Linear)
    return 1.0 - (1.0 - low) * progress;
  return low + (1.0 - low) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

bool dtensor::training::matchesPattern(const std::string &pattern,
                                       const std::string &name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

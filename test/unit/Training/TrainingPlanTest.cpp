//===- TrainingPlanTest.cpp - Training plans: checks, schedule, attribute -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Training/TrainingPlan.h"
#include "dtensor/Training/ModulePath.h"
#include "dtensor/Training/TrainingAttr.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace dtensor::training;

namespace {

std::string problemPath(const TrainingPlan &plan) {
  std::optional<PlanProblem> problem = checkTrainingPlan(plan);
  return problem ? problem->path : "";
}

TEST(TrainingPlanTest, DefaultsArePyTorchs) {
  TrainingPlan plan;
  EXPECT_EQ(problemPath(plan), "");
  EXPECT_EQ(plan.optimizer.kind, OptimizerConfig::Kind::AdamW);
  EXPECT_EQ(plan.optimizer.beta1, 0.9);
  EXPECT_EQ(plan.optimizer.beta2, 0.999);
  EXPECT_EQ(plan.optimizer.eps, 1e-8);
  EXPECT_EQ(defaultWeightDecay(OptimizerConfig::Kind::AdamW), 0.01);
  EXPECT_EQ(defaultWeightDecay(OptimizerConfig::Kind::SGD), 0.0);
}

TEST(TrainingPlanTest, ValuesOutOfRangeNameTheirKey) {
  auto with = [](auto edit) {
    TrainingPlan plan;
    edit(plan);
    return problemPath(plan);
  };
  EXPECT_EQ(with([](TrainingPlan &p) { p.optimizer.lr = -1; }), "optimizer.lr");
  EXPECT_EQ(with([](TrainingPlan &p) { p.optimizer.lr = NAN; }),
            "optimizer.lr");
  EXPECT_EQ(with([](TrainingPlan &p) { p.optimizer.beta2 = 1.0; }),
            "optimizer.betas[1]");
  EXPECT_EQ(with([](TrainingPlan &p) { p.optimizer.eps = 0; }),
            "optimizer.eps");
  EXPECT_EQ(with([](TrainingPlan &p) {
              p.optimizer.kind = OptimizerConfig::Kind::SGD;
              p.optimizer.nesterov = true;
            }),
            "optimizer.nesterov");
  EXPECT_EQ(with([](TrainingPlan &p) {
              p.groups.push_back({{"*.bias"}, -0.5, std::nullopt});
            }),
            "groups[0].lr");
  EXPECT_EQ(with([](TrainingPlan &p) { p.groups.push_back({}); }),
            "groups[0].params");
  EXPECT_EQ(with([](TrainingPlan &p) {
              p.schedule.decay = Schedule::Decay::Cosine;
              p.schedule.warmupSteps = 5;
              p.schedule.totalSteps = 5;
            }),
            "schedule.total_steps");
  EXPECT_EQ(with([](TrainingPlan &p) { p.schedule.minLrRatio = 2; }),
            "schedule.min_lr_ratio");
  EXPECT_EQ(with([](TrainingPlan &p) { p.clipGradNorm = 0.0; }),
            "clip_grad_norm");
  EXPECT_EQ(with([](TrainingPlan &p) { p.accumulationSteps = 0; }),
            "accumulation_steps");
}

TEST(TrainingPlanTest, ScheduleWarmsUpThenDecays) {
  Schedule schedule;
  schedule.warmupSteps = 4;
  EXPECT_DOUBLE_EQ(scheduleFactor(schedule, 1), 0.25);
  EXPECT_DOUBLE_EQ(scheduleFactor(schedule, 4), 1.0);
  EXPECT_DOUBLE_EQ(scheduleFactor(schedule, 100), 1.0);
  schedule.decay = Schedule::Decay::Cosine;
  schedule.totalSteps = 12;
  schedule.minLrRatio = 0.1;
  EXPECT_DOUBLE_EQ(scheduleFactor(schedule, 4), 1.0);
  // Half way through the decay: the mean of 1 and the floor.
  EXPECT_NEAR(scheduleFactor(schedule, 8), 0.55, 1e-15);
  EXPECT_NEAR(scheduleFactor(schedule, 12), 0.1, 1e-15);
  EXPECT_NEAR(scheduleFactor(schedule, 50), 0.1, 1e-15);
  schedule.decay = Schedule::Decay::Linear;
  EXPECT_NEAR(scheduleFactor(schedule, 6), 1.0 - 0.9 * 0.25, 1e-15);
}

TEST(TrainingPlanTest, PatternsAreGlobsOverWholeNames) {
  EXPECT_TRUE(matchesPattern("*.bias", "layers.0.fc1.bias"));
  EXPECT_TRUE(matchesPattern("*norm.weight", "layers.1.attention_norm.weight"));
  EXPECT_FALSE(matchesPattern("*norm.weight", "layers.1.norm.weight.x"));
  EXPECT_TRUE(matchesPattern("layers.[01].*", "layers.1.wq"));
  EXPECT_FALSE(matchesPattern("bias", "fc.bias"));
}

TEST(TrainingPlanTest, CheckpointedModulesAreOutermostMatches) {
  std::vector<std::string> layers{"layers.*"};
  EXPECT_EQ(dtensor::findMatchedModule(layers, "layers.1.attention.wq"),
            "layers.1");
  EXPECT_EQ(dtensor::findMatchedModule(layers, "layers.1"), "layers.1");
  EXPECT_EQ(dtensor::findMatchedModule(layers, "layers"), "");
  EXPECT_EQ(dtensor::findMatchedModule(layers, "output"), "");
  EXPECT_EQ(dtensor::findMatchedModule(layers, ""), "");
  // Nested matches: the outermost module is the instance.
  std::vector<std::string> nested{"layers.*.attention", "layers.?"};
  EXPECT_EQ(dtensor::findMatchedModule(nested, "layers.0.attention.wo"),
            "layers.0");
  EXPECT_EQ(dtensor::findMatchedModule(nested, "layers.12.attention.wo"),
            "layers.12.attention");
}

TEST(TrainingPlanTest, CheckpointingListsDistinctPatterns) {
  TrainingPlan plan;
  plan.activationCheckpointing = std::vector<std::string>{};
  EXPECT_EQ(problemPath(plan), "activation_checkpointing");
  plan.activationCheckpointing = {"layers.*", ""};
  EXPECT_EQ(problemPath(plan), "activation_checkpointing[1]");
  plan.activationCheckpointing = {"layers.*", "output", "layers.*"};
  EXPECT_EQ(problemPath(plan), "activation_checkpointing[2]");
  plan.activationCheckpointing = {"layers.*", "output"};
  EXPECT_EQ(problemPath(plan), "");
}

TEST(TrainingPlanTest, AttributeRoundTrip) {
  mlir::MLIRContext context;
  context.loadDialect<dtensor::DTensorDialect>();
  TrainingPlan plan;
  plan.function = "mlp";
  plan.loss = 1;
  plan.optimizer.kind = OptimizerConfig::Kind::SGD;
  plan.optimizer.lr = 0.5;
  plan.optimizer.momentum = 0.9;
  plan.optimizer.nesterov = true;
  plan.optimizer.weightDecay = 0.0;
  plan.groups.push_back({{"*.bias", "*norm*"}, 0.1, 0.0});
  plan.schedule = {3, Schedule::Decay::Linear, 9, 0.25};
  plan.clipGradNorm = 2.0;
  plan.accumulationSteps = 4;
  plan.activationCheckpointing = {"layers.*", "output"};
  mlir::DictionaryAttr attr = encodeTrainingPlan(&context, plan);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  mlir::FailureOr<TrainingPlan> read = decodeTrainingPlan(*module, attr);
  ASSERT_TRUE(mlir::succeeded(read));
  EXPECT_EQ(read->function, "mlp");
  EXPECT_EQ(read->loss, 1);
  EXPECT_EQ(read->optimizer.kind, OptimizerConfig::Kind::SGD);
  EXPECT_EQ(read->optimizer.lr, 0.5);
  EXPECT_EQ(read->optimizer.momentum, 0.9);
  EXPECT_TRUE(read->optimizer.nesterov);
  ASSERT_EQ(read->groups.size(), 1u);
  EXPECT_EQ(read->groups[0].patterns.size(), 2u);
  EXPECT_EQ(read->groups[0].lr, 0.1);
  EXPECT_EQ(read->groups[0].weightDecay, 0.0);
  EXPECT_EQ(read->schedule.warmupSteps, 3);
  EXPECT_EQ(read->schedule.decay, Schedule::Decay::Linear);
  EXPECT_EQ(read->schedule.totalSteps, 9);
  EXPECT_EQ(read->schedule.minLrRatio, 0.25);
  EXPECT_EQ(read->clipGradNorm, 2.0);
  EXPECT_EQ(read->accumulationSteps, 4);
  EXPECT_EQ(read->activationCheckpointing,
            std::optional<std::vector<std::string>>(
                std::vector<std::string>{"layers.*", "output"}));
}

TEST(TrainingPlanTest, AttributeErrorsNameTheKey) {
  mlir::MLIRContext context;
  context.loadDialect<dtensor::DTensorDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  mlir::Builder b(&context);
  auto decode = [&](std::initializer_list<mlir::NamedAttribute> entries) {
    message.clear();
    return decodeTrainingPlan(
        *module, b.getDictionaryAttr(llvm::ArrayRef<mlir::NamedAttribute>(
                     entries.begin(), entries.end())));
  };
  mlir::NamedAttribute function =
      b.getNamedAttr("function", b.getStringAttr("f"));
  auto optimizer = [&](std::initializer_list<mlir::NamedAttribute> entries) {
    return b.getNamedAttr(
        "optimizer", b.getDictionaryAttr(llvm::ArrayRef<mlir::NamedAttribute>(
                         entries.begin(), entries.end())));
  };
  EXPECT_TRUE(mlir::failed(decode({function})));
  EXPECT_EQ(message, "'dtensor.training': optimizer: is required");
  EXPECT_TRUE(mlir::failed(
      decode({function,
              optimizer({b.getNamedAttr("kind", b.getStringAttr("adam"))})})));
  EXPECT_EQ(message, "'dtensor.training': optimizer.kind: unknown optimizer "
                     "'adam' (expected sgd or adamw)");
  EXPECT_TRUE(mlir::failed(decode(
      {function, optimizer({b.getNamedAttr("kind", b.getStringAttr("sgd")),
                            b.getNamedAttr("betas", b.getArrayAttr({}))})})));
  EXPECT_EQ(message, "'dtensor.training': optimizer.betas: unknown key");
  EXPECT_TRUE(mlir::failed(decode(
      {function, optimizer({b.getNamedAttr("kind", b.getStringAttr("sgd")),
                            b.getNamedAttr("lr", b.getF64FloatAttr(-1))})})));
  EXPECT_EQ(message, "'dtensor.training': optimizer.lr: expected a finite "
                     "number >= 0, got -1");
}

} // namespace

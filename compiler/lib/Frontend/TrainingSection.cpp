//===- TrainingSection.cpp - The model plan's training section ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "TrainingSection.h"

#include "JsonReader.h"
#include "ModuleTree.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Training/TrainingAttr.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;
using namespace dtensor::training;

namespace {

class TrainingSectionReader : public JsonReader {
public:
  TrainingSectionReader(const JsonLocator &locator, const ModelPlan &plan,
                        func::FuncOp function)
      : JsonReader(locator), plan(plan), function(function) {}

  FailureOr<TrainingPlan> read(const JsonNode &node);

private:
  /// Reads member `key` of `object` if present, recording its node under
  /// `path` for the value checks.
  const JsonNode *member(const JsonNode &object, llvm::StringRef key,
                         const std::string &path) {
    const JsonNode *value = object.get(key);
    if (value)
      nodes[path] = value;
    return value;
  }
  LogicalResult number(const JsonNode &object, llvm::StringRef key,
                       const std::string &path, double &out) {
    if (const JsonNode *value = member(object, key, path)) {
      FailureOr<double> parsed = readNumber(*value);
      if (failed(parsed))
        return failure();
      out = *parsed;
    }
    return success();
  }
  LogicalResult optionalNumber(const JsonNode &object, llvm::StringRef key,
                               const std::string &path,
                               std::optional<double> &out) {
    if (!object.get(key))
      return success();
    double value = 0;
    if (failed(number(object, key, path, value)))
      return failure();
    out = value;
    return success();
  }
  LogicalResult integer(const JsonNode &object, llvm::StringRef key,
                        const std::string &path, int64_t &out) {
    if (const JsonNode *value = member(object, key, path)) {
      FailureOr<int64_t> parsed = readInteger(*value);
      if (failed(parsed))
        return failure();
      out = *parsed;
    }
    return success();
  }
  LogicalResult boolean(const JsonNode &object, llvm::StringRef key,
                        const std::string &path, bool &out) {
    if (const JsonNode *value = member(object, key, path)) {
      FailureOr<bool> parsed = readBool(*value);
      if (failed(parsed))
        return failure();
      out = *parsed;
    }
    return success();
  }

  LogicalResult readLoss(const JsonNode &node, TrainingPlan &out);
  LogicalResult readOptimizer(const JsonNode &node, OptimizerConfig &out);
  LogicalResult readGroups(const JsonNode &node, TrainingPlan &out);
  LogicalResult readPatterns(const JsonNode &node, const std::string &at,
                             llvm::StringRef whose,
                             std::vector<std::string> &out);
  LogicalResult readSchedule(const JsonNode &node, Schedule &out);
  LogicalResult readCheckpointing(const JsonNode &node, TrainingPlan &out);

  const ModelPlan &plan;
  func::FuncOp function;
  llvm::StringMap<const JsonNode *> nodes;
};

LogicalResult TrainingSectionReader::readLoss(const JsonNode &node,
                                              TrainingPlan &out) {
  FailureOr<std::string> name = readName(node);
  if (failed(name))
    return failure();
  const auto *it = llvm::find(plan.outputs, *name);
  if (it == plan.outputs.end()) {
    std::string known;
    for (const std::string &output : plan.outputs)
      known += (known.empty() ? "" : ", ") + output;
    return error(node) << "'" << *name
                       << "' is not an output of the model (its outputs: "
                       << known << ")";
  }
  out.loss = it - plan.outputs.begin();
  auto type = dyn_cast<RankedTensorType>(function.getResultTypes()[out.loss]);
  if (!type || !isa<FloatType>(type.getElementType()) ||
      !type.hasStaticShape() || type.getNumElements() != 1)
    return error(node) << "the loss '" << *name << "' is "
                       << function.getResultTypes()[out.loss]
                       << "; a loss is a float tensor of one element (a "
                          "'mean' or 'sum' cross_entropy, a mean, a sum)";
  return success();
}

LogicalResult TrainingSectionReader::readOptimizer(const JsonNode &node,
                                                   OptimizerConfig &out) {
  if (failed(expectKind(node, JsonNode::Kind::Object)))
    return failure();
  const JsonNode *kindNode = require(node, "kind");
  if (!kindNode)
    return failure();
  FailureOr<std::string> kind = readString(*kindNode);
  if (failed(kind))
    return failure();
  std::optional<OptimizerConfig::Kind> parsed = parseOptimizerKind(*kind);
  if (!parsed)
    return error(*kindNode)
           << "unknown optimizer '" << *kind << "' (expected sgd or adamw)";
  out.kind = *parsed;
  out.weightDecay = defaultWeightDecay(out.kind);
  if (out.kind == OptimizerConfig::Kind::SGD) {
    if (failed(checkObject(node, {"kind", "lr", "weight_decay", "momentum",
                                  "dampening", "nesterov"})) ||
        failed(number(node, "momentum", "optimizer.momentum", out.momentum)) ||
        failed(
            number(node, "dampening", "optimizer.dampening", out.dampening)) ||
        failed(boolean(node, "nesterov", "optimizer.nesterov", out.nesterov)))
      return failure();
  } else {
    if (failed(checkObject(
            node, {"kind", "lr", "weight_decay", "betas", "eps", "amsgrad"})) ||
        failed(number(node, "eps", "optimizer.eps", out.eps)) ||
        failed(boolean(node, "amsgrad", "optimizer.amsgrad", out.amsgrad)))
      return failure();
    if (const JsonNode *betas = member(node, "betas", "optimizer.betas")) {
      if (failed(expectKind(*betas, JsonNode::Kind::Array)))
        return failure();
      if (betas->elements.size() != 2)
        return error(*betas) << "expected two numbers [beta1, beta2], got "
                             << betas->elements.size() << " value(s)";
      nodes["optimizer.betas[0]"] = &betas->elements[0];
      nodes["optimizer.betas[1]"] = &betas->elements[1];
      FailureOr<double> beta1 = readNumber(betas->elements[0]);
      FailureOr<double> beta2 = readNumber(betas->elements[1]);
      if (failed(beta1) || failed(beta2))
        return failure();
      out.beta1 = *beta1;
      out.beta2 = *beta2;
    }
  }
  return failure(failed(number(node, "lr", "optimizer.lr", out.lr)) ||
                 failed(number(node, "weight_decay", "optimizer.weight_decay",
                               out.weightDecay)));
}

LogicalResult TrainingSectionReader::readGroups(const JsonNode &node,
                                                TrainingPlan &out) {
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  for (auto [index, entry] : llvm::enumerate(node.elements)) {
    std::string at = "groups[" + std::to_string(index) + "]";
    nodes[at] = &entry;
    if (failed(expectKind(entry, JsonNode::Kind::Object)) ||
        failed(checkObject(entry, {"params", "lr", "weight_decay"})))
      return failure();
    ParameterGroup group;
    const JsonNode *params = require(entry, "params");
    if (!params)
      return failure();
    if (failed(readPatterns(*params, at + ".params", "a group's patterns",
                            group.patterns)))
      return failure();
    if (failed(optionalNumber(entry, "lr", at + ".lr", group.lr)) ||
        failed(optionalNumber(entry, "weight_decay", at + ".weight_decay",
                              group.weightDecay)))
      return failure();
    out.groups.push_back(std::move(group));
  }
  return success();
}

/// One glob, or a list of them, each matching a parameter of the model.
LogicalResult
TrainingSectionReader::readPatterns(const JsonNode &node, const std::string &at,
                                    llvm::StringRef whose,
                                    std::vector<std::string> &out) {
  nodes[at] = &node;
  std::vector<const JsonNode *> patterns;
  if (node.isString()) {
    patterns.push_back(&node);
  } else {
    if (failed(expectKind(node, JsonNode::Kind::Array)))
      return failure();
    for (const JsonNode &pattern : node.elements)
      patterns.push_back(&pattern);
  }
  for (auto [index, pattern] : llvm::enumerate(patterns)) {
    nodes[at + "[" + std::to_string(index) + "]"] = pattern;
    FailureOr<std::string> text = readString(*pattern);
    if (failed(text))
      return failure();
    if (!text->empty() &&
        llvm::none_of(plan.parameters, [&](const TensorDecl &parameter) {
          return matchesPattern(*text, parameter.name);
        }))
      return error(*pattern)
             << "the pattern '" << *text << "' matches no parameter of the "
             << "model; " << whose
             << " are globs over parameter names (e.g. \"*.bias\", "
                "\"*norm.weight\")";
    out.push_back(*text);
  }
  return success();
}

LogicalResult TrainingSectionReader::readSchedule(const JsonNode &node,
                                                  Schedule &out) {
  if (failed(expectKind(node, JsonNode::Kind::Object)) ||
      failed(checkObject(
          node, {"warmup_steps", "decay", "total_steps", "min_lr_ratio"})) ||
      failed(integer(node, "warmup_steps", "schedule.warmup_steps",
                     out.warmupSteps)) ||
      failed(integer(node, "total_steps", "schedule.total_steps",
                     out.totalSteps)) ||
      failed(number(node, "min_lr_ratio", "schedule.min_lr_ratio",
                    out.minLrRatio)))
    return failure();
  if (const JsonNode *decay = member(node, "decay", "schedule.decay")) {
    FailureOr<std::string> text = readString(*decay);
    if (failed(text))
      return failure();
    std::optional<Schedule::Decay> parsed = parseDecay(*text);
    if (!parsed)
      return error(*decay) << "unknown decay '" << *text
                           << "' (expected constant, linear or cosine)";
    out.decay = *parsed;
  }
  return success();
}

/// `activation_checkpointing`: module patterns, each matching a module.
/// The list's other checks (empty, a pattern twice) are the plan's.
LogicalResult TrainingSectionReader::readCheckpointing(const JsonNode &node,
                                                       TrainingPlan &out) {
  nodes["activation_checkpointing"] = &node;
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  llvm::SetVector<llvm::StringRef> paths = getModulePaths(plan);
  std::vector<std::string> patterns;
  for (auto [index, entry] : llvm::enumerate(node.elements)) {
    nodes["activation_checkpointing[" + std::to_string(index) + "]"] = &entry;
    FailureOr<std::string> pattern = readString(entry);
    if (failed(pattern))
      return failure();
    if (!pattern->empty() && llvm::none_of(paths, [&](llvm::StringRef path) {
          return matchModulePattern(*pattern, path);
        }))
      return error(entry) << "the pattern '" << *pattern
                          << "' matches no module of the model; "
                             "activation_checkpointing lists module patterns "
                             "(e.g. \"layers.*\")";
    patterns.push_back(std::move(*pattern));
  }
  out.activationCheckpointing = std::move(patterns);
  return success();
}

FailureOr<TrainingPlan> TrainingSectionReader::read(const JsonNode &node) {
  TrainingPlan out;
  out.function = plan.name;
  if (failed(expectKind(node, JsonNode::Kind::Object)) ||
      failed(
          checkObject(node, {"loss", "optimizer", "groups", "frozen",
                             "schedule", "clip_grad_norm", "accumulation_steps",
                             "activation_checkpointing"})))
    return failure();
  const JsonNode *loss = require(node, "loss");
  if (!loss || failed(readLoss(*loss, out)))
    return failure();
  nodes["loss"] = loss;
  const JsonNode *optimizer = require(node, "optimizer");
  if (!optimizer || failed(readOptimizer(*optimizer, out.optimizer)))
    return failure();
  if (const JsonNode *groups = node.get("groups"))
    if (failed(readGroups(*groups, out)))
      return failure();
  if (const JsonNode *frozen = node.get("frozen"))
    if (failed(
            readPatterns(*frozen, "frozen", "the frozen patterns", out.frozen)))
      return failure();
  if (const JsonNode *checkpointing = node.get("activation_checkpointing"))
    if (failed(readCheckpointing(*checkpointing, out)))
      return failure();
  if (const JsonNode *schedule = node.get("schedule"))
    if (failed(readSchedule(*schedule, out.schedule)))
      return failure();
  if (failed(optionalNumber(node, "clip_grad_norm", "clip_grad_norm",
                            out.clipGradNorm)) ||
      failed(integer(node, "accumulation_steps", "accumulation_steps",
                     out.accumulationSteps)))
    return failure();
  if (std::optional<PlanProblem> problem = checkTrainingPlan(out)) {
    // The value's node, or the closest enclosing one recorded.
    std::string path = problem->path;
    const JsonNode *at = &node;
    for (;;) {
      auto it = nodes.find(path);
      if (it != nodes.end()) {
        at = it->second;
        break;
      }
      size_t cut = path.find_last_of(".[");
      if (cut == std::string::npos)
        break;
      path = path.substr(0, cut);
    }
    return error(*at) << problem->message, failure();
  }
  return out;
}

} // namespace

LogicalResult dtensor::frontend::addTrainingPlan(ModuleOp module,
                                                 const ModelPlan &plan,
                                                 const JsonNode &node,
                                                 const JsonLocator &locator) {
  auto function = module.lookupSymbol<func::FuncOp>(plan.name);
  if (!function)
    return locator.emitError(node)
           << "internal error: no function '" << plan.name << "' to train";
  if (!plan.state.empty())
    return locator.emitError(node)
           << "a model with state ('" << plan.state.front().name
           << "') cannot be trained: a training step's forward has none";
  TrainingSectionReader reader(locator, plan, function);
  FailureOr<TrainingPlan> training = reader.read(node);
  if (failed(training))
    return failure();
  module->setAttr(DTensorDialect::getTrainingAttrName(),
                  encodeTrainingPlan(module.getContext(), *training));
  return success();
}

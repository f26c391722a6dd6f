//===- TrainingAttr.cpp - A training plan as a module attribute -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Training/TrainingAttr.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::training;

DictionaryAttr dtensor::training::encodeTrainingPlan(MLIRContext *context,
                                                     const TrainingPlan &plan) {
  Builder b(context);
  auto f64 = [&](double value) { return b.getF64FloatAttr(value); };
  auto i64 = [&](int64_t value) { return b.getI64IntegerAttr(value); };
  const OptimizerConfig &opt = plan.optimizer;
  SmallVector<NamedAttribute> optimizer{
      b.getNamedAttr("kind", b.getStringAttr(optimizerKindName(opt.kind))),
      b.getNamedAttr("lr", f64(opt.lr)),
      b.getNamedAttr("weight_decay", f64(opt.weightDecay))};
  if (opt.kind == OptimizerConfig::Kind::SGD) {
    optimizer.push_back(b.getNamedAttr("momentum", f64(opt.momentum)));
    optimizer.push_back(b.getNamedAttr("dampening", f64(opt.dampening)));
    optimizer.push_back(
        b.getNamedAttr("nesterov", b.getBoolAttr(opt.nesterov)));
  } else {
    optimizer.push_back(b.getNamedAttr(
        "betas", b.getArrayAttr({f64(opt.beta1), f64(opt.beta2)})));
    optimizer.push_back(b.getNamedAttr("eps", f64(opt.eps)));
    optimizer.push_back(b.getNamedAttr("amsgrad", b.getBoolAttr(opt.amsgrad)));
  }
  SmallVector<Attribute> groups;
  for (const ParameterGroup &group : plan.groups) {
    SmallVector<Attribute> patterns;
    for (const std::string &pattern : group.patterns)
      patterns.push_back(b.getStringAttr(pattern));
    SmallVector<NamedAttribute> entries{
        b.getNamedAttr("params", b.getArrayAttr(patterns))};
    if (group.lr)
      entries.push_back(b.getNamedAttr("lr", f64(*group.lr)));
    if (group.weightDecay)
      entries.push_back(
          b.getNamedAttr("weight_decay", f64(*group.weightDecay)));
    groups.push_back(b.getDictionaryAttr(entries));
  }
  const Schedule &schedule = plan.schedule;
  SmallVector<NamedAttribute> scheduleEntries{
      b.getNamedAttr("warmup_steps", i64(schedule.warmupSteps)),
      b.getNamedAttr("decay", b.getStringAttr(decayName(schedule.decay))),
      b.getNamedAttr("total_steps", i64(schedule.totalSteps)),
      b.getNamedAttr("min_lr_ratio", f64(schedule.minLrRatio))};
  SmallVector<Attribute> frozen;
  for (const std::string &pattern : plan.frozen)
    frozen.push_back(b.getStringAttr(pattern));
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("function", b.getStringAttr(plan.function)),
      b.getNamedAttr("loss", i64(plan.loss)),
      b.getNamedAttr("optimizer", b.getDictionaryAttr(optimizer)),
      b.getNamedAttr("groups", b.getArrayAttr(groups)),
      b.getNamedAttr("schedule", b.getDictionaryAttr(scheduleEntries)),
      b.getNamedAttr("accumulation_steps", i64(plan.accumulationSteps))};
  if (plan.clipGradNorm)
    entries.push_back(
        b.getNamedAttr("clip_grad_norm", f64(*plan.clipGradNorm)));
  if (!frozen.empty())
    entries.push_back(b.getNamedAttr("frozen", b.getArrayAttr(frozen)));
  if (plan.activationCheckpointing) {
    SmallVector<Attribute> patterns;
    for (const std::string &pattern : *plan.activationCheckpointing)
      patterns.push_back(b.getStringAttr(pattern));
    entries.push_back(
        b.getNamedAttr("activation_checkpointing", b.getArrayAttr(patterns)));
  }
  return b.getDictionaryAttr(entries);
}

namespace {

/// Reads the keys of one dictionary, each an error at `op` naming its path.
class DictReader {
public:
  DictReader(Operation *op, DictionaryAttr dict, std::string path)
      : op(op), dict(dict), path(std::move(path)) {}

  LogicalResult allowOnly(ArrayRef<StringRef> keys) {
    for (NamedAttribute entry : dict)
      if (!llvm::is_contained(keys, entry.getName().getValue()))
        return error(entry.getName().getValue()) << "unknown key";
    return success();
  }
  InFlightDiagnostic error(StringRef key) {
    return op->emitError() << "'" << DTensorDialect::getTrainingAttrName()
                           << "': " << path << key << ": ";
  }
  LogicalResult number(StringRef key, double &out) {
    Attribute value = dict.get(key);
    if (!value)
      return success();
    if (auto f = dyn_cast<FloatAttr>(value))
      out = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(value))
      out = static_cast<double>(i.getInt());
    else
      return error(key) << "expected a number";
    return success();
  }
  LogicalResult optionalNumber(StringRef key, std::optional<double> &out) {
    if (!dict.get(key))
      return success();
    double value = 0;
    if (failed(number(key, value)))
      return failure();
    out = value;
    return success();
  }
  LogicalResult integer(StringRef key, int64_t &out) {
    Attribute value = dict.get(key);
    if (!value)
      return success();
    auto i = dyn_cast<IntegerAttr>(value);
    if (!i || i.getType().isInteger(1))
      return error(key) << "expected an integer";
    out = i.getInt();
    return success();
  }
  LogicalResult boolean(StringRef key, bool &out) {
    Attribute value = dict.get(key);
    if (!value)
      return success();
    auto b = dyn_cast<BoolAttr>(value);
    if (!b)
      return error(key) << "expected true or false";
    out = b.getValue();
    return success();
  }
  LogicalResult string(StringRef key, std::string &out, bool required) {
    Attribute value = dict.get(key);
    if (!value)
      return required ? LogicalResult(error(key) << "is required") : success();
    auto s = dyn_cast<StringAttr>(value);
    if (!s)
      return error(key) << "expected a string";
    out = s.str();
    return success();
  }
  /// A list of strings (absent: empty, or an error when `required`).
  LogicalResult strings(StringRef key, std::vector<std::string> &out,
                        bool required) {
    Attribute value = dict.get(key);
    if (!value)
      return required ? LogicalResult(error(key) << "is required") : success();
    auto list = dyn_cast<ArrayAttr>(value);
    if (!list || !llvm::all_of(list, llvm::IsaPred<StringAttr>))
      return error(key) << "expected strings";
    for (Attribute text : list)
      out.push_back(cast<StringAttr>(text).str());
    return success();
  }
  template <typename T> FailureOr<T> get(StringRef key) {
    Attribute value = dict.get(key);
    if (!value)
      return T();
    auto typed = dyn_cast<T>(value);
    if (!typed)
      return error(key) << "expected "
                        << (std::is_same_v<T, ArrayAttr> ? "a list"
                                                         : "a dictionary"),
             failure();
    return typed;
  }

private:
  Operation *op;
  DictionaryAttr dict;
  std::string path;
};

} // namespace

FailureOr<TrainingPlan>
dtensor::training::decodeTrainingPlan(Operation *op, DictionaryAttr attr) {
  TrainingPlan plan;
  DictReader top(op, attr, "");
  if (failed(top.allowOnly({"function", "loss", "optimizer", "groups", "frozen",
                            "schedule", "clip_grad_norm", "accumulation_steps",
                            "activation_checkpointing"})) ||
      failed(top.string("function", plan.function, /*required=*/true)) ||
      failed(top.integer("loss", plan.loss)) ||
      failed(top.optionalNumber("clip_grad_norm", plan.clipGradNorm)) ||
      failed(top.integer("accumulation_steps", plan.accumulationSteps)))
    return failure();

  FailureOr<DictionaryAttr> optimizer = top.get<DictionaryAttr>("optimizer");
  if (failed(optimizer))
    return failure();
  if (!*optimizer)
    return top.error("optimizer") << "is required", failure();
  DictReader opt(op, *optimizer, "optimizer.");
  std::string kind;
  if (failed(opt.string("kind", kind, /*required=*/true)))
    return failure();
  std::optional<OptimizerConfig::Kind> parsed = parseOptimizerKind(kind);
  if (!parsed)
    return opt.error("kind")
               << "unknown optimizer '" << kind << "' (expected sgd or adamw)",
           failure();
  OptimizerConfig &config = plan.optimizer;
  config.kind = *parsed;
  config.weightDecay = defaultWeightDecay(config.kind);
  if (config.kind == OptimizerConfig::Kind::SGD) {
    if (failed(opt.allowOnly({"kind", "lr", "weight_decay", "momentum",
                              "dampening", "nesterov"})) ||
        failed(opt.number("momentum", config.momentum)) ||
        failed(opt.number("dampening", config.dampening)) ||
        failed(opt.boolean("nesterov", config.nesterov)))
      return failure();
  } else {
    if (failed(opt.allowOnly(
            {"kind", "lr", "weight_decay", "betas", "eps", "amsgrad"})) ||
        failed(opt.number("eps", config.eps)) ||
        failed(opt.boolean("amsgrad", config.amsgrad)))
      return failure();
    FailureOr<ArrayAttr> betas = opt.get<ArrayAttr>("betas");
    if (failed(betas))
      return failure();
    if (*betas) {
      auto b1 =
          betas->size() == 2 ? dyn_cast<FloatAttr>((*betas)[0]) : FloatAttr();
      auto b2 =
          betas->size() == 2 ? dyn_cast<FloatAttr>((*betas)[1]) : FloatAttr();
      if (!b1 || !b2)
        return opt.error("betas") << "expected two numbers", failure();
      config.beta1 = b1.getValueAsDouble();
      config.beta2 = b2.getValueAsDouble();
    }
  }
  if (failed(opt.number("lr", config.lr)) ||
      failed(opt.number("weight_decay", config.weightDecay)))
    return failure();

  FailureOr<ArrayAttr> groups = top.get<ArrayAttr>("groups");
  if (failed(groups))
    return failure();
  if (*groups)
    for (auto [index, entry] : llvm::enumerate(*groups)) {
      std::string at = "groups[" + std::to_string(index) + "]";
      auto dict = dyn_cast<DictionaryAttr>(entry);
      if (!dict)
        return top.error(at) << "expected a dictionary", failure();
      DictReader group(op, dict, at + ".");
      ParameterGroup out;
      if (failed(group.allowOnly({"params", "lr", "weight_decay"})) ||
          failed(group.optionalNumber("lr", out.lr)) ||
          failed(group.optionalNumber("weight_decay", out.weightDecay)) ||
          failed(group.strings("params", out.patterns, /*required=*/true)))
        return failure();
      plan.groups.push_back(std::move(out));
    }
  if (failed(top.strings("frozen", plan.frozen, /*required=*/false)))
    return failure();
  if (attr.get("activation_checkpointing")) {
    std::vector<std::string> patterns;
    if (failed(top.strings("activation_checkpointing", patterns,
                           /*required=*/true)))
      return failure();
    plan.activationCheckpointing = std::move(patterns);
  }

  FailureOr<DictionaryAttr> schedule = top.get<DictionaryAttr>("schedule");
  if (failed(schedule))
    return failure();
  if (*schedule) {
    DictReader reader(op, *schedule, "schedule.");
    std::string decay = "constant";
    if (failed(reader.allowOnly(
            {"warmup_steps", "decay", "total_steps", "min_lr_ratio"})) ||
        failed(reader.integer("warmup_steps", plan.schedule.warmupSteps)) ||
        failed(reader.integer("total_steps", plan.schedule.totalSteps)) ||
        failed(reader.number("min_lr_ratio", plan.schedule.minLrRatio)) ||
        failed(reader.string("decay", decay, /*required=*/false)))
      return failure();
    std::optional<Schedule::Decay> parsedDecay = parseDecay(decay);
    if (!parsedDecay)
      return reader.error("decay") << "unknown decay '" << decay
                                   << "' (expected constant, linear or "
                                      "cosine)",
             failure();
    plan.schedule.decay = *parsedDecay;
  }
  if (std::optional<PlanProblem> problem = checkTrainingPlan(plan))
    return op->emitError() << "'" << DTensorDialect::getTrainingAttrName()
                           << "': " << problem->path << ": "
                           << problem->message,
           failure();
  return plan;
}

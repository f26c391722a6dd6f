//===- ModelSection.cpp - The model section of a plan ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `model` (docs/model-plan.md): the tensors (inputs, state, parameters and
// their initializers), the ops in order, the outputs and the state
// updates; every name defined once and before use.
//
//===----------------------------------------------------------------------===//

#include "PlanSections.h"

#include "JsonReader.h"
#include "Ops/Formatting.h"
#include "dtensor/Frontend/CustomOpDecls.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

namespace {
/// Reads `model`, emitting an error at the first problem of each piece.
class ModelSectionReader : public JsonReader {
public:
  using JsonReader::JsonReader;

  LogicalResult read(const JsonNode &node, ModelPlan &plan);

private:
  /// The plan's custom ops, which ops may call by name.
  const std::vector<std::shared_ptr<const CustomOpDecl>> *customOps = nullptr;

  /// A parameter's `init`, for a parameter of `elementType`.
  FailureOr<InitAttr> readInit(const JsonNode &node, Type elementType);
  LogicalResult readTensorDecl(const JsonNode &node, TensorDecl &decl,
                               bool parameter);
  LogicalResult readOp(const JsonNode &node, OpDecl &op);
};
} // namespace

/// A number as a user would write it (`-0.5`, `3e+09`).
static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

FailureOr<InitAttr> ModelSectionReader::readInit(const JsonNode &node,
                                                 Type elementType) {
  if (failed(expectKind(node, JsonNode::Kind::Object)))
    return failure();
  const JsonNode *kindNode = require(node, "kind");
  if (!kindNode)
    return failure();
  FailureOr<std::string> kindText = readString(*kindNode);
  if (failed(kindText))
    return failure();
  std::optional<InitKind> kind = symbolizeInitKind(*kindText);
  if (!kind)
    return error(*kindNode) << "unknown initializer '" << *kindText
                            << "'; expected one of: zeros, ones, constant, "
                               "normal, uniform";
  SmallVector<StringRef, 2> names = InitAttr::getParameterNames(*kind);
  SmallVector<StringRef> allowed = {"kind"};
  allowed.append(names.begin(), names.end());
  if (failed(checkObject(node, allowed)))
    return failure();

  // The defaults of torch.nn.init: normal(0, 1), uniform(0, 1).
  double values[2] = {0.0, *kind == InitKind::Constant ? 0.0 : 1.0};
  const JsonNode *valueNodes[2] = {nullptr, nullptr};
  for (auto [index, name] : llvm::enumerate(names)) {
    valueNodes[index] =
        *kind == InitKind::Constant ? require(node, name) : node.get(name);
    if (*kind == InitKind::Constant && !valueNodes[index])
      return failure();
    if (!valueNodes[index])
      continue;
    FailureOr<double> value = readNumber(*valueNodes[index]);
    if (failed(value))
      return failure();
    values[index] = *value;
  }
  if (*kind == InitKind::Normal && values[1] < 0)
    return error(*valueNodes[1]) << "expected a standard deviation >= 0, got "
                                 << formatNumber(values[1]);
  if (*kind == InitKind::Uniform && values[0] > values[1])
    return error(node) << "'low' (" << formatNumber(values[0])
                       << ") must be <= 'high' (" << formatNumber(values[1])
                       << ")";
  if (names.empty())
    values[1] = 0.0;
  auto init = InitAttr::get(getContext(), *kind, values[0], values[1]);
  if (!init.isValidFor(elementType)) {
    if (*kind == InitKind::Constant)
      return error(*valueNodes[0])
             << "an integer parameter (" << elementType
             << ") needs an integral constant, got " << formatNumber(values[0]);
    return error(*kindNode) << "an integer parameter (" << elementType
                            << ") takes zeros, ones or an integral constant, "
                               "not '"
                            << *kindText << "'";
  }
  if (*kind == InitKind::Constant && elementType.isInteger()) {
    // The runtime stores the constant exactly; it must fit the dtype.
    double limit = std::ldexp(1.0, elementType.getIntOrFloatBitWidth() - 1);
    if (!(values[0] >= -limit && values[0] < limit))
      return error(*valueNodes[0]) << "the constant " << formatNumber(values[0])
                                   << " does not fit " << elementType;
  }
  return init;
}

LogicalResult ModelSectionReader::readTensorDecl(const JsonNode &node,
                                                 TensorDecl &decl,
                                                 bool parameter) {
  decl.node = &node;
  SmallVector<StringRef> allowed = {"name", "shape", "dtype"};
  if (parameter)
    allowed.push_back("init");
  if (failed(checkObject(node, allowed)))
    return failure();
  const JsonNode *name = require(node, "name");
  const JsonNode *shape = name ? require(node, "shape") : nullptr;
  const JsonNode *dtype = shape ? require(node, "dtype") : nullptr;
  if (!dtype)
    return failure();
  FailureOr<std::string> nameText = readName(*name);
  if (failed(nameText))
    return failure();
  FailureOr<SmallVector<int64_t>> sizes = readShape(*shape, 0);
  if (failed(sizes))
    return failure();
  FailureOr<std::string> dtypeText = readString(*dtype);
  if (failed(dtypeText))
    return failure();
  std::optional<Type> element = parseElementType(getContext(), *dtypeText);
  if (!element)
    return error(*dtype) << "unknown dtype '" << *dtypeText
                         << "'; expected one of: f32, f16, bf16, i32, i64";
  decl.name = *nameText;
  decl.type = RankedTensorType::get(*sizes, *element);
  if (!getTensorBytes(decl.type))
    return error(*shape) << "tensor '" << decl.name << "' of shape "
                         << ops::formatShape(*sizes) << " and dtype "
                         << *dtypeText << " has more bytes than an int64 holds";
  if (const JsonNode *init = parameter ? node.get("init") : nullptr) {
    FailureOr<InitAttr> attr = readInit(*init, *element);
    if (failed(attr))
      return failure();
    decl.init = *attr;
  }
  return success();
}

static std::string listOpNames() {
  SmallVector<llvm::StringRef> names;
  for (const OpDefinition &definition : getOpDefinitions())
    names.push_back(definition.name);
  return llvm::join(names, ", ");
}

LogicalResult ModelSectionReader::readOp(const JsonNode &node, OpDecl &op) {
  op.node = &node;
  if (failed(expectKind(node, JsonNode::Kind::Object)))
    return failure();
  const JsonNode *kind = require(node, "op");
  if (!kind)
    return failure();
  FailureOr<std::string> kindText = readString(*kind);
  if (failed(kindText))
    return failure();
  if (*kindText == "custom") {
    // A call of a custom op of `model.custom_ops`, named by `custom_op`.
    const JsonNode *name = require(node, "custom_op");
    if (!name)
      return failure();
    FailureOr<std::string> nameText = readString(*name);
    if (failed(nameText))
      return failure();
    for (const auto &custom : *customOps)
      if (custom->name == *nameText) {
        op.custom = custom;
        op.definition = &custom->definition;
      }
    if (!op.definition)
      return error(*name) << "unknown custom op '" << *nameText
                          << "'; declare it in model.custom_ops";
  } else {
    op.definition = lookupOpDefinition(*kindText);
  }
  if (!op.definition)
    return error(*kind) << "unknown op '" << *kindText
                        << "'; expected one of: " << listOpNames()
                        << ", custom";

  if (const JsonNode *module = node.get("module")) {
    FailureOr<std::string> path = readString(*module);
    if (failed(path))
      return failure();
    SmallVector<llvm::StringRef> segments;
    llvm::StringRef(*path).split(segments, '.');
    if (!path->empty() && llvm::is_contained(segments, ""))
      return error(*module)
             << "invalid module path '" << *path << "': empty segment";
    op.module = *path;
  }

  const JsonNode *inputs = require(node, "inputs");
  if (!inputs || failed(expectKind(*inputs, JsonNode::Kind::Array)))
    return failure();
  for (const JsonNode &input : inputs->elements) {
    FailureOr<std::string> name = readName(input);
    if (failed(name))
      return failure();
    op.inputs.push_back(*name);
    op.inputNodes.push_back(&input);
  }
  const OpDefinition &definition = *op.definition;
  size_t count = op.inputs.size();
  if (count < definition.minInputs || count > definition.maxInputs) {
    InFlightDiagnostic diag = error(*inputs)
                              << "'" << definition.name << "' takes ";
    if (definition.minInputs == definition.maxInputs)
      diag << definition.minInputs;
    else if (definition.maxInputs == ~0u)
      diag << "at least " << definition.minInputs;
    else
      diag << definition.minInputs << " to " << definition.maxInputs;
    return diag << " input(s), got " << count;
  }

  const JsonNode *output = node.get("output");
  const JsonNode *outputs = node.get("outputs");
  if (output && outputs)
    return error(*outputs) << "give either 'output' or 'outputs', not both";
  if (!output && !outputs)
    return error(node) << "missing member 'output' (or 'outputs')";
  if (output) {
    FailureOr<std::string> name = readName(*output);
    if (failed(name))
      return failure();
    op.outputs.push_back(*name);
    op.outputNodes.push_back(output);
  } else {
    if (failed(expectKind(*outputs, JsonNode::Kind::Array)))
      return failure();
    for (const JsonNode &entry : outputs->elements) {
      FailureOr<std::string> name = readName(entry);
      if (failed(name))
        return failure();
      op.outputs.push_back(*name);
      op.outputNodes.push_back(&entry);
    }
  }
  const JsonNode &outputsAt = output ? *output : *outputs;
  if (definition.numOutputs == 0 && op.outputs.empty())
    return error(outputsAt)
           << "'" << definition.name << "' needs at least one output";
  if (definition.numOutputs != 0 && op.outputs.size() != definition.numOutputs)
    return error(outputsAt)
           << "'" << definition.name << "' has " << definition.numOutputs
           << " output(s), got " << op.outputs.size();
  return success();
}

LogicalResult ModelSectionReader::read(const JsonNode &node, ModelPlan &plan) {
  // `dims` and `entries` are read by readPlanEntries.
  if (failed(checkObject(node, {"name", "dims", "inputs", "state", "parameters",
                                "custom_ops", "ops", "outputs", "updates",
                                "entries", "training"})))
    return failure();
  // Read once the function exists (TrainingSection.h).
  plan.trainingNode = node.get("training");
  if (const JsonNode *custom = node.get("custom_ops"))
    if (failed(readCustomOpDecls(*custom, locator, plan.customOps)))
      return failure();
  customOps = &plan.customOps;
  if (const JsonNode *name = node.get("name")) {
    FailureOr<std::string> text = readName(*name);
    if (failed(text))
      return failure();
    if (!isIdentifier(*text))
      return error(*name) << "model name '" << *text
                          << "' must be an identifier (letters, digits, _)";
    plan.name = *text;
  }

  // Names defined so far, for "defined before use" and uniqueness.
  llvm::StringMap<const JsonNode *> defined;
  auto define = [&](llvm::StringRef name, const JsonNode &at) {
    auto [it, inserted] = defined.try_emplace(name, &at);
    if (inserted)
      return success();
    InFlightDiagnostic diag = error(at)
                              << "tensor '" << name << "' is defined twice";
    diag.attachNote(locator.get(*it->second)) << "first defined here";
    return failure();
  };

  auto readDecls = [&](const JsonNode *list, std::vector<TensorDecl> &decls,
                       bool parameter) {
    if (failed(expectKind(*list, JsonNode::Kind::Array)))
      return failure();
    for (const JsonNode &entry : list->elements) {
      TensorDecl decl;
      if (failed(readTensorDecl(entry, decl, parameter)) ||
          failed(define(decl.name, *entry.get("name"))))
        return failure();
      decls.push_back(std::move(decl));
    }
    return success();
  };
  const JsonNode *inputs = require(node, "inputs");
  if (!inputs || failed(readDecls(inputs, plan.inputs, false)))
    return failure();
  if (const JsonNode *state = node.get("state"))
    if (failed(readDecls(state, plan.state, false)))
      return failure();
  if (const JsonNode *parameters = node.get("parameters"))
    if (failed(readDecls(parameters, plan.parameters, true)))
      return failure();

  const JsonNode *ops = require(node, "ops");
  if (!ops || failed(expectKind(*ops, JsonNode::Kind::Array)))
    return failure();
  for (const JsonNode &entry : ops->elements) {
    OpDecl op;
    if (failed(readOp(entry, op)))
      return failure();
    for (auto [name, at] : llvm::zip(op.inputs, op.inputNodes)) {
      if (defined.count(name))
        continue;
      return error(*at) << "unknown tensor '" << name
                        << "'; an op reads inputs, parameters and the "
                           "outputs of earlier ops";
    }
    for (auto [name, at] : llvm::zip(op.outputs, op.outputNodes))
      if (failed(define(name, *at)))
        return failure();
    plan.ops.push_back(std::move(op));
  }

  const JsonNode *outputs = require(node, "outputs");
  if (!outputs || failed(expectKind(*outputs, JsonNode::Kind::Array)))
    return failure();
  if (outputs->elements.empty())
    return error(*outputs) << "expected at least one output";
  llvm::StringSet<> returned;
  for (const JsonNode &entry : outputs->elements) {
    FailureOr<std::string> name = readName(entry);
    if (failed(name))
      return failure();
    if (!defined.count(*name))
      return error(entry) << "unknown tensor '" << *name << "'";
    if (!returned.insert(*name).second)
      return error(entry) << "tensor '" << *name << "' is returned twice";
    plan.outputs.push_back(*name);
    plan.outputNodes.push_back(&entry);
  }

  if (const JsonNode *updates = node.get("updates")) {
    if (failed(expectKind(*updates, JsonNode::Kind::Object)))
      return failure();
    for (const auto &[state, value] : updates->members) {
      if (!llvm::any_of(plan.state, [&, &state = state](const TensorDecl &d) {
            return d.name == state;
          }))
        return error(value) << "'" << state
                            << "' is not a state tensor; model.updates maps "
                               "each state tensor to its new value";
      FailureOr<std::string> name = readName(value);
      if (failed(name))
        return failure();
      if (!defined.count(*name))
        return error(value) << "unknown tensor '" << *name << "'";
      if (!llvm::any_of(plan.ops, [&](const OpDecl &op) {
            return llvm::is_contained(op.outputs, *name);
          }))
        return error(value)
               << "the new value of state '" << state
               << "' must be an op's output, got '" << *name << "'";
      plan.updates.push_back({state, *name, &value});
    }
  }
  return success();
}

LogicalResult dtensor::frontend::readModelSection(const JsonNode &node,
                                                  const JsonLocator &locator,
                                                  ModelPlan &plan) {
  return ModelSectionReader(locator).read(node, plan);
}

//===- ModelPlan.cpp - A JSON model plan, read and checked ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Frontend/ModelPlan.h"

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

static constexpr llvm::StringLiteral kFormat = "dtensor.model_plan";
static constexpr int64_t kVersion = 1;

llvm::StringRef dtensor::frontend::stringifyStyleKind(StyleDecl::Kind kind) {
  switch (kind) {
  case StyleDecl::Kind::Colwise:
    return "colwise";
  case StyleDecl::Kind::Rowwise:
    return "rowwise";
  case StyleDecl::Kind::SequenceParallel:
    return "sequence_parallel";
  case StyleDecl::Kind::PrepareModuleInput:
    return "prepare_module_input";
  case StyleDecl::Kind::PrepareModuleOutput:
    return "prepare_module_output";
  }
  return "";
}

std::optional<PlacementAttr>
dtensor::frontend::parsePlacement(MLIRContext *context, llvm::StringRef text) {
  text = text.trim();
  llvm::StringRef name = text, argument;
  bool hasParens = false;
  if (size_t open = text.find('('); open != llvm::StringRef::npos) {
    if (!text.ends_with(")"))
      return std::nullopt;
    name = text.take_front(open).trim();
    argument = text.slice(open + 1, text.size() - 1).trim();
    hasParens = true;
  }
  if (name == "R" || name == "Replicate") {
    if (!argument.empty())
      return std::nullopt;
    return ReplicateAttr::get(context);
  }
  if (name == "S" || name == "Shard") {
    int64_t dim;
    if (!hasParens || argument.getAsInteger(10, dim))
      return std::nullopt;
    return ShardAttr::get(context, dim);
  }
  if (name == "P" || name == "Partial") {
    if (argument.empty())
      return PartialAttr::get(context, ReductionKind::Sum);
    std::optional<ReductionKind> kind = symbolizeReductionKind(argument);
    if (!kind)
      return std::nullopt;
    return PartialAttr::get(context, *kind);
  }
  return std::nullopt;
}

namespace {
/// Reads the plan, emitting an error at the first problem of each piece.
class PlanReader {
public:
  PlanReader(const JsonLocator &locator) : locator(locator) {}

  FailureOr<ModelPlan> read(const JsonNode &root);

private:
  const JsonLocator &locator;
  /// The plan's custom ops, which ops may call by name.
  const std::vector<std::shared_ptr<const CustomOpDecl>> *customOps = nullptr;
  MLIRContext *getContext() const { return locator.getContext(); }

  InFlightDiagnostic error(const JsonNode &node) {
    return locator.emitError(node);
  }

  /// `node` must be an object whose members are all in `allowed`.
  LogicalResult checkObject(const JsonNode &node,
                            llvm::ArrayRef<llvm::StringRef> allowed);
  /// The member `key` of `object`, or an error when it is missing.
  const JsonNode *require(const JsonNode &object, llvm::StringRef key);
  LogicalResult expectKind(const JsonNode &node, JsonNode::Kind kind);
  FailureOr<std::string> readString(const JsonNode &node);
  FailureOr<int64_t> readInteger(const JsonNode &node);
  FailureOr<bool> readBool(const JsonNode &node);
  FailureOr<SmallVector<int64_t>> readShape(const JsonNode &node,
                                            int64_t minimum);
  FailureOr<std::string> readName(const JsonNode &node);
  FailureOr<PlacementAttr> readPlacement(const JsonNode &node);
  /// A single placement, a list of placements (entries may be null), or
  /// null; at most `maxEntries` entries when given.
  FailureOr<std::vector<StylePlacement>>
  readStyleLayouts(const JsonNode &node, std::optional<size_t> maxEntries);
  /// One placement per mesh dim: a list, or one placement on a 1-D mesh.
  FailureOr<SmallVector<PlacementAttr>>
  readMeshPlacements(const JsonNode &node, const MeshDecl &mesh);
  LogicalResult readLocalMap(llvm::StringRef pattern, const JsonNode &node,
                             const MeshDecl &mesh, LocalMapDecl &localMap);
  /// A mesh dim by name or index.
  FailureOr<int64_t> readMeshDim(const JsonNode &node, const MeshDecl &mesh);

  LogicalResult readMesh(const JsonNode &node, MeshDecl &mesh);
  FailureOr<double> readNumber(const JsonNode &node);
  /// A parameter's `init`, for a parameter of `elementType`.
  FailureOr<InitAttr> readInit(const JsonNode &node, Type elementType);
  LogicalResult readTensorDecl(const JsonNode &node, TensorDecl &decl,
                               bool parameter);
  LogicalResult readModel(const JsonNode &node, ModelPlan &plan);
  LogicalResult readOp(const JsonNode &node, OpDecl &op);
  LogicalResult readPlan(const JsonNode &node, ModelPlan &plan);
  LogicalResult readContextParallel(const JsonNode &node, ModelPlan &plan);
  LogicalResult readStyle(const JsonNode &key, llvm::StringRef pattern,
                          const JsonNode &node, const ModelPlan &plan,
                          StyleDecl &style);
};
} // namespace

static std::string joinChoices(llvm::ArrayRef<llvm::StringRef> choices) {
  return llvm::join(choices, ", ");
}

LogicalResult PlanReader::expectKind(const JsonNode &node,
                                     JsonNode::Kind kind) {
  if (node.kind == kind)
    return success();
  return error(node) << "expected " << JsonNode::describe(kind) << ", got "
                     << node.describe();
}

LogicalResult PlanReader::checkObject(const JsonNode &node,
                                      llvm::ArrayRef<llvm::StringRef> allowed) {
  if (failed(expectKind(node, JsonNode::Kind::Object)))
    return failure();
  for (const auto &[key, value] : node.members)
    if (!llvm::is_contained(allowed, key))
      return error(value) << "unknown member '" << key
                          << "'; expected one of: " << joinChoices(allowed);
  return success();
}

const JsonNode *PlanReader::require(const JsonNode &object,
                                    llvm::StringRef key) {
  if (const JsonNode *member = object.get(key))
    return member;
  error(object) << "missing member '" << key << "'";
  return nullptr;
}

FailureOr<std::string> PlanReader::readString(const JsonNode &node) {
  if (failed(expectKind(node, JsonNode::Kind::String)))
    return failure();
  return node.string;
}

FailureOr<int64_t> PlanReader::readInteger(const JsonNode &node) {
  if (!node.isInteger())
    return error(node) << "expected an integer, got "
                       << (node.isNumber() ? "a fractional number"
                                           : node.describe());
  return *node.integer;
}

FailureOr<bool> PlanReader::readBool(const JsonNode &node) {
  if (failed(expectKind(node, JsonNode::Kind::Bool)))
    return failure();
  return node.boolean;
}

FailureOr<SmallVector<int64_t>> PlanReader::readShape(const JsonNode &node,
                                                      int64_t minimum) {
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  SmallVector<int64_t> shape;
  for (const JsonNode &element : node.elements) {
    FailureOr<int64_t> size = readInteger(element);
    if (failed(size))
      return failure();
    if (*size < minimum)
      return error(element)
             << "expected a size of at least " << minimum << ", got " << *size;
    shape.push_back(*size);
  }
  return shape;
}

FailureOr<std::string> PlanReader::readName(const JsonNode &node) {
  FailureOr<std::string> name = readString(node);
  if (failed(name))
    return failure();
  if (name->empty())
    return error(node) << "expected a non-empty name";
  return name;
}

FailureOr<PlacementAttr> PlanReader::readPlacement(const JsonNode &node) {
  FailureOr<std::string> text = readString(node);
  if (failed(text))
    return failure();
  if (std::optional<PlacementAttr> placement =
          parsePlacement(getContext(), *text))
    return *placement;
  return error(node) << "invalid placement '" << *text
                     << "'; expected R, S(dim) or P(sum|avg|max|min) (also "
                        "spelt Replicate(), Shard(dim), Partial(kind))";
}

FailureOr<std::vector<StylePlacement>>
PlanReader::readStyleLayouts(const JsonNode &node,
                             std::optional<size_t> maxEntries) {
  std::vector<StylePlacement> layouts;
  auto readEntry = [&](const JsonNode &entry) -> LogicalResult {
    if (entry.isNull()) {
      layouts.push_back(std::nullopt);
      return success();
    }
    FailureOr<PlacementAttr> placement = readPlacement(entry);
    if (failed(placement))
      return failure();
    layouts.push_back(*placement);
    return success();
  };
  if (node.isArray()) {
    if (maxEntries && node.elements.size() > *maxEntries)
      return error(node) << "expected at most " << *maxEntries
                         << " layout(s), got " << node.elements.size();
    for (const JsonNode &entry : node.elements)
      if (failed(readEntry(entry)))
        return failure();
    return layouts;
  }
  if (failed(readEntry(node)))
    return failure();
  return layouts;
}

FailureOr<int64_t> PlanReader::readMeshDim(const JsonNode &node,
                                           const MeshDecl &mesh) {
  if (node.isString()) {
    for (auto [index, name] : llvm::enumerate(mesh.names))
      if (name == node.string)
        return static_cast<int64_t>(index);
    return error(node) << "unknown mesh dim '" << node.string
                       << "'; the mesh dims are: "
                       << llvm::join(mesh.names, ", ");
  }
  FailureOr<int64_t> index = readInteger(node);
  if (failed(index))
    return failure();
  int64_t rank = mesh.shape.size();
  if (*index < 0 || *index >= rank)
    return error(node) << "mesh dim " << *index
                       << " is out of range for a mesh of rank " << rank;
  return *index;
}

LogicalResult PlanReader::readMesh(const JsonNode &node, MeshDecl &mesh) {
  mesh.node = &node;
  if (failed(checkObject(node, {"shape", "names"})))
    return failure();
  const JsonNode *shape = require(node, "shape");
  if (!shape)
    return failure();
  FailureOr<SmallVector<int64_t>> sizes = readShape(*shape, 1);
  if (failed(sizes))
    return failure();
  if (sizes->empty())
    return error(*shape) << "expected at least one mesh dim";
  mesh.shape = *sizes;
  if (const JsonNode *names = node.get("names")) {
    if (failed(expectKind(*names, JsonNode::Kind::Array)))
      return failure();
    if (names->elements.size() != mesh.shape.size())
      return error(*names) << "expected " << mesh.shape.size()
                           << " name(s), one per mesh dim, got "
                           << names->elements.size();
    llvm::StringSet<> seen;
    for (const JsonNode &name : names->elements) {
      FailureOr<std::string> text = readName(name);
      if (failed(text))
        return failure();
      if (!seen.insert(*text).second)
        return error(name) << "mesh dim name '" << *text << "' is used twice";
      mesh.names.push_back(*text);
    }
  } else {
    for (size_t dim = 0; dim < mesh.shape.size(); ++dim)
      mesh.names.push_back("d" + std::to_string(dim));
  }
  return success();
}

std::optional<Type>
dtensor::frontend::parseElementType(MLIRContext *context,
                                    llvm::StringRef name) {
  Builder builder(context);
  return llvm::StringSwitch<std::optional<Type>>(name)
      .Case("f32", builder.getF32Type())
      .Case("f16", builder.getF16Type())
      .Case("bf16", builder.getBF16Type())
      .Case("i32", builder.getI32Type())
      .Case("i64", builder.getI64Type())
      .Default(std::nullopt);
}

FailureOr<double> PlanReader::readNumber(const JsonNode &node) {
  if (failed(expectKind(node, JsonNode::Kind::Number)))
    return failure();
  // The JSON parser rejects numbers out of range, so this is finite.
  return node.number;
}

/// A number as a user would write it (`-0.5`, `3e+09`).
static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

FailureOr<InitAttr> PlanReader::readInit(const JsonNode &node,
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

LogicalResult PlanReader::readTensorDecl(const JsonNode &node, TensorDecl &decl,
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
                         << ops::formatShape(*sizes) << " and dtype " << *dtypeText
                         << " has more bytes than an int64 holds";
  if (const JsonNode *init = parameter ? node.get("init") : nullptr) {
    FailureOr<InitAttr> attr = readInit(*init, *element);
    if (failed(attr))
      return failure();
    decl.init = *attr;
  }
  return success();
}

std::optional<int64_t> dtensor::frontend::getTensorBytes(RankedTensorType type) {
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t size : type.getShape())
    if (size < 0 || __builtin_mul_overflow(bytes, size, &bytes))
      return std::nullopt;
  return bytes;
}

static std::string listOpNames() {
  SmallVector<llvm::StringRef> names;
  for (const OpDefinition &definition : getOpDefinitions())
    names.push_back(definition.name);
  return llvm::join(names, ", ");
}

LogicalResult PlanReader::readOp(const JsonNode &node, OpDecl &op) {
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

LogicalResult PlanReader::readModel(const JsonNode &node, ModelPlan &plan) {
  // `dims` and `entries` are read by readPlanEntries.
  if (failed(checkObject(node, {"name", "dims", "inputs", "state",
                                "parameters", "custom_ops", "ops", "outputs",
                                "updates", "entries"})))
    return failure();
  if (const JsonNode *custom = node.get("custom_ops"))
    if (failed(readCustomOpDecls(*custom, locator, plan.customOps)))
      return failure();
  customOps = &plan.customOps;
  if (const JsonNode *name = node.get("name")) {
    FailureOr<std::string> text = readName(*name);
    if (failed(text))
      return failure();
    bool identifier =
        !llvm::isDigit(text->front()) && llvm::all_of(*text, [](char c) {
          return llvm::isAlnum(c) || c == '_';
        });
    if (!identifier)
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
        return error(value) << "the new value of state '" << state
                            << "' must be an op's output, got '" << *name
                            << "'";
      plan.updates.push_back({state, *name, &value});
    }
  }
  return success();
}

LogicalResult PlanReader::readStyle(const JsonNode &key,
                                    llvm::StringRef pattern,
                                    const JsonNode &node, const ModelPlan &plan,
                                    StyleDecl &style) {
  style.pattern = pattern.str();
  style.node = &key;
  style.meshDim = plan.styleMeshDim;
  const JsonNode *kindNode = &node;
  if (node.isObject()) {
    kindNode = require(node, "style");
    if (!kindNode)
      return failure();
  }
  FailureOr<std::string> kindText = readString(*kindNode);
  if (failed(kindText))
    return failure();
  using Kind = StyleDecl::Kind;
  std::optional<Kind> kind =
      llvm::StringSwitch<std::optional<Kind>>(*kindText)
          .Case("colwise", Kind::Colwise)
          .Case("rowwise", Kind::Rowwise)
          .Case("sequence_parallel", Kind::SequenceParallel)
          .Case("prepare_module_input", Kind::PrepareModuleInput)
          .Case("prepare_module_output", Kind::PrepareModuleOutput)
          .Default(std::nullopt);
  if (!kind)
    return error(*kindNode) << "unknown style '" << *kindText
                            << "'; expected one of: colwise, rowwise, "
                               "sequence_parallel, prepare_module_input, "
                               "prepare_module_output";
  style.kind = *kind;
  style.useLocalOutput =
      *kind != Kind::SequenceParallel && *kind != Kind::PrepareModuleInput;
  if (!node.isObject())
    return success();

  SmallVector<llvm::StringRef> allowed = {"style", "mesh_dim",
                                          "use_local_output"};
  switch (*kind) {
  case Kind::Colwise:
  case Kind::Rowwise:
    allowed.append({"input_layouts", "output_layouts"});
    break;
  case Kind::SequenceParallel:
    allowed.push_back("sequence_dim");
    break;
  case Kind::PrepareModuleInput:
    allowed.append({"input_layouts", "desired_input_layouts"});
    break;
  case Kind::PrepareModuleOutput:
    allowed.append({"output_layouts", "desired_output_layouts"});
    break;
  }
  if (failed(checkObject(node, allowed)))
    return failure();
  if (const JsonNode *dim = node.get("mesh_dim")) {
    FailureOr<int64_t> meshDim = readMeshDim(*dim, plan.mesh);
    if (failed(meshDim))
      return failure();
    style.meshDim = *meshDim;
  }
  if (const JsonNode *local = node.get("use_local_output")) {
    FailureOr<bool> value = readBool(*local);
    if (failed(value))
      return failure();
    style.useLocalOutput = *value;
  }
  if (const JsonNode *dim = node.get("sequence_dim")) {
    FailureOr<int64_t> value = readInteger(*dim);
    if (failed(value))
      return failure();
    style.sequenceDim = *value;
  }
  bool single = *kind == Kind::Colwise || *kind == Kind::Rowwise;
  std::optional<size_t> limit =
      single ? std::optional<size_t>(1) : std::nullopt;
  auto readList = [&](llvm::StringRef key,
                      std::vector<StylePlacement> &layouts) -> LogicalResult {
    const JsonNode *list = node.get(key);
    if (!list)
      return success();
    if (!single && !list->isArray())
      return error(*list) << "expected a list of layouts (null skips one)";
    FailureOr<std::vector<StylePlacement>> read =
        readStyleLayouts(*list, limit);
    if (failed(read))
      return failure();
    if (single && (read->empty() || !read->front()))
      return error(*list) << "expected one placement";
    layouts = std::move(*read);
    return success();
  };
  if (failed(readList("input_layouts", style.inputLayouts)) ||
      failed(readList("desired_input_layouts", style.desiredInputLayouts)) ||
      failed(readList("output_layouts", style.outputLayouts)) ||
      failed(readList("desired_output_layouts", style.desiredOutputLayouts)))
    return failure();

  auto checkPair = [&](llvm::StringRef given, llvm::StringRef desired,
                       const std::vector<StylePlacement> &a,
                       const std::vector<StylePlacement> &b) -> LogicalResult {
    if (!node.get(given))
      return error(node) << "missing member '" << given << "'";
    if (!node.get(desired))
      return error(node) << "missing member '" << desired << "'";
    if (a.size() != b.size())
      return error(*node.get(desired))
             << "expected " << a.size() << " layout(s), as many as '" << given
             << "', got " << b.size();
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].has_value() != b[i].has_value())
        return error(node.get(desired)->elements[i])
               << "'" << given << "' and '" << desired
               << "' must skip (null) the same entries";
    return success();
  };
  if (*kind == Kind::PrepareModuleInput)
    return checkPair("input_layouts", "desired_input_layouts",
                     style.inputLayouts, style.desiredInputLayouts);
  if (*kind == Kind::PrepareModuleOutput)
    return checkPair("output_layouts", "desired_output_layouts",
                     style.outputLayouts, style.desiredOutputLayouts);
  return success();
}

LogicalResult PlanReader::readPlan(const JsonNode &node, ModelPlan &plan) {
  plan.planNode = &node;
  if (failed(checkObject(
          node, {"mesh_dim", "data_parallel", "context_parallel", "styles",
                 "placements", "local_maps"})))
    return failure();
  // The styles' default mesh dim: `tp` if a dim has that name, else the last.
  plan.styleMeshDim = plan.mesh.shape.size() - 1;
  for (auto [index, name] : llvm::enumerate(plan.mesh.names))
    if (name == "tp")
      plan.styleMeshDim = index;
  if (const JsonNode *dim = node.get("mesh_dim")) {
    FailureOr<int64_t> meshDim = readMeshDim(*dim, plan.mesh);
    if (failed(meshDim))
      return failure();
    plan.styleMeshDim = *meshDim;
  }
  if (const JsonNode *dim = node.get("data_parallel")) {
    FailureOr<int64_t> meshDim = readMeshDim(*dim, plan.mesh);
    if (failed(meshDim))
      return failure();
    plan.dataParallelDim = *meshDim;
  }
  if (const JsonNode *cp = node.get("context_parallel"))
    if (failed(readContextParallel(*cp, plan)))
      return failure();
  if (const JsonNode *styles = node.get("styles")) {
    if (failed(expectKind(*styles, JsonNode::Kind::Object)))
      return failure();
    for (const auto &[pattern, value] : styles->members) {
      StyleDecl style;
      if (failed(readStyle(value, pattern, value, plan, style)))
        return failure();
      if (plan.dataParallelDim && style.meshDim == *plan.dataParallelDim)
        return error(value)
               << "style applies to mesh dim " << plan.mesh.names[style.meshDim]
               << ", which is the data-parallel dim";
      if (plan.contextParallel &&
          style.meshDim == plan.contextParallel->meshDim)
        return error(value)
               << "style applies to mesh dim " << plan.mesh.names[style.meshDim]
               << ", which is the context-parallel dim (plan.mesh_dim or the "
                  "style's mesh_dim must name another)";
      plan.styles.push_back(std::move(style));
    }
  }
  if (const JsonNode *placements = node.get("placements")) {
    if (failed(expectKind(*placements, JsonNode::Kind::Object)))
      return failure();
    for (const auto &[tensor, value] : placements->members) {
      PlacementDecl decl;
      decl.tensor = tensor;
      decl.node = &value;
      FailureOr<SmallVector<PlacementAttr>> list =
          readMeshPlacements(value, plan.mesh);
      if (failed(list))
        return failure();
      decl.placements = std::move(*list);
      plan.placements.push_back(std::move(decl));
    }
  }
  if (const JsonNode *localMaps = node.get("local_maps")) {
    if (failed(expectKind(*localMaps, JsonNode::Kind::Object)))
      return failure();
    for (const auto &[pattern, value] : localMaps->members) {
      LocalMapDecl localMap;
      if (failed(readLocalMap(pattern, value, plan.mesh, localMap)))
        return failure();
      plan.localMaps.push_back(std::move(localMap));
    }
  }
  return success();
}

LogicalResult PlanReader::readContextParallel(const JsonNode &node,
                                              ModelPlan &plan) {
  if (failed(expectKind(node, JsonNode::Kind::Object)) ||
      failed(checkObject(
          node, {"mesh_dim", "sequence_dim", "rotate_method", "load_balance"})))
    return failure();
  ContextParallelDecl cp;
  cp.node = &node;
  if (const JsonNode *dim = node.get("mesh_dim")) {
    FailureOr<int64_t> meshDim = readMeshDim(*dim, plan.mesh);
    if (failed(meshDim))
      return failure();
    cp.meshDim = *meshDim;
  } else {
    // The dim named `cp`, else the only dim of a 1-D mesh.
    auto named = llvm::find(plan.mesh.names, "cp");
    if (named != plan.mesh.names.end())
      cp.meshDim = named - plan.mesh.names.begin();
    else if (plan.mesh.shape.size() != 1)
      return error(node) << "missing member 'mesh_dim': the mesh has "
                         << plan.mesh.shape.size()
                         << " dims and none is named 'cp'";
  }
  if (plan.dataParallelDim && cp.meshDim == *plan.dataParallelDim)
    return error(node.get("mesh_dim") ? *node.get("mesh_dim") : node)
           << "context parallelism over mesh dim "
           << plan.mesh.names[cp.meshDim]
           << ", which is the data-parallel dim";
  if (const JsonNode *dim = node.get("sequence_dim")) {
    FailureOr<int64_t> value = readInteger(*dim);
    if (failed(value))
      return failure();
    if (*value < 0)
      return error(*dim) << "sequence_dim must be >= 0, got " << *value;
    cp.sequenceDim = *value;
  }
  if (const JsonNode *method = node.get("rotate_method")) {
    FailureOr<std::string> text = readString(*method);
    if (failed(text))
      return failure();
    if (*text != "allgather" && *text != "alltoall")
      return error(*method) << "unknown rotate_method '" << *text
                            << "'; expected allgather or alltoall";
    cp.rotateMethod = *text;
  }
  if (const JsonNode *balance = node.get("load_balance")) {
    FailureOr<bool> value = readBool(*balance);
    if (failed(value))
      return failure();
    cp.loadBalance = *value;
  }
  plan.contextParallel = cp;
  return success();
}

FailureOr<SmallVector<PlacementAttr>>
PlanReader::readMeshPlacements(const JsonNode &node, const MeshDecl &mesh) {
  size_t meshRank = mesh.shape.size();
  SmallVector<PlacementAttr> placements;
  if (node.isString() && meshRank == 1) {
    FailureOr<PlacementAttr> placement = readPlacement(node);
    if (failed(placement))
      return failure();
    placements.push_back(*placement);
    return placements;
  }
  if (!node.isArray())
    return error(node) << "expected a list of " << meshRank
                       << " placement(s), one per mesh dim"
                       << (meshRank == 1 ? ", or one placement" : "");
  if (node.elements.size() != meshRank)
    return error(node) << "expected " << meshRank
                       << " placement(s), one per mesh dim, got "
                       << node.elements.size();
  for (const JsonNode &entry : node.elements) {
    FailureOr<PlacementAttr> placement = readPlacement(entry);
    if (failed(placement))
      return failure();
    placements.push_back(*placement);
  }
  return placements;
}

LogicalResult PlanReader::readLocalMap(llvm::StringRef pattern,
                                       const JsonNode &node,
                                       const MeshDecl &mesh,
                                       LocalMapDecl &localMap) {
  localMap.pattern = pattern.str();
  localMap.node = &node;
  if (failed(checkObject(node, {"in_placements", "out_placements",
                                "redistribute_inputs"})))
    return failure();
  auto readList = [&](llvm::StringRef key,
                      std::vector<SmallVector<PlacementAttr>> &lists,
                      std::vector<const JsonNode *> &nodes) -> LogicalResult {
    const JsonNode *list = require(node, key);
    if (!list || failed(expectKind(*list, JsonNode::Kind::Array)))
      return failure();
    for (const JsonNode &entry : list->elements) {
      FailureOr<SmallVector<PlacementAttr>> placements =
          readMeshPlacements(entry, mesh);
      if (failed(placements))
        return failure();
      lists.push_back(std::move(*placements));
      nodes.push_back(&entry);
    }
    return success();
  };
  if (failed(readList("in_placements", localMap.inPlacements,
                      localMap.inNodes)) ||
      failed(readList("out_placements", localMap.outPlacements,
                      localMap.outNodes)))
    return failure();
  if (const JsonNode *redistribute = node.get("redistribute_inputs")) {
    FailureOr<bool> value = readBool(*redistribute);
    if (failed(value))
      return failure();
    localMap.redistributeInputs = *value;
  }
  return success();
}

FailureOr<ModelPlan> PlanReader::read(const JsonNode &root) {
  ModelPlan plan;
  if (failed(checkObject(root, {"format", "version", "mesh", "model", "plan"})))
    return failure();
  const JsonNode *format = require(root, "format");
  if (!format)
    return failure();
  FailureOr<std::string> formatText = readString(*format);
  if (failed(formatText))
    return failure();
  if (*formatText != kFormat)
    return error(*format) << "expected \"" << kFormat << "\", got \""
                          << *formatText << "\"";
  const JsonNode *version = require(root, "version");
  if (!version)
    return failure();
  FailureOr<int64_t> versionNumber = readInteger(*version);
  if (failed(versionNumber))
    return failure();
  if (*versionNumber != kVersion)
    return error(*version) << "unsupported format version " << *versionNumber
                           << "; this compiler reads version " << kVersion;
  const JsonNode *mesh = require(root, "mesh");
  if (!mesh || failed(readMesh(*mesh, plan.mesh)))
    return failure();
  const JsonNode *model = require(root, "model");
  if (!model || failed(readModel(*model, plan)))
    return failure();
  plan.styleMeshDim = plan.mesh.shape.size() - 1;
  if (const JsonNode *planNode = root.get("plan"))
    if (failed(readPlan(*planNode, plan)))
      return failure();
  return plan;
}

FailureOr<ModelPlan>
dtensor::frontend::readModelPlan(const JsonNode &root,
                                 const JsonLocator &locator) {
  return PlanReader(locator).read(root);
}

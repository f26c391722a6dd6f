//===- ModelPlan.cpp - A JSON model plan, read and checked ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plan's file: its format and version, the mesh, then the model section
// (ModelSection.cpp) and the plan section (PlanSection.cpp); and the
// spellings of placements, dtypes and styles that both use.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Frontend/ModelPlan.h"

#include "JsonReader.h"
#include "PlanSections.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

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

std::optional<Type> dtensor::frontend::parseElementType(MLIRContext *context,
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

std::optional<int64_t>
dtensor::frontend::getTensorBytes(RankedTensorType type) {
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  for (int64_t size : type.getShape())
    if (size < 0 || __builtin_mul_overflow(bytes, size, &bytes))
      return std::nullopt;
  return bytes;
}

static LogicalResult readMesh(const JsonReader &json, const JsonNode &node,
                              MeshDecl &mesh) {
  mesh.node = &node;
  if (failed(json.checkObject(node, {"shape", "names"})))
    return failure();
  const JsonNode *shape = json.require(node, "shape");
  if (!shape)
    return failure();
  FailureOr<SmallVector<int64_t>> sizes = json.readShape(*shape, 1);
  if (failed(sizes))
    return failure();
  if (sizes->empty())
    return json.error(*shape) << "expected at least one mesh dim";
  mesh.shape = *sizes;
  if (const JsonNode *names = node.get("names")) {
    if (failed(json.expectKind(*names, JsonNode::Kind::Array)))
      return failure();
    if (names->elements.size() != mesh.shape.size())
      return json.error(*names)
             << "expected " << mesh.shape.size()
             << " name(s), one per mesh dim, got " << names->elements.size();
    llvm::StringSet<> seen;
    for (const JsonNode &name : names->elements) {
      FailureOr<std::string> text = json.readName(name);
      if (failed(text))
        return failure();
      if (!seen.insert(*text).second)
        return json.error(name)
               << "mesh dim name '" << *text << "' is used twice";
      mesh.names.push_back(*text);
    }
  } else {
    for (size_t dim = 0; dim < mesh.shape.size(); ++dim)
      mesh.names.push_back("d" + std::to_string(dim));
  }
  return success();
}

FailureOr<ModelPlan>
dtensor::frontend::readModelPlan(const JsonNode &root,
                                 const JsonLocator &locator) {
  JsonReader json(locator);
  ModelPlan plan;
  if (failed(json.checkObject(root,
                              {"format", "version", "mesh", "model", "plan"})))
    return failure();
  const JsonNode *format = json.require(root, "format");
  if (!format)
    return failure();
  FailureOr<std::string> formatText = json.readString(*format);
  if (failed(formatText))
    return failure();
  if (*formatText != kFormat)
    return json.error(*format)
           << "expected \"" << kFormat << "\", got \"" << *formatText << "\"";
  const JsonNode *version = json.require(root, "version");
  if (!version)
    return failure();
  FailureOr<int64_t> versionNumber = json.readInteger(*version);
  if (failed(versionNumber))
    return failure();
  if (*versionNumber != kVersion)
    return json.error(*version)
           << "unsupported format version " << *versionNumber
           << "; this compiler reads version " << kVersion;
  const JsonNode *mesh = json.require(root, "mesh");
  if (!mesh || failed(readMesh(json, *mesh, plan.mesh)))
    return failure();
  const JsonNode *model = json.require(root, "model");
  if (!model || failed(readModelSection(*model, locator, plan)))
    return failure();
  plan.styleMeshDim = plan.mesh.shape.size() - 1;
  if (const JsonNode *planNode = root.get("plan"))
    if (failed(readPlanSection(*planNode, locator, plan)))
      return failure();
  return plan;
}

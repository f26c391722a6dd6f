//===- PlanEntries.cpp - Entry points of a model plan and their dims ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "dtensor/Frontend/PlanEntries.h"

#include "JsonReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace dtensor::frontend;

/// Checks the strings of every `shape` array under `node` against `dims`.
static LogicalResult checkDimNames(const JsonReader &json, const JsonNode &node,
                                   const llvm::StringSet<> &dims,
                                   llvm::StringRef declared) {
  if (node.isObject()) {
    for (const auto &[key, value] : node.members) {
      if (key == "shape" && value.isArray()) {
        for (const JsonNode &element : value.elements) {
          // Without dims, the plan reader says that a size is an integer.
          if (!element.isString() || dims.empty() ||
              dims.contains(element.string))
            continue;
          return json.error(element)
                 << "unknown dim '" << element.string << "'; model.dims "
                 << "declares " << declared;
        }
      }
      if (failed(checkDimNames(json, value, dims, declared)))
        return failure();
    }
  } else if (node.isArray()) {
    for (const JsonNode &element : node.elements)
      if (failed(checkDimNames(json, element, dims, declared)))
        return failure();
  }
  return success();
}

FailureOr<PlanEntries>
dtensor::frontend::readPlanEntries(const JsonNode &root,
                                   const JsonLocator &locator) {
  JsonReader json(locator);
  PlanEntries result;
  const JsonNode *model = root.isObject() ? root.get("model") : nullptr;
  if (!model || !model->isObject()) {
    // The plan reader reports the missing or malformed model.
    result.entries.push_back({"main", {}, nullptr});
    return result;
  }
  llvm::StringSet<> dimSet;
  if (const JsonNode *dims = model->get("dims")) {
    if (failed(json.expectKind(*dims, JsonNode::Kind::Array)))
      return failure();
    for (const JsonNode &dim : dims->elements) {
      if (failed(json.expectKind(dim, JsonNode::Kind::String)))
        return failure();
      if (!JsonReader::isIdentifier(dim.string))
        return json.error(dim)
               << "dim name '" << dim.string
               << "' must be an identifier (letters, digits, _)";
      if (!dimSet.insert(dim.string).second)
        return json.error(dim)
               << "dim '" << dim.string << "' is declared twice";
      result.dims.push_back(dim.string);
    }
  }
  std::string declared = llvm::join(result.dims, ", ");
  if (failed(checkDimNames(json, *model, dimSet, declared)))
    return failure();

  const JsonNode *entries = model->get("entries");
  if (!entries) {
    if (!result.dims.empty())
      return json.error(*model->get("dims"))
             << "model.dims needs model.entries, which give each dim its "
                "size";
    std::string name = "main";
    if (const JsonNode *modelName = model->get("name"))
      if (modelName->isString())
        name = modelName->string;
    result.entries.push_back({name, {}, nullptr});
    return result;
  }
  result.listed = true;
  if (failed(json.expectKind(*entries, JsonNode::Kind::Array)))
    return failure();
  if (entries->elements.empty())
    return json.error(*entries) << "expected at least one entry";
  llvm::StringMap<const JsonNode *> names;
  for (const JsonNode &node : entries->elements) {
    if (failed(json.checkObject(node, {"name", "dims"})))
      return failure();
    const JsonNode *name = json.require(node, "name");
    if (!name)
      return failure();
    if (failed(json.expectKind(*name, JsonNode::Kind::String)))
      return failure();
    if (!JsonReader::isIdentifier(name->string))
      return json.error(*name)
             << "entry name '" << name->string
             << "' must be an identifier (letters, digits, _)";
    auto [it, inserted] = names.try_emplace(name->string, name);
    if (!inserted) {
      InFlightDiagnostic diag = json.error(*name) << "entry '" << name->string
                                                  << "' is declared twice";
      diag.attachNote(locator.get(*it->second)) << "first declared here";
      return failure();
    }
    EntryDecl entry{name->string, {}, &node};
    const JsonNode *sizes = node.get("dims");
    if (!sizes) {
      if (!result.dims.empty())
        return json.error(node)
               << "missing member 'dims': a size for each of " << declared;
    } else {
      if (failed(json.expectKind(*sizes, JsonNode::Kind::Object)))
        return failure();
      for (const auto &[key, value] : sizes->members)
        if (!dimSet.contains(key))
          return json.error(value)
                 << "unknown dim '" << key << "'; "
                 << (result.dims.empty() ? "model.dims declares none"
                                         : "model.dims declares " + declared);
      for (const std::string &dim : result.dims) {
        const JsonNode *size = sizes->get(dim);
        if (!size)
          return json.error(*sizes) << "no size for dim '" << dim << "'";
        if (!size->isInteger() || *size->integer < 0) {
          InFlightDiagnostic diag = json.error(*size);
          diag << "the size of dim '" << dim
               << "' must be an integer >= 0, got ";
          if (size->isInteger())
            diag << *size->integer;
          else if (size->isNumber())
            diag << size->number;
          else
            diag << size->describe();
          return failure();
        }
        entry.dims.emplace_back(dim, *size->integer);
      }
    }
    result.entries.push_back(std::move(entry));
  }
  return result;
}

static void specialize(JsonNode &node, const EntryDecl &entry) {
  for (auto &[key, value] : node.members) {
    if (key == "shape" && value.isArray()) {
      for (JsonNode &element : value.elements) {
        if (!element.isString())
          continue;
        for (const auto &[dim, size] : entry.dims) {
          if (element.string != dim)
            continue;
          element.kind = JsonNode::Kind::Number;
          element.number = static_cast<double>(size);
          element.integer = size;
          element.string.clear();
          break;
        }
      }
    }
    specialize(value, entry);
  }
  for (JsonNode &element : node.elements)
    specialize(element, entry);
}

JsonNode dtensor::frontend::specializePlan(const JsonNode &root,
                                           const EntryDecl &entry) {
  JsonNode copy = root;
  if (!entry.dims.empty())
    specialize(copy, entry);
  return copy;
}

std::string dtensor::frontend::describeDims(const EntryDecl &entry) {
  std::string text;
  for (const auto &[dim, size] : entry.dims) {
    if (!text.empty())
      text += ", ";
    text += dim + " = " + std::to_string(size);
  }
  return text;
}

//===- CustomOpDecls.cpp - Reading model.custom_ops -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Frontend/CustomOpDecls.h"

#include "JsonReader.h"
#include "Ops/Formatting.h"
#include "dtensor/Frontend/ModelPlan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;
using dtensor::frontend::ops::formatDtype;

namespace {

/// Reads one declaration; errors at the JSON value concerned.
class DeclReader : public JsonReader {
public:
  using JsonReader::JsonReader;

  LogicalResult read(const JsonNode &node, CustomOpDecl &decl);
  /// Links `decl`'s backward (member `node`) to the declarations `decls`
  /// and checks each named op's signature against the input's gradient.
  LogicalResult
  linkBackward(const JsonNode &node, CustomOpDecl &decl,
               llvm::ArrayRef<std::shared_ptr<CustomOpDecl>> decls);

private:
  FailureOr<std::string> readIdentifier(const JsonNode &node,
                                        llvm::StringRef what);
  FailureOr<Type> readDtype(const JsonNode &node);
  LogicalResult readInputs(const JsonNode &node, CustomOpDecl &decl);
  LogicalResult readOutput(const JsonNode &node, CustomOpDecl &decl);
  LogicalResult readStrategies(const JsonNode &node, CustomOpDecl &decl);
  /// Placement `node` of a tensor of `rank` named by `what`.
  FailureOr<PlacementAttr> readPlacement(const JsonNode &node, int64_t rank,
                                         const std::string &what);
};

} // namespace

FailureOr<std::string> DeclReader::readIdentifier(const JsonNode &node,
                                                  llvm::StringRef what) {
  if (failed(expectKind(node, JsonNode::Kind::String)))
    return failure();
  const std::string &text = node.string;
  if (!isIdentifier(text))
    return error(node) << what << " '" << text
                       << "' must be a C identifier (letters, digits, _)";
  return text;
}

FailureOr<Type> DeclReader::readDtype(const JsonNode &node) {
  if (failed(expectKind(node, JsonNode::Kind::String)))
    return failure();
  if (std::optional<Type> type =
          parseElementType(locator.getContext(), node.string))
    return *type;
  return error(node) << "unknown dtype '" << node.string
                     << "'; expected one of: f32, f16, bf16, i32, i64";
}

LogicalResult DeclReader::readInputs(const JsonNode &node, CustomOpDecl &decl) {
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  if (node.elements.empty())
    return error(node) << "a custom op takes at least one input";
  llvm::StringSet<> names;
  for (const JsonNode &entry : node.elements) {
    if (failed(checkObject(entry, {"name", "dtype", "rank"})))
      return failure();
    const JsonNode *name = require(entry, "name");
    const JsonNode *dtype = name ? require(entry, "dtype") : nullptr;
    const JsonNode *rank = dtype ? require(entry, "rank") : nullptr;
    if (!rank)
      return failure();
    FailureOr<std::string> text = readIdentifier(*name, "input name");
    if (failed(text))
      return failure();
    FailureOr<Type> type = readDtype(*dtype);
    if (failed(type))
      return failure();
    FailureOr<int64_t> size = readIntegerAtLeast(*rank, 0);
    if (failed(size))
      return failure();
    if (!names.insert(*text).second)
      return error(*name) << "input '" << *text << "' is declared twice";
    decl.inputs.push_back({*text, *type, *size});
  }
  return success();
}

LogicalResult DeclReader::readOutput(const JsonNode &node, CustomOpDecl &decl) {
  if (failed(checkObject(node, {"dtype", "shape"})))
    return failure();
  const JsonNode *dtype = require(node, "dtype");
  const JsonNode *shape = dtype ? require(node, "shape") : nullptr;
  if (!shape)
    return failure();
  FailureOr<Type> type = readDtype(*dtype);
  if (failed(type) || failed(expectKind(*shape, JsonNode::Kind::Array)))
    return failure();
  decl.outputDtype = *type;
  for (const JsonNode &entry : shape->elements) {
    CustomOpOutputDim dim;
    if (entry.isNumber()) {
      FailureOr<int64_t> size = readIntegerAtLeast(entry, 0);
      if (failed(size))
        return failure();
      dim.size = *size;
      decl.outputShape.push_back(dim);
      continue;
    }
    if (!entry.isArray() || entry.elements.size() != 2 ||
        !entry.elements[0].isString() || !entry.elements[1].isInteger())
      return error(entry) << "expected a size, or [input name, dim] for the "
                             "size of an input's dim";
    const std::string &input = entry.elements[0].string;
    auto it = llvm::find_if(decl.inputs, [&](const CustomOpInput &declared) {
      return declared.name == input;
    });
    if (it == decl.inputs.end())
      return error(entry.elements[0]) << "unknown input '" << input
                                      << "' of custom op '" << decl.name << "'";
    int64_t rank = it->rank, index = *entry.elements[1].integer;
    if (index < -rank || index >= rank)
      return error(entry.elements[1])
             << "dim " << index << " is out of range for input '" << input
             << "' of rank " << rank;
    dim.input = static_cast<unsigned>(it - decl.inputs.begin());
    dim.dim = index < 0 ? index + rank : index;
    decl.outputShape.push_back(dim);
  }
  return success();
}

FailureOr<PlacementAttr> DeclReader::readPlacement(const JsonNode &node,
                                                   int64_t rank,
                                                   const std::string &what) {
  if (failed(expectKind(node, JsonNode::Kind::String)))
    return failure();
  std::optional<PlacementAttr> placement =
      parsePlacement(locator.getContext(), node.string);
  if (!placement)
    return error(node) << "invalid placement '" << node.string
                       << "'; expected R, S(dim) or P(sum|avg|max|min)";
  layout::Placement value = placement->getPlacement();
  if (value.isShard() && (value.dim < -rank || value.dim >= rank))
    return error(node) << "placement '" << node.string << "' shards dim "
                       << value.dim << " of " << what << ", which has rank "
                       << rank;
  return *placement;
}

LogicalResult DeclReader::readStrategies(const JsonNode &node,
                                         CustomOpDecl &decl) {
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  if (node.elements.empty())
    return error(node) << "expected at least one strategy; leave out "
                          "'strategies' to run the op replicated";
  std::vector<std::vector<PlacementAttr>> strategies;
  for (const JsonNode &entry : node.elements) {
    if (!entry.isArray() || entry.elements.size() != 2 ||
        !entry.elements[0].isArray() || !entry.elements[1].isArray())
      return error(entry)
             << "expected a strategy [[output placement], [input "
                "placements...]], PyTorch's (output placements, input "
                "placements) for one mesh dim";
    const JsonNode &outputs = entry.elements[0];
    const JsonNode &inputs = entry.elements[1];
    if (outputs.elements.size() != 1)
      return error(outputs)
             << outputs.elements.size() << " output placements; custom op '"
             << decl.name << "' has 1 output";
    if (inputs.elements.size() != decl.inputs.size())
      return error(inputs) << inputs.elements.size()
                           << " input placements; custom op '" << decl.name
                           << "' takes " << decl.inputs.size() << " input"
                           << (decl.inputs.size() == 1 ? "" : "s");
    std::vector<PlacementAttr> strategy;
    FailureOr<PlacementAttr> output = readPlacement(
        outputs.elements[0], static_cast<int64_t>(decl.outputShape.size()),
        "the output");
    if (failed(output))
      return failure();
    strategy.push_back(*output);
    for (auto [input, placement] : llvm::zip(decl.inputs, inputs.elements)) {
      FailureOr<PlacementAttr> attr =
          readPlacement(placement, input.rank, "input '" + input.name + "'");
      if (failed(attr))
        return failure();
      strategy.push_back(*attr);
    }
    strategies.push_back(std::move(strategy));
  }
  decl.strategies = std::move(strategies);
  return success();
}

LogicalResult
DeclReader::linkBackward(const JsonNode &node, CustomOpDecl &decl,
                         llvm::ArrayRef<std::shared_ptr<CustomOpDecl>> decls) {
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  size_t arity = decl.inputs.size();
  if (node.elements.size() != arity)
    return error(node) << node.elements.size() << " entries; custom op '"
                       << decl.name << "' takes " << arity << " input"
                       << (arity == 1 ? "" : "s")
                       << ": one entry per input, null for an input "
                          "without a gradient";
  std::vector<const CustomOpDecl *> backward;
  for (auto [index, entry] : llvm::enumerate(node.elements)) {
    const CustomOpInput &input = decl.inputs[index];
    if (entry.kind == JsonNode::Kind::Null) {
      backward.push_back(nullptr);
      continue;
    }
    if (failed(expectKind(entry, JsonNode::Kind::String)))
      return failure();
    if (!isa<FloatType>(input.dtype))
      return error(entry) << "input '" << input.name << "' is "
                          << formatDtype(input.dtype)
                          << ": it has no gradient; write null";
    auto found = llvm::find_if(
        decls, [&](const auto &other) { return other->name == entry.string; });
    if (found == decls.end())
      return error(entry) << "unknown custom op '" << entry.string
                          << "'; declare it in model.custom_ops";
    const CustomOpDecl &op = **found;
    if (&op == &decl)
      return error(entry) << "custom op '" << decl.name
                          << "' cannot be its own backward";
    // The backward takes the forward's inputs, then its output's gradient,
    // and gives the input's gradient.
    std::string role = "as the backward of input '" + input.name +
                       "' of custom op '" + decl.name + "'";
    if (op.inputs.size() != arity + 1)
      return error(entry) << "custom op '" << op.name << "' takes "
                          << op.inputs.size() << " inputs; " << role
                          << " it takes that op's " << arity
                          << " inputs and its output's gradient";
    for (unsigned position = 0; position <= arity; ++position) {
      bool gradient = position == arity;
      Type dtype = gradient ? decl.outputDtype : decl.inputs[position].dtype;
      int64_t rank = gradient ? static_cast<int64_t>(decl.outputShape.size())
                              : decl.inputs[position].rank;
      const CustomOpInput &declared = op.inputs[position];
      if (declared.dtype != dtype || declared.rank != rank)
        return error(entry)
               << "input '" << declared.name << "' of custom op '" << op.name
               << "' is " << formatDtype(declared.dtype) << " of rank "
               << declared.rank << "; " << role << " it must be "
               << (gradient ? std::string("the output's gradient")
                            : "input '" + decl.inputs[position].name + "'")
               << ", " << formatDtype(dtype) << " of rank " << rank;
    }
    if (op.outputDtype != input.dtype ||
        static_cast<int64_t>(op.outputShape.size()) != input.rank)
      return error(entry) << "custom op '" << op.name << "' gives "
                          << formatDtype(op.outputDtype) << " of rank "
                          << op.outputShape.size() << "; " << role
                          << " it gives the gradient of that input, "
                          << formatDtype(input.dtype) << " of rank "
                          << input.rank;
    backward.push_back(&op);
  }
  decl.backward = std::move(backward);
  return success();
}

LogicalResult DeclReader::read(const JsonNode &node, CustomOpDecl &decl) {
  decl.node = &node;
  if (failed(checkObject(node, {"name", "symbol", "inputs", "output",
                                "strategies", "backward"})))
    return failure();
  const JsonNode *name = require(node, "name");
  if (!name)
    return failure();
  FailureOr<std::string> text = readIdentifier(*name, "custom op name");
  if (failed(text))
    return failure();
  if (lookupOpDefinition(*text))
    return error(*name) << "custom op '" << *text
                        << "' has the name of a built-in op";
  decl.name = *text;
  const JsonNode *symbol = require(node, "symbol");
  if (!symbol)
    return failure();
  FailureOr<std::string> symbolText = readIdentifier(*symbol, "symbol");
  if (failed(symbolText))
    return failure();
  decl.symbol = *symbolText;
  const JsonNode *inputs = require(node, "inputs");
  if (!inputs || failed(readInputs(*inputs, decl)))
    return failure();
  const JsonNode *output = require(node, "output");
  if (!output || failed(readOutput(*output, decl)))
    return failure();
  if (const JsonNode *strategies = node.get("strategies"))
    if (failed(readStrategies(*strategies, decl)))
      return failure();
  unsigned arity = static_cast<unsigned>(decl.inputs.size());
  decl.definition = OpDefinition{decl.name, arity, arity, 1, nullptr};
  return success();
}

LogicalResult dtensor::frontend::readCustomOpDecls(
    const JsonNode &list, const JsonLocator &locator,
    std::vector<std::shared_ptr<const CustomOpDecl>> &decls) {
  DeclReader reader(locator);
  if (failed(reader.expectKind(list, JsonNode::Kind::Array)))
    return failure();
  std::vector<std::shared_ptr<CustomOpDecl>> read;
  for (const JsonNode &entry : list.elements) {
    auto decl = std::make_shared<CustomOpDecl>();
    if (failed(reader.read(entry, *decl)))
      return failure();
    for (const auto &other : read)
      if (other->name == decl->name) {
        InFlightDiagnostic diag = locator.emitError(*entry.get("name"))
                                  << "custom op '" << decl->name
                                  << "' is declared twice";
        diag.attachNote(locator.get(*other->node->get("name")))
            << "first declared here";
        return failure();
      }
    read.push_back(std::move(decl));
  }
  // A backward may name an op declared after it.
  for (const auto &decl : read)
    if (const JsonNode *backward = decl->node->get("backward"))
      if (failed(reader.linkBackward(*backward, *decl, read)))
        return failure();
  decls.insert(decls.end(), read.begin(), read.end());
  return success();
}

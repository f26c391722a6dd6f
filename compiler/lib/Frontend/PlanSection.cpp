//===- PlanSection.cpp - The plan section of a plan -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// `plan` (docs/model-plan.md): the styles' and the data-parallel mesh
// dims, context parallelism, the tensor-parallel styles of modules, raw
// placements of tensors and the local maps.
//
//===----------------------------------------------------------------------===//

#include "PlanSections.h"

#include "JsonReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

namespace {
/// Reads `plan`, emitting an error at the first problem of each piece.
class PlanSectionReader : public JsonReader {
public:
  using JsonReader::JsonReader;

  LogicalResult read(const JsonNode &node, ModelPlan &plan);

private:
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
  LogicalResult readContextParallel(const JsonNode &node, ModelPlan &plan);
  LogicalResult readFullyShard(const JsonNode &node, ModelPlan &plan);
  LogicalResult readStyle(const JsonNode &key, llvm::StringRef pattern,
                          const JsonNode &node, const ModelPlan &plan,
                          StyleDecl &style);
};
} // namespace

LogicalResult PlanSectionReader::read(const JsonNode &node, ModelPlan &plan) {
  plan.planNode = &node;
  if (failed(checkObject(node, {"mesh_dim", "data_parallel", "context_parallel",
                                "fully_shard", "styles", "placements",
                                "local_maps"})))
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
  // One mesh dim, or a list (HSDP: the replicate dims, then the shard dim).
  if (const JsonNode *dims = node.get("data_parallel")) {
    std::vector<const JsonNode *> entries;
    if (dims->kind == JsonNode::Kind::Array) {
      if (dims->elements.empty())
        return error(*dims) << "data_parallel lists no mesh dim";
      for (const JsonNode &entry : dims->elements)
        entries.push_back(&entry);
    } else {
      entries.push_back(dims);
    }
    for (const JsonNode *entry : entries) {
      FailureOr<int64_t> meshDim = readMeshDim(*entry, plan.mesh);
      if (failed(meshDim))
        return failure();
      if (plan.isDataParallelDim(*meshDim))
        return error(*entry) << "data_parallel lists mesh dim "
                             << plan.mesh.names[*meshDim] << " twice";
      plan.dataParallelDims.push_back(*meshDim);
    }
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
      if (plan.isDataParallelDim(style.meshDim))
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
  if (const JsonNode *units = node.get("fully_shard"))
    if (failed(readFullyShard(*units, plan)))
      return failure();
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

/// `fully_shard`: a list of module patterns over the data-parallel dim
/// (which no style may use: readStyle's callers check).
LogicalResult PlanSectionReader::readFullyShard(const JsonNode &node,
                                                ModelPlan &plan) {
  if (failed(expectKind(node, JsonNode::Kind::Array)))
    return failure();
  if (plan.dataParallelDims.empty())
    return error(node) << "fully_shard shards parameters over the "
                          "data-parallel mesh dim: give plan.data_parallel";
  FullyShardDecl decl;
  decl.node = &node;
  if (node.elements.empty())
    return error(node) << "fully_shard lists no module pattern (\"\" is the "
                          "root module)";
  for (const JsonNode &entry : node.elements) {
    FailureOr<std::string> pattern = readString(entry);
    if (failed(pattern))
      return failure();
    if (llvm::is_contained(decl.patterns, *pattern))
      return error(entry) << "fully_shard lists the pattern '" << *pattern
                          << "' twice";
    decl.patterns.push_back(*pattern);
    decl.patternNodes.push_back(&entry);
  }
  plan.fullyShard = std::move(decl);
  return success();
}

LogicalResult PlanSectionReader::readContextParallel(const JsonNode &node,
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
  if (plan.isDataParallelDim(cp.meshDim))
    return error(node.get("mesh_dim") ? *node.get("mesh_dim") : node)
           << "context parallelism over mesh dim "
           << plan.mesh.names[cp.meshDim] << ", which is the data-parallel dim";
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

LogicalResult PlanSectionReader::readStyle(const JsonNode &key,
                                           llvm::StringRef pattern,
                                           const JsonNode &node,
                                           const ModelPlan &plan,
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

FailureOr<PlacementAttr>
PlanSectionReader::readPlacement(const JsonNode &node) {
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
PlanSectionReader::readStyleLayouts(const JsonNode &node,
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

FailureOr<int64_t> PlanSectionReader::readMeshDim(const JsonNode &node,
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

FailureOr<SmallVector<PlacementAttr>>
PlanSectionReader::readMeshPlacements(const JsonNode &node,
                                      const MeshDecl &mesh) {
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

LogicalResult PlanSectionReader::readLocalMap(llvm::StringRef pattern,
                                              const JsonNode &node,
                                              const MeshDecl &mesh,
                                              LocalMapDecl &localMap) {
  localMap.pattern = pattern.str();
  localMap.node = &node;
  if (failed(checkObject(
          node, {"in_placements", "out_placements", "redistribute_inputs"})))
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
  if (failed(
          readList("in_placements", localMap.inPlacements, localMap.inNodes)) ||
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

LogicalResult dtensor::frontend::readPlanSection(const JsonNode &node,
                                                 const JsonLocator &locator,
                                                 ModelPlan &plan) {
  return PlanSectionReader(locator).read(node, plan);
}

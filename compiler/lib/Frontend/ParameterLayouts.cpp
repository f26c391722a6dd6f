//===- ParameterLayouts.cpp - Layouts of parameters and state -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The layouts of the function's arguments that the plan implies: the
// parameters that colwise/rowwise styles shard, the model inputs and
// parameters that local maps read, and the state (a KV cache follows the
// heads of the projection written into it).
//
// Grouped-query attention: a colwise key/value projection whose key/value
// heads the style's mesh dim does not divide is applied replicated (as vLLM
// replicates KV heads); the head count is known once the attention op is
// emitted, so such a plan is imported a second time (ImportJson.cpp).
//
//===----------------------------------------------------------------------===//

#include "FunctionImporter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

LogicalResult FunctionImporter::computeParameterLayouts(
    llvm::StringMap<ParameterLayout> &layouts) {
  llvm::StringMap<RankedTensorType> types;
  for (const TensorDecl &decl : plan.parameters)
    types[decl.name] = decl.type;

  auto setLayout = [&](llvm::StringRef name, int64_t meshDim,
                       PlacementAttr placement,
                       const StyledModule &styled) -> LogicalResult {
    RankedTensorType type = types.lookup(name);
    ParameterLayout &layout = layouts[name];
    SmallVector<PlacementAttr> placements =
        getDefaultPlacements(type.getRank(), /*activation=*/false);
    placements[meshDim] = placement;
    FailureOr<SmallVector<PlacementAttr>> normalized =
        normalizePlacements(placements, type.getRank(), *styled.style->node,
                            ("parameter '" + name + "'").str());
    if (failed(normalized))
      return failure();
    if (layout.source && layout.placements != *normalized) {
      InFlightDiagnostic diag = locator.emitError(*styled.style->node);
      diag << "parameter '" << name << "' of module '" << styled.path
           << "' gets " << getLayout(*normalized) << " from this style but "
           << getLayout(layout.placements) << " from another";
      diag.attachNote(locator.get(*layout.source)) << "the other style";
      return failure();
    }
    layout.placements = *normalized;
    layout.source = styled.style->node;
    return success();
  };

  for (const StyledModule &styled : tree.getStyledModules()) {
    const StyleDecl &style = *styled.style;
    if (style.kind != StyleDecl::Kind::Colwise &&
        style.kind != StyleDecl::Kind::Rowwise)
      continue;
    bool colwise = style.kind == StyleDecl::Kind::Colwise;
    bool replicate = isReplicatedProjection(styled);
    if (replicate) {
      const ReplicatedProjection &info = replicated.lookup(styled.path);
      InFlightDiagnostic remark = mlir::emitRemark(locator.get(*style.node));
      remark << "colwise module '" << styled.path
             << "' is applied replicated (its weight Replicate, its output "
                "computed whole on every device): it projects the "
             << info.heads << " key/value heads of a grouped-query "
             << "attention, which the " << info.devices
             << " devices of mesh dim '" << plan.mesh.names[style.meshDim]
             << "' do not divide";
      remark.attachNote(locator.get(*info.attention)) << "the attention";
    }
    for (unsigned index : styled.ops) {
      const OpDecl &op = plan.ops[index];
      if (!isShardableLeaf(op))
        continue;
      bool linear = op.definition->name == "linear";
      if (op.definition->name == "matmul") {
        // x @ weight[in, out]: colwise shards `out`, rowwise `in`.
        PlacementAttr placement =
            replicate ? PlacementAttr(ReplicateAttr::get(context))
                      : PlacementAttr(ShardAttr::get(context, colwise ? 1 : 0));
        if (failed(setLayout(op.inputs[1], style.meshDim, placement, styled)))
          return failure();
        continue;
      }
      for (size_t i = 1; i < op.inputs.size(); ++i) {
        if (!parameterNames.contains(op.inputs[i]))
          return locator.emitError(*op.inputNodes[i])
                 << stringifyStyleKind(style.kind) << " of module '"
                 << styled.path << "' shards the "
                 << (i == 1 ? "weight" : "bias") << " of '"
                 << op.definition->name << "', but '" << op.inputs[i]
                 << "' is not a parameter";
        // Linear weights are [out, in]; embedding tables [vocab, dim].
        int64_t dim;
        if (linear && i == 1)
          dim = colwise ? 0 : 1;
        else if (linear)
          dim = colwise ? 0 : -1; // -1: the rowwise bias is replicated
        else
          dim = colwise ? 1 : 0;
        PlacementAttr placement =
            dim < 0 || replicate ? PlacementAttr(ReplicateAttr::get(context))
                                 : PlacementAttr(ShardAttr::get(context, dim));
        if (failed(setLayout(op.inputs[i], style.meshDim, placement, styled)))
          return failure();
      }
    }
  }
  return addFullyShardLayouts(layouts);
}

LogicalResult FunctionImporter::addFullyShardLayouts(
    llvm::StringMap<ParameterLayout> &layouts) {
  if (!plan.fullyShard)
    return success();
  const FullyShardDecl &decl = *plan.fullyShard;
  // The units: the modules each pattern matches ("" the root), each module
  // one unit at most.
  llvm::SetVector<llvm::StringRef> paths = getModulePaths(plan);
  llvm::StringMap<const JsonNode *> units;
  for (auto [pattern, node] :
       llvm::zip_equal(decl.patterns, decl.patternNodes)) {
    SmallVector<llvm::StringRef> matched;
    if (pattern.empty())
      matched.push_back("");
    for (llvm::StringRef path : paths)
      if (!pattern.empty() && matchModulePattern(pattern, path))
        matched.push_back(path);
    if (matched.empty())
      return locator.emitError(*node)
             << "fully_shard pattern '" << pattern << "' matches no module";
    for (llvm::StringRef path : matched) {
      auto [it, inserted] = units.try_emplace(path, node);
      if (!inserted) {
        InFlightDiagnostic diag = locator.emitError(*node);
        diag << "module '" << path << "' is matched by two fully_shard "
             << "patterns";
        diag.attachNote(locator.get(*it->second)) << "the other pattern";
        return failure();
      }
    }
  }
  // A parameter belongs to the module of its name's prefix; one inside a
  // unit is sharded on dim 0 over the (last) data-parallel dim.
  int64_t meshDim = plan.dataParallelDims.back();
  for (const TensorDecl &parameter : plan.parameters) {
    llvm::StringRef name = parameter.name;
    llvm::StringRef owner = name.contains('.') ? name.rsplit('.').first : "";
    auto unit = llvm::find_if(units, [&](const auto &entry) {
      return moduleContains(entry.getKey(), owner);
    });
    int64_t rank = parameter.type.getRank();
    if (unit == units.end() || rank == 0)
      continue;
    ParameterLayout &layout = layouts[name];
    if (layout.placements.empty())
      layout.placements = getDefaultPlacements(rank, /*activation=*/false);
    if (!layout.source)
      layout.source = unit->getValue();
    layout.placements[meshDim] = ShardAttr::get(context, 0);
    layout.fullyShard = true;
  }
  return success();
}

void FunctionImporter::gatherFullyShardedParameters(
    llvm::ArrayRef<std::string> names, Location loc) {
  for (const std::string &name : names) {
    auto gather = fullyShardGathers.find(name);
    if (gather == fullyShardGathers.end())
      continue;
    Value sharded = values.lookup(name);
    values[name] =
        redistribute(sharded, claims.lookup(sharded), gather->second, loc);
    fullyShardGathers.erase(gather);
  }
}

void FunctionImporter::setLocalMapArgumentPlacements(
    llvm::StringMap<SmallVector<PlacementAttr>> &placements) const {
  llvm::StringMap<int64_t> ranks;
  for (const TensorDecl &decl : plan.inputs)
    ranks[decl.name] = decl.type.getRank();
  for (const TensorDecl &decl : plan.parameters)
    ranks[decl.name] = decl.type.getRank();
  for (const StyledModule &styled : tree.getStyledModules())
    for (unsigned index : styled.ops)
      for (const std::string &input : plan.ops[index].inputs)
        if (parameterNames.contains(input) && isShardableLeaf(plan.ops[index]))
          ranks.erase(input); // laid out by the style
  for (const LocalMapModule &localMap : localMaps)
    for (auto [name, given] :
         llvm::zip_equal(localMap.inputs, localMap.decl->inPlacements)) {
      auto rank = ranks.find(name);
      if (rank == ranks.end() || rawPlacements.count(name) ||
          placements.count(name))
        continue;
      // A shard dim out of range is reported where the local map claims it.
      SmallVector<PlacementAttr> normalized;
      for (PlacementAttr placement : given) {
        auto shard = dyn_cast<ShardAttr>(placement);
        int64_t r = rank->second;
        if (shard && (shard.getDim() < -r || shard.getDim() >= r)) {
          normalized.clear();
          break;
        }
        normalized.push_back(shard && shard.getDim() < 0
                                 ? ShardAttr::get(context, shard.getDim() + r,
                                                  shard.getHeadTail())
                                 : placement);
      }
      if (!normalized.empty())
        placements[name] = std::move(normalized);
    }
}

const StyledModule *
FunctionImporter::getColwiseProjection(llvm::StringRef name) const {
  static constexpr llvm::StringLiteral kMovers[] = {
      "view", "reshape", "transpose", "permute", "rotary", "index_select"};
  for (;;) {
    auto it = llvm::find_if(plan.ops, [&](const OpDecl &op) {
      return llvm::is_contained(op.outputs, name);
    });
    if (it == plan.ops.end())
      return nullptr;
    llvm::StringRef kind = it->definition->name;
    if (llvm::is_contained(kMovers, kind)) {
      name = it->inputs.front();
      continue;
    }
    // A KV cache holds the rows of the projection written into it.
    if (kind == "cache_write") {
      name = it->inputs[1];
      continue;
    }
    if (kind != "linear")
      return nullptr;
    unsigned index = it - plan.ops.begin();
    for (const StyledModule &styled : tree.getStyledModules())
      if (styled.style->kind == StyleDecl::Kind::Colwise &&
          llvm::is_contained(styled.ops, index))
        return &styled;
    return nullptr;
  }
}

SmallVector<PlacementAttr>
FunctionImporter::getStatePlacements(const TensorDecl &state) const {
  int64_t rank = state.type.getRank();
  SmallVector<PlacementAttr> placements =
      getDefaultPlacements(rank, /*activation=*/false);
  // A cache written by `cache_write` follows the heads of the projection
  // whose rows it holds: sharded on its dim 2 (the heads, or the features
  // of [S, M, F]) when the projection is colwise and its mesh dim divides
  // the heads, else replicated.
  llvm::StringSet<> versions;
  versions.insert(state.name);
  for (const OpDecl &op : plan.ops) {
    if (op.definition->name != "cache_write" ||
        !versions.contains(op.inputs.front()))
      continue;
    versions.insert(op.outputs.front());
    const StyledModule *styled = getColwiseProjection(op.inputs[1]);
    if (!styled || isReplicatedProjection(*styled) || rank < 3)
      return placements;
    // The linear's weight [out, in]: its rows must be the cache's
    // trailing dims, whole heads apart.
    const OpDecl &linear = plan.ops[styled->ops.front()];
    auto weight = llvm::find_if(plan.parameters, [&](const TensorDecl &d) {
      return d.name == linear.inputs[1];
    });
    if (weight == plan.parameters.end() || weight->type.getRank() != 2)
      return placements;
    ArrayRef<int64_t> shape = state.type.getShape();
    int64_t features = 1;
    for (int64_t size : shape.drop_front(2))
      features *= size;
    int64_t heads = shape[2];
    int64_t devices = plan.mesh.shape[styled->style->meshDim];
    if (features != weight->type.getDimSize(0) || heads % devices != 0)
      return placements;
    placements[styled->style->meshDim] = ShardAttr::get(context, 2);
    return placements;
  }
  return placements;
}

void FunctionImporter::findReplicatedProjections(const OpDecl &op,
                                                 int64_t heads) {
  // As vLLM: KV heads are sharded with the query heads when the devices
  // divide them, else every device computes all of them. A colwise split
  // of their features would cut heads apart, and the view to heads would
  // gather them on every step.
  for (unsigned i = 1; i < 3; ++i) {
    const StyledModule *styled = getColwiseProjection(op.inputs[i]);
    if (!styled)
      continue;
    int64_t devices = plan.mesh.shape[styled->style->meshDim];
    if (heads % devices == 0 || replicated.count(styled->path))
      continue;
    discovered[styled->path] = {heads, devices, op.node};
  }
}

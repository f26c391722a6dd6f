//===- BuildFunction.cpp - One entry's function: arguments, ops, results --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Builds the function of one entry: the mesh (once per module), the
// arguments (model inputs, then state, then parameters) with their layouts
// and names, then each op in order through its OpDefinition (or the local
// map that holds it), then the results: the model outputs, then the new
// value of each updated state tensor.
//
//===----------------------------------------------------------------------===//

#include "FunctionImporter.h"

#include "Ops/Formatting.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

LogicalResult FunctionImporter::run() {
  builder.setInsertionPointToEnd(module.getBody());
  // Entries share the mesh: the first import creates it.
  if (!module.lookupSymbol("mesh")) {
    const MeshDecl &mesh = plan.mesh;
    SmallVector<llvm::StringRef> names(mesh.names.begin(), mesh.names.end());
    MeshOp::create(builder, locator.get(*mesh.node), "mesh", mesh.shape,
                   builder.getStrArrayAttr(names), DenseI64ArrayAttr());
  }
  meshRef = FlatSymbolRefAttr::get(context, "mesh");

  for (const TensorDecl &decl : plan.parameters)
    parameterNames.insert(decl.name);
  llvm::StringSet<> stateNames;
  for (const TensorDecl &decl : plan.state)
    stateNames.insert(decl.name);
  llvm::StringSet<> known = parameterNames;
  for (const TensorDecl &decl : plan.inputs)
    known.insert(decl.name);
  for (const TensorDecl &decl : plan.state)
    known.insert(decl.name);
  for (const OpDecl &op : plan.ops)
    for (const std::string &output : op.outputs)
      known.insert(output);
  for (const PlacementDecl &decl : plan.placements) {
    if (!known.contains(decl.tensor))
      return locator.emitError(*decl.node)
             << "placements for unknown tensor '" << decl.tensor << "'";
    rawPlacements[decl.tensor] = &decl;
  }
  if (failed(checkStyledModules()))
    return failure();
  llvm::StringMap<ParameterLayout> parameterLayouts;
  if (failed(computeParameterLayouts(parameterLayouts)))
    return failure();
  FailureOr<std::vector<LocalMapModule>> found = findLocalMaps(plan, locator);
  if (failed(found))
    return failure();
  localMaps = std::move(*found);
  llvm::StringMap<SmallVector<PlacementAttr>> localMapPlacements;
  setLocalMapArgumentPlacements(localMapPlacements);

  // The function: model inputs, then state, then parameters.
  SmallVector<const TensorDecl *> arguments;
  SmallVector<Type> argumentTypes;
  for (const TensorDecl &decl : plan.inputs)
    arguments.push_back(&decl);
  for (const TensorDecl &decl : plan.state)
    arguments.push_back(&decl);
  for (const TensorDecl &decl : plan.parameters)
    arguments.push_back(&decl);
  for (const TensorDecl *decl : arguments)
    argumentTypes.push_back(decl->type);
  auto func = func::FuncOp::create(
      builder,
      locator.get(plan.ops.empty() ? *plan.outputNodes.front()
                                   : *plan.ops.front().node),
      plan.name, builder.getFunctionType(argumentTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);

  llvm::StringMap<unsigned> stateArguments;
  for (auto [index, decl] : llvm::enumerate(arguments)) {
    bool parameter = parameterNames.contains(decl->name);
    bool state = stateNames.contains(decl->name);
    int64_t rank = decl->type.getRank();
    SmallVector<PlacementAttr> placements =
        getDefaultPlacements(rank, /*activation=*/!parameter && !state);
    if (parameter && parameterLayouts.count(decl->name))
      placements = parameterLayouts[decl->name].placements;
    else if (!state && localMapPlacements.count(decl->name))
      placements = localMapPlacements[decl->name];
    if (state)
      placements = getStatePlacements(*decl);
    if (const PlacementDecl *raw = rawPlacements.lookup(decl->name)) {
      FailureOr<SmallVector<PlacementAttr>> normalized = normalizePlacements(
          raw->placements, rank, *raw->node,
          (parameter ? "parameter '" : (state ? "state '" : "input '")) +
              decl->name + "'");
      if (failed(normalized))
        return failure();
      placements = *normalized;
    }
    LayoutAttr layout = getLayout(placements);
    // A unit's parameter (unless its placements are given): gathered over
    // the data-parallel dim where it is first read.
    if (parameter && !rawPlacements.count(decl->name) &&
        parameterLayouts.count(decl->name) &&
        parameterLayouts[decl->name].fullyShard) {
      SmallVector<PlacementAttr> gathered(placements);
      gathered[plan.dataParallelDims.back()] = ReplicateAttr::get(context);
      fullyShardGathers[decl->name] = getLayout(gathered);
    }
    func.setArgAttr(index, DTensorDialect::getLayoutAttrName(), layout);
    func.setArgAttr(index, DTensorDialect::getNameAttrName(),
                    builder.getStringAttr(decl->name));
    if (parameter)
      func.setArgAttr(index, DTensorDialect::getWeightAttrName(),
                      builder.getUnitAttr());
    if (state) {
      func.setArgAttr(index, DTensorDialect::getStateAttrName(),
                      builder.getUnitAttr());
      stateArguments[decl->name] = index;
    }
    if (decl->init)
      func.setArgAttr(index, DTensorDialect::getInitAttrName(), decl->init);
    Value argument = body->getArgument(index);
    argument.setLoc(locator.get(*decl->node));
    claims[argument] = layout;
    values[decl->name] = argument;
  }

  for (unsigned index = 0; index < plan.ops.size(); ++index) {
    auto localMap = llvm::find_if(localMaps, [&](const LocalMapModule &m) {
      return m.ops.front() == index;
    });
    if (localMap == localMaps.end()) {
      if (failed(emitOp(plan.ops[index])))
        return failure();
      continue;
    }
    if (failed(emitLocalMapModule(*localMap)))
      return failure();
    index = localMap->ops.back();
  }

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const std::string &name : plan.outputs) {
    FailureOr<Value> value = getValueFor(name, std::nullopt);
    if (failed(value))
      return failure();
    results.push_back(*value);
    resultTypes.push_back(value->getType());
  }
  // Then the new value of each updated state tensor, in its layout.
  SmallVector<std::pair<unsigned, LayoutAttr>> updateResults;
  for (const StateUpdate &update : plan.updates) {
    FailureOr<Value> value = getValueFor(update.value, std::nullopt);
    if (failed(value))
      return failure();
    unsigned argument = stateArguments.lookup(update.state);
    Type stateType = argumentTypes[argument];
    if (value->getType() != stateType)
      return locator.emitError(*update.node)
             << "the new value of state '" << update.state << "' is "
             << value->getType() << ", but the state is " << stateType;
    auto layout = func.getArgAttrOfType<LayoutAttr>(
        argument, DTensorDialect::getLayoutAttrName());
    results.push_back(*value);
    resultTypes.push_back(stateType);
    updateResults.emplace_back(argument, layout);
  }
  func::ReturnOp::create(builder, locator.get(*plan.outputNodes.front()),
                         results);
  func.setType(builder.getFunctionType(argumentTypes, resultTypes));
  for (auto [index, name] : llvm::enumerate(plan.outputs)) {
    int64_t rank = cast<RankedTensorType>(resultTypes[index]).getRank();
    SmallVector<PlacementAttr> placements =
        getDefaultPlacements(rank, /*activation=*/true);
    if (const PlacementDecl *raw = rawPlacements.lookup(name)) {
      FailureOr<SmallVector<PlacementAttr>> normalized = normalizePlacements(
          raw->placements, rank, *raw->node, "output '" + name + "'");
      if (failed(normalized))
        return failure();
      placements = *normalized;
    }
    func.setResultAttr(index, DTensorDialect::getLayoutAttrName(),
                       getLayout(placements));
    func.setResultAttr(index, DTensorDialect::getNameAttrName(),
                       builder.getStringAttr(name));
  }
  for (auto [i, update] : llvm::enumerate(updateResults)) {
    unsigned index = plan.outputs.size() + i;
    func.setResultAttr(index, DTensorDialect::getUpdatesAttrName(),
                       builder.getI64IntegerAttr(update.first));
    func.setResultAttr(index, DTensorDialect::getLayoutAttrName(),
                       update.second);
  }
  return success();
}

LogicalResult FunctionImporter::emitOp(const OpDecl &op) {
  gatherFullyShardedParameters(op.inputs, getOpLocation(op.module, *op.node));
  SmallVector<Value> inputs;
  for (const std::string &name : op.inputs) {
    FailureOr<Value> value = getValueFor(name, llvm::StringRef(op.module));
    if (failed(value))
      return failure();
    inputs.push_back(*value);
  }
  Location loc = getOpLocation(op.module, *op.node);
  // Context parallelism: the rank keeps its queries (sequence-sharded) and
  // attends to the keys and values of every rank, gathered over the
  // context-parallel mesh dim; their sequence is dim -2 ([..., S, E]).
  if (plan.contextParallel &&
      op.definition->name == "scaled_dot_product_attention")
    if (const JsonNode *positions = op.node->get("query_positions");
        positions && positions->kind == JsonNode::Kind::Bool &&
        positions->boolean) {
      InFlightDiagnostic diag = locator.emitError(*positions);
      diag << "context parallelism shards the keys' sequence over mesh dim "
           << plan.mesh.names[plan.contextParallel->meshDim]
           << "; attention over a KV cache (query_positions) reads the "
              "cache's rows by slot and position, which is not supported "
              "with it";
      diag.attachNote(locator.get(*plan.contextParallel->node))
          << "context parallelism is set here";
      return failure();
    }
  if (plan.contextParallel &&
      op.definition->name == "scaled_dot_product_attention" &&
      inputs.size() >= 3 &&
      llvm::all_of(ArrayRef<Value>(inputs).take_front(3), [](Value v) {
        return cast<RankedTensorType>(v.getType()).getRank() >= 2;
      })) {
    for (unsigned i = 0; i < 3; ++i) {
      int64_t rank = cast<RankedTensorType>(inputs[i].getType()).getRank();
      inputs[i] = claimSequence(inputs[i], rank - 2, /*gather=*/i > 0, loc);
    }
  }
  OpEmitter emitter(builder, loc, *op.node, inputs, op.inputNodes,
                    op.outputs.size(), locator);
  FailureOr<SmallVector<Value>> results = emitPlanOp(op, emitter, locator);
  if (failed(results))
    return failure();
  // A result too large to be addressed (expand, full, a product of large
  // inputs) is refused here, naming it, rather than by the manifest.
  for (auto [name, result] : llvm::zip(op.outputs, *results)) {
    auto type = cast<RankedTensorType>(result.getType());
    if (!getTensorBytes(type))
      return locator.emitError(*op.node)
             << "output '" << name << "' of " << op.definition->name
             << " has shape " << ops::formatShape(type.getShape())
             << " and dtype " << ops::formatDtype(type.getElementType())
             << ": more bytes than an int64 holds";
  }
  for (auto [name, result] : llvm::zip(op.outputs, *results)) {
    FailureOr<Value> claimed = claimPlacementsEntry(name, result, loc);
    if (failed(claimed))
      return failure();
    values[name] = *claimed;
  }
  if (op.definition->name == "scaled_dot_product_attention") {
    const JsonNode *gqa = op.node->get("enable_gqa");
    auto query = cast<RankedTensorType>(inputs[0].getType());
    auto key = cast<RankedTensorType>(inputs[1].getType());
    // With as many KV heads as query heads, k and v split as q does.
    if (gqa && gqa->kind == JsonNode::Kind::Bool && gqa->boolean &&
        key.getDimSize(key.getRank() - 3) !=
            query.getDimSize(query.getRank() - 3))
      findReplicatedProjections(op, key.getDimSize(key.getRank() - 3));
  }
  return success();
}

LogicalResult
FunctionImporter::emitLocalMapModule(const LocalMapModule &localMap) {
  const LocalMapDecl &decl = *localMap.decl;
  gatherFullyShardedParameters(localMap.inputs,
                               getOpLocation(localMap.path, *decl.node));
  SmallVector<Value> inputs;
  SmallVector<LayoutAttr> layouts;
  for (auto [index, name] : llvm::enumerate(localMap.inputs)) {
    FailureOr<Value> value = getValueFor(name, llvm::StringRef(localMap.path));
    if (failed(value))
      return failure();
    const JsonNode &at = *decl.inNodes[index];
    int64_t rank = cast<RankedTensorType>(value->getType()).getRank();
    std::string what =
        "input '" + name + "' of local map '" + localMap.path + "'";
    FailureOr<SmallVector<PlacementAttr>> placements =
        normalizePlacements(decl.inPlacements[index], rank, at, what);
    if (failed(placements))
      return failure();
    LayoutAttr layout = getLayout(*placements);
    Location loc = getOpLocation(localMap.path, at);
    auto claimed = claims.find(*value);
    if (claimed != claims.end() && claimed->second != layout &&
        !decl.redistributeInputs)
      return locator.emitError(at)
             << what << " is laid out as " << claimed->second
             << ", but in_placements gives " << layout
             << "; set redistribute_inputs to redistribute it";
    inputs.push_back(decl.redistributeInputs ? request(*value, layout, loc)
                                             : claim(*value, layout, loc));
    layouts.push_back(layout);
  }
  FailureOr<SmallVector<Value>> results =
      emitLocalMap(builder, plan, localMap, inputs, layouts, meshRef, locator);
  if (failed(results))
    return failure();
  Location loc = getOpLocation(localMap.path, *decl.node);
  for (auto [name, result] : llvm::zip_equal(localMap.outputs, *results)) {
    Value value = result;
    auto layout = cast<LayoutAttr>(
        cast<LocalMapOp>(result.getDefiningOp())
            .getOutLayouts()[cast<OpResult>(result).getResultNumber()]);
    claims[value] = layout;
    FailureOr<Value> claimed = claimPlacementsEntry(name, value, loc);
    if (failed(claimed))
      return failure();
    values[name] = *claimed;
  }
  return success();
}

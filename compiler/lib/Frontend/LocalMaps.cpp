//===- LocalMaps.cpp - Modules of a plan that run on local shards ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "LocalMaps.h"

#include "EmitPlanOp.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"


using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

//===----------------------------------------------------------------------===//
// Finding the modules
//===----------------------------------------------------------------------===//

/// Fills the ops, inputs and outputs of `localMap` and checks them.
static LogicalResult collectModule(const ModelPlan &plan,
                                   LocalMapModule &localMap,
                                   const JsonLocator &locator) {
  llvm::StringMap<std::string> definer;
  for (const OpDecl &op : plan.ops)
    for (const std::string &output : op.outputs)
      definer[output] = op.module;
  auto inside = [&](llvm::StringRef value) {
    auto it = definer.find(value);
    return it != definer.end() && moduleContains(localMap.path, it->second);
  };
  for (auto [index, op] : llvm::enumerate(plan.ops))
    if (moduleContains(localMap.path, op.module))
      localMap.ops.push_back(index);
  for (unsigned index = localMap.ops.front(); index < localMap.ops.back();
       ++index)
    if (!moduleContains(localMap.path, plan.ops[index].module))
      return locator.emitError(*plan.ops[index].node)
             << "this op of module '" << plan.ops[index].module
             << "' is between the ops of local map '" << localMap.path
             << "'; a local map's ops must be consecutive";

  llvm::StringSet<> readOutside;
  for (const std::string &output : plan.outputs)
    readOutside.insert(output);
  for (const StateUpdate &update : plan.updates)
    readOutside.insert(update.value);
  for (const OpDecl &op : plan.ops)
    if (!moduleContains(localMap.path, op.module))
      for (const std::string &input : op.inputs)
        readOutside.insert(input);
  llvm::SetVector<llvm::StringRef> inputs;
  for (unsigned index : localMap.ops) {
    const OpDecl &op = plan.ops[index];
    for (const std::string &input : op.inputs)
      if (!inside(input))
        inputs.insert(input);
    for (const std::string &output : op.outputs)
      if (readOutside.contains(output))
        localMap.outputs.push_back(output);
  }
  for (llvm::StringRef input : inputs)
    localMap.inputs.push_back(input.str());

  const LocalMapDecl &decl = *localMap.decl;
  auto checkCount = [&](llvm::StringRef key, size_t given,
                        llvm::ArrayRef<std::string> names,
                        llvm::StringRef what) -> LogicalResult {
    if (given == names.size())
      return success();
    InFlightDiagnostic diag = locator.emitError(*decl.node->get(key));
    diag << "local map '" << localMap.path << "' has " << names.size() << " "
         << what << "(s)";
    if (!names.empty())
      diag << " (" << llvm::join(names, ", ") << ")";
    diag << " but " << key << " gives " << given;
    return diag;
  };
  if (failed(checkCount("in_placements", decl.inPlacements.size(),
                        localMap.inputs, "input")) ||
      failed(checkCount("out_placements", decl.outPlacements.size(),
                        localMap.outputs, "output")))
    return failure();
  if (localMap.outputs.empty())
    return locator.emitError(*decl.node)
           << "local map '" << localMap.path
           << "' has no output: nothing outside it reads its values";

  for (const PlacementDecl &placement : plan.placements)
    if (inside(placement.tensor) &&
        !llvm::is_contained(localMap.outputs, placement.tensor))
      return locator.emitError(*placement.node)
             << "'" << placement.tensor << "' is a value inside local map '"
             << localMap.path
             << "', whose ops run on local pieces: it has no layout";
  return success();
}

FailureOr<std::vector<LocalMapModule>>
dtensor::frontend::findLocalMaps(const ModelPlan &plan,
                                 const JsonLocator &locator) {
  std::vector<LocalMapModule> result;
  if (plan.localMaps.empty())
    return result;
  llvm::SetVector<llvm::StringRef> paths = getModulePaths(plan);
  for (const LocalMapDecl &decl : plan.localMaps) {
    bool matched = false;
    for (llvm::StringRef path : paths) {
      if (!matchModulePattern(decl.pattern, path))
        continue;
      matched = true;
      for (const LocalMapModule &other : result)
        if (moduleContains(other.path, path) ||
            moduleContains(path, other.path)) {
          InFlightDiagnostic diag = locator.emitError(*decl.node);
          diag << "local maps '" << other.path << "' and '" << path
               << "' overlap; a local map holds no other";
          diag.attachNote(locator.get(*other.decl->node))
              << "the other local map";
          return diag;
        }
      LocalMapModule &localMap = result.emplace_back();
      localMap.path = path.str();
      localMap.decl = &decl;
    }
    // Unlike a style, a local map's ops are written for local pieces: left
    // unmatched they would run on whole tensors.
    if (!matched)
      return locator.emitError(*decl.node)
             << "pattern '" << decl.pattern << "' matches no module";
  }
  for (LocalMapModule &localMap : result)
    if (failed(collectModule(plan, localMap, locator)))
      return failure();
  for (const StyleDecl &style : plan.styles)
    for (llvm::StringRef path : paths)
      for (const LocalMapModule &localMap : result)
        if (matchModulePattern(style.pattern, path) &&
            moduleContains(localMap.path, path))
          return locator.emitError(*style.node)
                 << "style for module '" << path << "', which is local map '"
                 << localMap.path
                 << "' or inside it: its ops run on local pieces, which "
                    "styles do not lay out";
  return result;
}

//===----------------------------------------------------------------------===//
// Building the op
//===----------------------------------------------------------------------===//


/// Emits the module's ops on `args` (static pieces of its inputs) and
/// returns its outputs.
static FailureOr<SmallVector<Value>>
emitBody(OpBuilder &builder, const ModelPlan &plan,
         const LocalMapModule &localMap, ValueRange args,
         const JsonLocator &locator) {
  llvm::StringMap<Value> scope;
  for (auto [name, arg] : llvm::zip_equal(localMap.inputs, args))
    scope[name] = arg;
  for (unsigned index : localMap.ops) {
    const OpDecl &op = plan.ops[index];
    SmallVector<Value> inputs;
    for (const std::string &name : op.inputs)
      inputs.push_back(scope.lookup(name));
    OpEmitter emitter(builder, getPlanLocation(op.module, *op.node, locator),
                      *op.node, inputs, op.inputNodes, op.outputs.size(),
                      locator);
    FailureOr<SmallVector<Value>> results = emitPlanOp(op, emitter, locator);
    if (failed(results))
      return failure();
    for (auto [name, value] : llvm::zip_equal(op.outputs, *results))
      scope[name] = value;
  }
  SmallVector<Value> outputs;
  for (const std::string &name : localMap.outputs)
    outputs.push_back(scope.lookup(name));
  return outputs;
}

static RankedTensorType toType(llvm::ArrayRef<int64_t> shape, Type element) {
  SmallVector<int64_t> sizes;
  for (int64_t size : shape)
    sizes.push_back(size == layout::kDynamic ? ShapedType::kDynamic : size);
  return RankedTensorType::get(sizes, element);
}

static std::string describeRanks(llvm::ArrayRef<int64_t> ranks) {
  std::string text;
  for (int64_t rank : ranks)
    text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return (ranks.size() == 1 ? "rank " : "ranks ") + text;
}

namespace {
/// The ranks whose local input shapes are the same.
struct ShapeClass {
  std::vector<std::vector<int64_t>> shapes;
  SmallVector<int64_t> ranks;
};
} // namespace

FailureOr<SmallVector<Value>> dtensor::frontend::emitLocalMap(
    OpBuilder &builder, const ModelPlan &plan, const LocalMapModule &localMap,
    ValueRange inputs, ArrayRef<LayoutAttr> inLayouts,
    FlatSymbolRefAttr meshRef, const JsonLocator &locator) {
  MLIRContext *context = builder.getContext();
  const LocalMapDecl &decl = *localMap.decl;
  Location loc = getPlanLocation(localMap.path, *decl.node, locator);
  layout::Mesh mesh(
      std::vector<int64_t>(plan.mesh.shape.begin(), plan.mesh.shape.end()));

  // The shape classes: positions (row-major, the rank when the mesh holds
  // ranks in order) grouped by the local shapes of the inputs.
  std::vector<std::vector<int64_t>> globalShapes;
  std::vector<std::vector<layout::Placement>> inPlacements;
  for (auto [input, layoutAttr] : llvm::zip_equal(inputs, inLayouts)) {
    auto type = cast<RankedTensorType>(input.getType());
    globalShapes.emplace_back(type.getShape().begin(), type.getShape().end());
    inPlacements.push_back(layoutAttr.getLayoutPlacements());
  }
  std::vector<ShapeClass> classes;
  std::vector<unsigned> classOf;
  for (int64_t position = 0; position < mesh.size(); ++position) {
    std::vector<int64_t> coord = mesh.coordOfIndex(position);
    std::vector<std::vector<int64_t>> shapes;
    for (auto [shape, placements] : llvm::zip_equal(globalShapes, inPlacements))
      shapes.push_back(layout::localShard(shape, placements, mesh, coord).shape);
    auto it = llvm::find_if(
        classes, [&](const ShapeClass &c) { return c.shapes == shapes; });
    if (it == classes.end()) {
      classes.push_back({std::move(shapes), {}});
      it = std::prev(classes.end());
    }
    it->ranks.push_back(position);
    classOf.push_back(it - classes.begin());
  }

  // The body is built inside a result-less local map (ops are built in
  // blocks that belong to an op), which the finished one takes over.
  SmallVector<Attribute> inLayoutAttrs(inLayouts.begin(), inLayouts.end());
  auto holder = LocalMapOp::create(builder, loc, TypeRange(), inputs,
                                   builder.getArrayAttr(inLayoutAttrs),
                                   builder.getArrayAttr({}),
                                   decl.redistributeInputs);
  llvm::scope_exit eraseHolder([&] {
    if (holder)
      holder->erase();
  });
  Block *entry = new Block();
  holder.getBody().push_back(entry);
  for (auto [input, shape, placements] :
       llvm::zip_equal(inputs, globalShapes, inPlacements)) {
    auto type = cast<RankedTensorType>(input.getType());
    entry->addArgument(
        toType(layout::localShapeType(shape, placements, mesh),
               type.getElementType()),
        input.getLoc());
  }

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(entry);
  bool switched = classes.size() > 1;
  unsigned last = classes.size() - 1;
  scf::IndexSwitchOp cases;
  if (switched) {
    // The rank's class, from its position in the mesh.
    SmallVector<Type> indexTypes(mesh.rank(), builder.getIndexType());
    SmallVector<int64_t> allDims;
    for (int64_t dim = 0; dim < mesh.rank(); ++dim)
      allDims.push_back(dim);
    auto coords = MeshCoordOp::create(builder, loc, indexTypes,
                                      meshRef.getValue(), allDims);
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(builder, loc, value);
    };
    Value position = constant(0);
    for (int64_t dim = 0; dim < mesh.rank(); ++dim) {
      Value scaled = arith::MulIOp::create(builder, loc, position,
                                           constant(mesh.dimSize(dim)));
      position = arith::AddIOp::create(builder, loc, scaled,
                                       coords.getCoords()[dim]);
    }
    Value classIndex = constant(last);
    for (int64_t p = mesh.size() - 1; p >= 0; --p) {
      if (classOf[p] == last)
        continue;
      Value here = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                         position, constant(p));
      classIndex = arith::SelectOp::create(builder, loc, here,
                                           constant(classOf[p]), classIndex);
    }
    SmallVector<int64_t> caseValues;
    for (unsigned k = 0; k < last; ++k)
      caseValues.push_back(k);
    cases = scf::IndexSwitchOp::create(builder, loc, TypeRange(), classIndex,
                                       caseValues, caseValues.size());
  }
  auto caseRegion = [&](unsigned k) -> Region & {
    return k < last ? cases.getCaseRegions()[k] : cases.getDefaultRegion();
  };

  std::vector<SmallVector<Value>> classOutputs;
  for (auto [k, shapeClass] : llvm::enumerate(classes)) {
    if (switched)
      builder.setInsertionPointToEnd(&caseRegion(k).emplaceBlock());
    SmallVector<Value> args;
    for (auto [arg, shape] :
         llvm::zip_equal(entry->getArguments(), shapeClass.shapes)) {
      auto type = cast<RankedTensorType>(arg.getType());
      RankedTensorType piece = toType(shape, type.getElementType());
      args.push_back(piece == type ? Value(arg)
                                   : tensor::CastOp::create(builder, loc,
                                                            piece, arg)
                                         .getResult());
    }
    // An error that only some ranks' shapes cause names them.
    ScopedDiagnosticHandler noteRanks(context, [&](Diagnostic &diag) {
      if (mesh.size() > 1 && diag.getSeverity() == DiagnosticSeverity::Error) {
        Diagnostic &note = diag.attachNote(locator.get(*decl.node));
        note << "in local map '" << localMap.path << "' as "
             << describeRanks(shapeClass.ranks) << " see it";
        for (auto [name, arg] : llvm::zip_equal(localMap.inputs, args))
          note << ", '" << name << "' " << arg.getType();
      }
      return failure();
    });
    FailureOr<SmallVector<Value>> outputs =
        emitBody(builder, plan, localMap, args, locator);
    if (failed(outputs))
      return failure();
    classOutputs.push_back(std::move(*outputs));
  }

  // Each output's layout, and the global shape its pieces form.
  SmallVector<Attribute> outLayouts;
  SmallVector<Type> globalTypes, localTypes;
  for (auto [index, name] : llvm::enumerate(localMap.outputs)) {
    auto first = cast<RankedTensorType>(classOutputs.front()[index].getType());
    int64_t rank = first.getRank();
    const JsonNode &at = *decl.outNodes[index];
    std::string what =
        "output '" + name + "' of local map '" + localMap.path + "'";
    SmallVector<PlacementAttr> placements;
    for (PlacementAttr placement : decl.outPlacements[index]) {
      if (auto shard = dyn_cast<ShardAttr>(placement)) {
        int64_t dim = shard.getDim();
        if (dim < -rank || dim >= rank)
          return locator.emitError(at)
                 << "Shard(" << dim << ") is out of range for " << what
                 << " of rank " << rank;
        placement = ShardAttr::get(context, dim < 0 ? dim + rank : dim,
                                   shard.getHeadTail());
      }
      placements.push_back(placement);
    }
    auto layoutAttr = LayoutAttr::get(context, meshRef, placements);
    std::vector<layout::Placement> normalized =
        layoutAttr.getLayoutPlacements();
    auto sizeAt = [&](int64_t position, int64_t dim) {
      return cast<RankedTensorType>(
                 classOutputs[classOf[position]][index].getType())
          .getDimSize(dim);
    };
    std::vector<int64_t> globalShape;
    for (int64_t dim = 0; dim < rank; ++dim) {
      std::vector<int64_t> meshDims = layout::shardingMeshDims(normalized, dim);
      if (meshDims.empty()) {
        for (int64_t position = 1; position < mesh.size(); ++position)
          if (sizeAt(position, dim) != sizeAt(0, dim))
            return locator.emitError(at)
                   << what << ": its dim " << dim << " has size "
                   << sizeAt(0, dim) << " on rank 0 but "
                   << sizeAt(position, dim) << " on rank " << position
                   << ", and out_placements do not shard it";
        globalShape.push_back(sizeAt(0, dim));
        continue;
      }
      // The pieces of one group tile the dim; every rank's piece must be
      // the one torch.chunk gives it of their total.
      int64_t total = 0;
      for (const std::vector<int64_t> &member :
           mesh.groupMembers(meshDims, mesh.coordOfIndex(0)))
        total += sizeAt(mesh.indexOfCoord(member), dim);
      for (int64_t position = 0; position < mesh.size(); ++position) {
        int64_t expected =
            layout::shardRange(total, mesh, meshDims,
                               mesh.coordOfIndex(position))
                .size();
        if (sizeAt(position, dim) != expected)
          return locator.emitError(at)
                 << what << ": rank " << position << " holds "
                 << sizeAt(position, dim) << " of its dim " << dim
                 << ", but " << layout::str(normalized) << " of the "
                 << total << " its ranks hold together gives it " << expected
                 << " (torch.chunk pieces); the pieces form no global tensor";
      }
      globalShape.push_back(total);
    }
    outLayouts.push_back(layoutAttr);
    globalTypes.push_back(toType(globalShape, first.getElementType()));
    localTypes.push_back(
        toType(layout::localShapeType(globalShape, normalized, mesh),
               first.getElementType()));
  }

  SmallVector<Value> yielded = classOutputs.front();
  builder.setInsertionPointToEnd(entry);
  if (switched) {
    builder.setInsertionPoint(cases);
    auto typed = scf::IndexSwitchOp::create(builder, loc, localTypes,
                                            cases.getArg(), cases.getCases(),
                                            cases.getNumCases());
    for (unsigned k = 0; k <= last; ++k) {
      Region &region =
          k < last ? typed.getCaseRegions()[k] : typed.getDefaultRegion();
      region.takeBody(caseRegion(k));
      OpBuilder caseBuilder = OpBuilder::atBlockEnd(&region.front());
      SmallVector<Value> results;
      for (auto [value, type] : llvm::zip_equal(classOutputs[k], localTypes))
        results.push_back(value.getType() == type
                              ? value
                              : tensor::CastOp::create(caseBuilder, loc, type,
                                                       value)
                                    .getResult());
      scf::YieldOp::create(caseBuilder, loc, results);
    }
    cases->erase();
    yielded.assign(typed.getResults().begin(), typed.getResults().end());
    builder.setInsertionPointToEnd(entry);
  }
  YieldOp::create(builder, loc, yielded);

  builder.setInsertionPoint(holder);
  auto op = LocalMapOp::create(
      builder, loc, globalTypes, inputs, builder.getArrayAttr(inLayoutAttrs),
      builder.getArrayAttr(outLayouts), decl.redistributeInputs);
  op.getBody().takeBody(holder.getBody());
  return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
}

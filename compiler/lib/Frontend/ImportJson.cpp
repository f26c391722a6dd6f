//===- ImportJson.cpp - JSON model plan to global IR ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Walks the plan's ops in order, emitting each through its OpDefinition.
// Values cross module boundaries through the styles of the modules they
// leave and enter: a module output takes the output layouts of every styled
// module it leaves (innermost first), a module input the input layouts of
// every styled module it enters (outermost first). Both are emitted lazily,
// where a reader needs them, so a layout nobody reads constrains nothing.
//
// Grouped-query attention: a colwise key/value projection whose key/value
// heads the style's mesh dim does not divide is applied replicated (as vLLM
// replicates KV heads); the head count is known once the attention op is
// emitted, so such a plan is imported a second time.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Frontend/ImportJson.h"

#include "EmitPlanOp.h"
#include "LocalMaps.h"
#include "ModuleTree.h"
#include "Ops/Formatting.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Frontend/CustomOpDecls.h"
#include "dtensor/Frontend/ModelPlan.h"
#include "dtensor/Frontend/PlanEntries.h"
#include "dtensor/InitAllDialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

namespace {

/// Where one parameter's layout came from, for conflict messages.
struct ParameterLayout {
  SmallVector<PlacementAttr> placements;
  const JsonNode *source = nullptr;
};

/// A colwise key/value projection of grouped-query attention applied
/// replicated: its module's heads, the devices of the style's mesh dim,
/// and the attention op.
struct ReplicatedProjection {
  int64_t heads = 0;
  int64_t devices = 0;
  const JsonNode *attention = nullptr;
};
using ReplicatedProjections = llvm::StringMap<ReplicatedProjection>;

class Importer {
public:
  Importer(const ModelPlan &plan, const ModuleTree &tree,
           const JsonLocator &locator, ModuleOp module,
           const ReplicatedProjections &replicated)
      : plan(plan), tree(tree), locator(locator), module(module),
        context(module.getContext()), builder(context),
        replicated(replicated) {}

  LogicalResult run();

  /// Projections this import found to replicate that it did not know of:
  /// when there are any, the plan must be imported again with them.
  const ReplicatedProjections &getDiscovered() const { return discovered; }

private:
  const ModelPlan &plan;
  const ModuleTree &tree;
  const JsonLocator &locator;
  ModuleOp module;
  MLIRContext *context;
  OpBuilder builder;
  FlatSymbolRefAttr meshRef;
  const ReplicatedProjections &replicated;
  ReplicatedProjections discovered;

  /// The value each name has where it is defined (after its raw-placement
  /// claim, if any).
  llvm::StringMap<Value> values;
  /// The layout each value is claimed to have.
  DenseMap<Value, LayoutAttr> claims;
  /// Values after the output styles of the innermost `n` modules they
  /// leave: key (name, n).
  std::map<std::pair<std::string, unsigned>, Value> outputStages;
  /// Values after the input style of a module: key (module path, name).
  std::map<std::pair<std::string, std::string>, Value> inputStages;
  llvm::StringSet<> parameterNames;
  llvm::StringMap<const PlacementDecl *> rawPlacements;
  /// Context parallelism: each value claimed sequence-sharded, and gathered,
  /// for attention; attentions reading one value share them, so k and v are
  /// gathered once however many attentions read them.
  DenseMap<Value, Value> sequenceClaims, sequenceGathers;
  std::vector<LocalMapModule> localMaps;

  Location getOpLocation(llvm::StringRef module, const JsonNode &node) const {
    return getPlanLocation(module, node, locator);
  }

  /// The layout of a `rank`-D tensor with `placement` over `meshDim`,
  /// Shard(0) over the data-parallel dim (when the tensor has a dim) and
  /// Replicate elsewhere. Errors at `at` when a shard dim is out of range.
  FailureOr<LayoutAttr> getStyleLayout(PlacementAttr placement, int64_t meshDim,
                                       int64_t rank, bool activation,
                                       const JsonNode &at,
                                       llvm::StringRef what);
  FailureOr<SmallVector<PlacementAttr>>
  normalizePlacements(llvm::ArrayRef<PlacementAttr> placements, int64_t rank,
                      const JsonNode &at, llvm::StringRef what);
  SmallVector<PlacementAttr> getDefaultPlacements(int64_t rank,
                                                  bool activation) const;
  LayoutAttr getLayout(llvm::ArrayRef<PlacementAttr> placements) const {
    return LayoutAttr::get(context, meshRef, placements);
  }

  /// Claims that `value` has `layout` (a distribute), or redistributes it
  /// when it is already claimed to have another layout.
  Value claim(Value value, LayoutAttr layout, Location loc);
  Value redistribute(Value value, LayoutAttr from, LayoutAttr to, Location loc);
  /// Asks for `value` in `layout`, whatever layout it has (a to_layout).
  Value request(Value value, LayoutAttr layout, Location loc);
  /// Context parallelism: claims `value` sharded on `dim` over the
  /// context-parallel mesh dim, its other mesh dims left to propagation
  /// (or kept from an earlier claim); with `gather`, then asks for it
  /// replicated over that dim (the all-gather rotation of k and v).
  Value claimSequence(Value value, int64_t dim, bool gather, Location loc);
  /// Tensor `name`'s `value` claimed in the layout of its `placements`
  /// entry when it has one, else `value`.
  FailureOr<Value> claimPlacementsEntry(llvm::StringRef name, Value value,
                                        Location loc);
  /// Claims `value` is `given`, then redistributes it to the style's
  /// `desired` placement when there is one (PyTorch's from_local followed by
  /// redistribute).
  FailureOr<Value> claimThenRedistribute(Value value, LayoutAttr given,
                                         StylePlacement desired,
                                         const StyleDecl &style, int64_t rank,
                                         llvm::StringRef what, Location loc);

  LogicalResult
  computeParameterLayouts(llvm::StringMap<ParameterLayout> &layouts);
  /// The value of `name` as op `reader` of module `readerModule` sees it.
  FailureOr<Value> getValueFor(llvm::StringRef name,
                               std::optional<llvm::StringRef> readerModule);
  FailureOr<Value> getOutputStage(llvm::StringRef name, unsigned stage);
  FailureOr<Value> applyInputStyle(const StyledModule &styled,
                                   llvm::StringRef name, Value value);
  FailureOr<Value> applyOutputStyle(const StyledModule &styled,
                                    llvm::StringRef name, Value value);
  /// True when the (colwise/rowwise) module's op is an embedding.
  bool holdsEmbedding(const StyledModule &styled) const;
  bool isShardableLeaf(const OpDecl &op) const;
  /// The styled modules `name` leaves, innermost first.
  SmallVector<const StyledModule *> getOutputChain(llvm::StringRef name) const;
  LogicalResult emitOp(const OpDecl &op);
  /// The dtensor.local_map of a module of `plan.local_maps`, its inputs
  /// claimed (or, with redistribute_inputs, requested) in their layouts.
  LogicalResult emitLocalMapModule(const LocalMapModule &localMap);
  /// Model inputs and parameters that nothing else lays out take the input
  /// layout of the first local map reading them.
  void setLocalMapArgumentPlacements(
      llvm::StringMap<SmallVector<PlacementAttr>> &placements) const;
  LogicalResult checkStyledModules();
  /// The colwise module whose linear computes `name`, through ops that only
  /// move or rotate heads; null when there is none.
  const StyledModule *getColwiseProjection(llvm::StringRef name) const;
  /// After a grouped-query attention `op` with key/value heads `heads`:
  /// records its colwise key/value projections that the style's mesh dim
  /// does not divide.
  void findReplicatedProjections(const OpDecl &op, int64_t heads);
  /// The layout of a state tensor without raw placements: a KV cache
  /// follows the heads of its projection.
  SmallVector<PlacementAttr> getStatePlacements(const TensorDecl &state) const;
  bool isReplicatedProjection(const StyledModule &styled) const {
    return styled.style->kind == StyleDecl::Kind::Colwise &&
           replicated.count(styled.path);
  }
};
} // namespace

SmallVector<PlacementAttr>
Importer::getDefaultPlacements(int64_t rank, bool activation) const {
  SmallVector<PlacementAttr> placements;
  for (size_t dim = 0; dim < plan.mesh.shape.size(); ++dim) {
    if (activation && rank > 0 && plan.dataParallelDim &&
        static_cast<int64_t>(dim) == *plan.dataParallelDim)
      placements.push_back(ShardAttr::get(context, 0));
    else if (activation && plan.contextParallel &&
             static_cast<int64_t>(dim) == plan.contextParallel->meshDim &&
             rank > plan.contextParallel->sequenceDim)
      placements.push_back(ShardAttr::get(context,
                                          plan.contextParallel->sequenceDim,
                                          plan.contextParallel->loadBalance));
    else
      placements.push_back(ReplicateAttr::get(context));
  }
  return placements;
}

FailureOr<SmallVector<PlacementAttr>>
Importer::normalizePlacements(llvm::ArrayRef<PlacementAttr> placements,
                              int64_t rank, const JsonNode &at,
                              llvm::StringRef what) {
  SmallVector<PlacementAttr> result;
  for (PlacementAttr placement : placements) {
    auto shard = dyn_cast<ShardAttr>(placement);
    if (!shard) {
      result.push_back(placement);
      continue;
    }
    int64_t dim = shard.getDim();
    if (dim < -rank || dim >= rank)
      return locator.emitError(at)
             << "Shard(" << dim << ") is out of range for " << what
             << " of rank " << rank;
    result.push_back(ShardAttr::get(context, dim < 0 ? dim + rank : dim,
                                    shard.getHeadTail()));
  }
  return result;
}

FailureOr<LayoutAttr> Importer::getStyleLayout(PlacementAttr placement,
                                               int64_t meshDim, int64_t rank,
                                               bool activation,
                                               const JsonNode &at,
                                               llvm::StringRef what) {
  SmallVector<PlacementAttr> placements =
      getDefaultPlacements(rank, activation);
  placements[meshDim] = placement;
  FailureOr<SmallVector<PlacementAttr>> normalized =
      normalizePlacements(placements, rank, at, what);
  if (failed(normalized))
    return failure();
  return getLayout(*normalized);
}

Value Importer::claim(Value value, LayoutAttr layout, Location loc) {
  auto it = claims.find(value);
  if (it != claims.end()) {
    if (it->second == layout)
      return value;
    return redistribute(value, it->second, layout, loc);
  }
  Value result = DistributeOp::create(builder, loc, value, layout,
                                     /*open_mesh_dims=*/nullptr);
  claims[value] = layout;
  claims[result] = layout;
  return result;
}

Value Importer::redistribute(Value value, LayoutAttr from, LayoutAttr to,
                             Location loc) {
  if (from == to)
    return value;
  Value result = RedistributeOp::create(builder, loc, value, from, to);
  claims[result] = to;
  return result;
}

Value Importer::request(Value value, LayoutAttr layout, Location loc) {
  auto it = claims.find(value);
  if (it != claims.end())
    return redistribute(value, it->second, layout, loc);
  Value result = ToLayoutOp::create(builder, loc, value, layout,
                                   /*open_mesh_dims=*/nullptr);
  claims[result] = layout;
  return result;
}

Value Importer::claimSequence(Value value, int64_t dim, bool gather,
                              Location loc) {
  if (Value known = (gather ? sequenceGathers : sequenceClaims).lookup(value))
    return known;
  Value original = value;
  int64_t meshDim = plan.contextParallel->meshDim;
  int64_t meshRank = plan.mesh.shape.size();
  SmallVector<int64_t> open;
  for (int64_t other = 0; other < meshRank; ++other)
    if (other != meshDim)
      open.push_back(other);
  auto withCp = [&](LayoutAttr base, PlacementAttr placement) {
    SmallVector<PlacementAttr> placements =
        base ? SmallVector<PlacementAttr>(base.getPlacements())
             : SmallVector<PlacementAttr>(meshRank,
                                          ReplicateAttr::get(context));
    placements[meshDim] = placement;
    return getLayout(placements);
  };
  PlacementAttr shard =
      ShardAttr::get(context, dim, plan.contextParallel->loadBalance);
  PlacementAttr replicate = ReplicateAttr::get(context);
  Value claimed = sequenceClaims.lookup(original);
  auto it = claims.find(original);
  if (it != claims.end()) {
    // A value claimed before (an argument, a style's layout) keeps its
    // other mesh dims; its sequence is (re)distributed over this one.
    LayoutAttr known = it->second.getNormalized(
        cast<RankedTensorType>(value.getType()).getRank());
    if (!claimed)
      claimed = claim(value, withCp(known, shard), loc);
    sequenceClaims[original] = claimed;
    if (!gather)
      return claimed;
    Value gathered = redistribute(claimed, withCp(known, shard),
                                  withCp(known, replicate), loc);
    sequenceGathers[original] = gathered;
    return gathered;
  }
  auto openDims =
      open.empty() ? DenseI64ArrayAttr() : builder.getDenseI64ArrayAttr(open);
  if (!claimed)
    claimed = DistributeOp::create(builder, loc, value, withCp({}, shard),
                                   openDims);
  sequenceClaims[original] = claimed;
  if (!gather)
    return claimed;
  Value gathered = ToLayoutOp::create(builder, loc, claimed,
                                      withCp({}, replicate), openDims);
  sequenceGathers[original] = gathered;
  return gathered;
}

FailureOr<Value> Importer::claimPlacementsEntry(llvm::StringRef name,
                                                Value value, Location loc) {
  const PlacementDecl *raw = rawPlacements.lookup(name);
  if (!raw)
    return value;
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  FailureOr<SmallVector<PlacementAttr>> placements = normalizePlacements(
      raw->placements, rank, *raw->node, ("tensor '" + name + "'").str());
  if (failed(placements))
    return failure();
  return claim(value, getLayout(*placements), loc);
}

FailureOr<Value> Importer::claimThenRedistribute(
    Value value, LayoutAttr given, StylePlacement desired,
    const StyleDecl &style, int64_t rank, llvm::StringRef what, Location loc) {
  value = claim(value, given, loc);
  if (!desired)
    return value;
  FailureOr<LayoutAttr> desiredLayout =
      getStyleLayout(*desired, style.meshDim, rank, true, *style.node, what);
  if (failed(desiredLayout))
    return failure();
  return redistribute(value, given, *desiredLayout, loc);
}

/// Whether `op` is a matmul by a 2-D parameter `[in, out]`: a linear layer
/// stored transposed, as Hugging Face's Conv1D (GPT-2) does.
static bool isParameterMatmul(const OpDecl &op,
                              const llvm::StringSet<> &parameterNames,
                              const std::vector<TensorDecl> &parameters) {
  if (op.definition->name != "matmul" || op.inputs.size() != 2 ||
      !parameterNames.contains(op.inputs[1]))
    return false;
  for (const TensorDecl &decl : parameters)
    if (decl.name == op.inputs[1])
      return decl.type.getRank() == 2;
  return false;
}

/// The ops whose weights colwise/rowwise shard: linear, embedding, and a
/// matmul by a 2-D parameter.
bool Importer::isShardableLeaf(const OpDecl &op) const {
  return op.definition->name == "linear" ||
         op.definition->name == "embedding" ||
         isParameterMatmul(op, parameterNames, plan.parameters);
}

bool Importer::holdsEmbedding(const StyledModule &styled) const {
  return llvm::any_of(styled.ops, [&](unsigned index) {
    return plan.ops[index].definition->name == "embedding";
  });
}

LogicalResult Importer::checkStyledModules() {
  for (const StyledModule &styled : tree.getStyledModules()) {
    const StyleDecl &style = *styled.style;
    if (style.kind != StyleDecl::Kind::Colwise &&
        style.kind != StyleDecl::Kind::Rowwise) {
      size_t given = style.kind == StyleDecl::Kind::PrepareModuleInput
                         ? style.inputLayouts.size()
                         : style.outputLayouts.size();
      size_t available = style.kind == StyleDecl::Kind::PrepareModuleInput
                             ? styled.inputs.size()
                             : styled.outputs.size();
      if (style.kind != StyleDecl::Kind::SequenceParallel && given > available)
        return locator.emitError(*style.node)
               << "module '" << styled.path << "' has " << available
               << (style.kind == StyleDecl::Kind::PrepareModuleInput
                       ? " input(s)"
                       : " output(s)")
               << " but the style gives " << given << " layout(s)";
      continue;
    }
    unsigned leaves = 0;
    for (unsigned index : styled.ops)
      leaves += isShardableLeaf(plan.ops[index]);
    if (leaves != 1)
      return locator.emitError(*style.node)
             << stringifyStyleKind(style.kind) << " applies to a module with "
             << "one linear, embedding or matmul-by-a-parameter op; module '"
             << styled.path
             << "' has " << leaves;
  }
  return success();
}

LogicalResult
Importer::computeParameterLayouts(llvm::StringMap<ParameterLayout> &layouts) {
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
            dim < 0 || replicate
                ? PlacementAttr(ReplicateAttr::get(context))
                : PlacementAttr(ShardAttr::get(context, dim));
        if (failed(setLayout(op.inputs[i], style.meshDim, placement, styled)))
          return failure();
      }
    }
  }
  return success();
}

SmallVector<const StyledModule *>
Importer::getOutputChain(llvm::StringRef name) const {
  SmallVector<const StyledModule *> chain;
  std::optional<llvm::StringRef> definer = tree.getDefiningModule(name);
  if (!definer)
    return chain;
  for (const StyledModule *styled : tree.getStyledAncestors(*definer))
    if (llvm::is_contained(styled->outputs, name))
      chain.push_back(styled);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

FailureOr<Value> Importer::applyOutputStyle(const StyledModule &styled,
                                            llvm::StringRef name, Value value) {
  const StyleDecl &style = *styled.style;
  auto position = llvm::find(styled.outputs, name) - styled.outputs.begin();
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  Location loc = getOpLocation(styled.path, *style.node);
  std::string what =
      ("output '" + name + "' of module '" + styled.path + "'").str();
  StylePlacement given, desired;
  switch (style.kind) {
  case StyleDecl::Kind::Colwise:
  case StyleDecl::Kind::Rowwise:
    if (position != 0)
      return value;
    if (!style.outputLayouts.empty())
      given = style.outputLayouts.front();
    else if (isReplicatedProjection(styled))
      given = ReplicateAttr::get(context);
    else if (style.kind == StyleDecl::Kind::Colwise)
      given = ShardAttr::get(context, -1);
    else
      given = ReplicateAttr::get(context);
    break;
  case StyleDecl::Kind::SequenceParallel:
    given = ShardAttr::get(context, style.sequenceDim);
    break;
  case StyleDecl::Kind::PrepareModuleOutput:
    if (static_cast<size_t>(position) >= style.outputLayouts.size())
      return value;
    given = style.outputLayouts[position];
    desired = style.desiredOutputLayouts[position];
    break;
  case StyleDecl::Kind::PrepareModuleInput:
    return value;
  }
  if (!given)
    return value;
  FailureOr<LayoutAttr> givenLayout =
      getStyleLayout(*given, style.meshDim, rank, true, *style.node, what);
  if (failed(givenLayout))
    return failure();
  // A vocab-parallel lookup is a masked lookup whose partial sums are then
  // reduced, as in PyTorch; without the claim, a small table could be
  // gathered instead, every step.
  if (style.kind == StyleDecl::Kind::Rowwise && position == 0 &&
      holdsEmbedding(styled)) {
    FailureOr<LayoutAttr> partial =
        getStyleLayout(PartialAttr::get(context, ReductionKind::Sum),
                       style.meshDim, rank, true, *style.node, what);
    if (failed(partial))
      return failure();
    value = claim(value, *partial, loc);
  }
  // PyTorch redistributes the outputs of colwise, rowwise and sequence
  // parallel modules to their output layouts: whatever layout the module
  // computed, which is not claimed.
  if (style.kind != StyleDecl::Kind::PrepareModuleOutput)
    return request(value, *givenLayout, loc);
  return claimThenRedistribute(value, *givenLayout, desired, style, rank, what,
                               loc);
}

FailureOr<Value> Importer::applyInputStyle(const StyledModule &styled,
                                           llvm::StringRef name, Value value) {
  const StyleDecl &style = *styled.style;
  auto position = llvm::find(styled.inputs, name) - styled.inputs.begin();
  if (static_cast<size_t>(position) == styled.inputs.size())
    return value;
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  Location loc = getOpLocation(styled.path, *style.node);
  std::string what =
      ("input '" + name + "' of module '" + styled.path + "'").str();
  StylePlacement given, desired;
  switch (style.kind) {
  case StyleDecl::Kind::Colwise:
  case StyleDecl::Kind::Rowwise: {
    if (position != 0)
      return value;
    PlacementAttr replicate = ReplicateAttr::get(context);
    PlacementAttr lastDim = ShardAttr::get(context, -1);
    bool colwise = style.kind == StyleDecl::Kind::Colwise;
    desired = colwise || holdsEmbedding(styled) ? replicate : lastDim;
    given = !style.inputLayouts.empty() ? style.inputLayouts.front() : *desired;
    break;
  }
  case StyleDecl::Kind::SequenceParallel:
    given = ShardAttr::get(context, style.sequenceDim);
    break;
  case StyleDecl::Kind::PrepareModuleInput:
    if (static_cast<size_t>(position) >= style.inputLayouts.size())
      return value;
    given = style.inputLayouts[position];
    desired = style.desiredInputLayouts[position];
    break;
  case StyleDecl::Kind::PrepareModuleOutput:
    return value;
  }
  if (!given)
    return value;
  FailureOr<LayoutAttr> givenLayout =
      getStyleLayout(*given, style.meshDim, rank, true, *style.node, what);
  if (failed(givenLayout))
    return failure();
  return claimThenRedistribute(value, *givenLayout, desired, style, rank, what,
                               loc);
}

FailureOr<Value> Importer::getOutputStage(llvm::StringRef name,
                                          unsigned stage) {
  if (stage == 0)
    return values.lookup(name);
  auto key = std::make_pair(name.str(), stage);
  if (auto it = outputStages.find(key); it != outputStages.end())
    return it->second;
  FailureOr<Value> previous = getOutputStage(name, stage - 1);
  if (failed(previous))
    return failure();
  // Right after the previous stage, so that every reader is dominated.
  OpBuilder::InsertionGuard guard(builder);
  if (Operation *def = previous->getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(previous->getParentBlock());
  SmallVector<const StyledModule *> chain = getOutputChain(name);
  FailureOr<Value> result =
      applyOutputStyle(*chain[stage - 1], name, *previous);
  if (failed(result))
    return failure();
  outputStages[key] = *result;
  return result;
}

FailureOr<Value>
Importer::getValueFor(llvm::StringRef name,
                      std::optional<llvm::StringRef> readerModule) {
  if (parameterNames.contains(name))
    return values.lookup(name);
  // Leave every styled module of the definer that the reader is not in
  // (readerModule std::nullopt: the model's caller, outside everything).
  SmallVector<const StyledModule *> chain = getOutputChain(name);
  unsigned stage = 0;
  while (stage < chain.size() &&
         !(readerModule && moduleContains(chain[stage]->path, *readerModule)))
    ++stage;
  FailureOr<Value> value = getOutputStage(name, stage);
  if (failed(value) || !readerModule)
    return value;
  // Enter every styled module of the reader that the definer is not in.
  std::optional<llvm::StringRef> definer = tree.getDefiningModule(name);
  for (const StyledModule *styled : tree.getStyledAncestors(*readerModule)) {
    if (definer && moduleContains(styled->path, *definer))
      continue;
    auto key = std::make_pair(styled->path, name.str());
    if (auto it = inputStages.find(key); it != inputStages.end()) {
      value = it->second;
      continue;
    }
    value = applyInputStyle(*styled, name, *value);
    if (failed(value))
      return failure();
    inputStages[key] = *value;
  }
  return value;
}

LogicalResult Importer::emitOp(const OpDecl &op) {
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

void Importer::setLocalMapArgumentPlacements(
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

LogicalResult Importer::emitLocalMapModule(const LocalMapModule &localMap) {
  const LocalMapDecl &decl = *localMap.decl;
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
  FailureOr<SmallVector<Value>> results = emitLocalMap(
      builder, plan, localMap, inputs, layouts, meshRef, locator);
  if (failed(results))
    return failure();
  Location loc = getOpLocation(localMap.path, *decl.node);
  for (auto [name, result] : llvm::zip_equal(localMap.outputs, *results)) {
    Value value = result;
    auto layout = cast<LayoutAttr>(
        cast<LocalMapOp>(result.getDefiningOp()).getOutLayouts()[cast<OpResult>(
            result).getResultNumber()]);
    claims[value] = layout;
    FailureOr<Value> claimed = claimPlacementsEntry(name, value, loc);
    if (failed(claimed))
      return failure();
    values[name] = *claimed;
  }
  return success();
}

const StyledModule *
Importer::getColwiseProjection(llvm::StringRef name) const {
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
Importer::getStatePlacements(const TensorDecl &state) const {
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

void Importer::findReplicatedProjections(const OpDecl &op, int64_t heads) {
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

LogicalResult Importer::run() {
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
          (parameter ? "parameter '"
                     : (state ? "state '" : "input '")) +
              decl->name + "'");
      if (failed(normalized))
        return failure();
      placements = *normalized;
    }
    LayoutAttr layout = getLayout(placements);
    func.setArgAttr(index, "dtensor.layout", layout);
    func.setArgAttr(index, "dtensor.name", builder.getStringAttr(decl->name));
    if (parameter)
      func.setArgAttr(index, "dtensor.weight", builder.getUnitAttr());
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
    auto layout = func.getArgAttrOfType<LayoutAttr>(argument, "dtensor.layout");
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
    func.setResultAttr(index, "dtensor.layout", getLayout(placements));
    func.setResultAttr(index, "dtensor.name", builder.getStringAttr(name));
  }
  for (auto [i, update] : llvm::enumerate(updateResults)) {
    unsigned index = plan.outputs.size() + i;
    func.setResultAttr(index, DTensorDialect::getUpdatesAttrName(),
                       builder.getI64IntegerAttr(update.first));
    func.setResultAttr(index, "dtensor.layout", update.second);
  }
  return success();
}

/// Gives `mesh` the shapes of `overrides` that fit it (the others are for
/// the caller to report).
static void applyMeshOverrides(MeshDecl &mesh,
                               llvm::ArrayRef<MeshShapeOverride> overrides) {
  for (const MeshShapeOverride &override : overrides) {
    if (override.mesh.empty() || override.mesh == "mesh") {
      if (override.shape.size() == mesh.shape.size())
        mesh.shape.assign(override.shape.begin(), override.shape.end());
      continue;
    }
    auto *it = llvm::find(mesh.names, override.mesh);
    if (it != mesh.names.end() && override.shape.size() == 1)
      mesh.shape[it - mesh.names.begin()] = override.shape.front();
  }
}

OwningOpRef<ModuleOp>
dtensor::frontend::importModelPlan(llvm::SourceMgr &sourceMgr,
                                   MLIRContext *context,
                                   const ImportOptions &options) {
  DialectRegistry registry;
  registerAllDialects(registry);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();

  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  llvm::StringRef filename = buffer->getBufferIdentifier();
  JsonLocator locator(context, filename);

  JsonParseError parseError;
  std::optional<JsonNode> root = parseJson(buffer->getBuffer(), parseError);
  if (!root) {
    emitError(FileLineColLoc::get(context, filename, parseError.line,
                                  parseError.column))
        << "malformed JSON: " << parseError.message;
    return nullptr;
  }
  FailureOr<PlanEntries> entries = readPlanEntries(*root, locator);
  if (failed(entries))
    return nullptr;

  // Each entry is the plan with its dims' sizes written in. An error that
  // only one entry's sizes cause names the entry.
  struct EntryPlan {
    const EntryDecl *entry;
    std::unique_ptr<JsonNode> root;
    ModelPlan plan;
    std::optional<ModuleTree> tree;
  };
  std::vector<EntryPlan> plans;
  plans.reserve(entries->entries.size());
  const EntryDecl *current = nullptr;
  ScopedDiagnosticHandler noteEntry(context, [&](Diagnostic &diag) {
    if (current && current->node && diag.getSeverity() == DiagnosticSeverity::Error)
      diag.attachNote(locator.get(*current->node))
          << "in entry '" << current->name << "' ("
          << describeDims(*current) << ")";
    return failure(); // Reported by the enclosing handler.
  });
  for (const EntryDecl &entry : entries->entries) {
    current = entries->listed && !entry.dims.empty() ? &entry : nullptr;
    EntryPlan &entryPlan = plans.emplace_back();
    entryPlan.entry = &entry;
    entryPlan.root = std::make_unique<JsonNode>(specializePlan(*root, entry));
    FailureOr<ModelPlan> plan = readModelPlan(*entryPlan.root, locator);
    if (failed(plan))
      return nullptr;
    if (entries->listed)
      plan->name = entry.name;
    applyMeshOverrides(plan->mesh, options.meshOverrides);
    int64_t devices = 1;
    for (int64_t size : plan->mesh.shape)
      devices *= size;
    if (options.worldSize > 0 && devices > options.worldSize) {
      current = nullptr;
      locator.emitError(*plan->mesh.node->get("shape"))
          << "the mesh has " << devices << " devices but the world has only "
          << options.worldSize << " rank(s)";
      return nullptr;
    }
    entryPlan.plan = std::move(*plan);
    FailureOr<ModuleTree> tree = ModuleTree::build(entryPlan.plan, locator);
    if (failed(tree))
      return nullptr;
    entryPlan.tree = std::move(*tree);
  }

  // Each import may find key/value projections to replicate, which change
  // the layouts of values emitted before it found them: then again, with
  // them. Each round only adds some, so this ends.
  ReplicatedProjections replicated;
  for (;;) {
    OwningOpRef<ModuleOp> module =
        ModuleOp::create(FileLineColLoc::get(context, filename, 1, 1));
    ReplicatedProjections discovered;
    for (EntryPlan &entryPlan : plans) {
      current = entries->listed && !entryPlan.entry->dims.empty()
                    ? entryPlan.entry
                    : nullptr;
      Importer importer(entryPlan.plan, *entryPlan.tree, locator, *module,
                        replicated);
      if (failed(importer.run()))
        return nullptr;
      for (const auto &projection : importer.getDiscovered())
        discovered[projection.getKey()] = projection.getValue();
    }
    current = nullptr;
    if (!discovered.empty()) {
      for (const auto &projection : discovered)
        replicated[projection.getKey()] = projection.getValue();
      continue;
    }
    if (entries->listed && plans.size() > 1)
      (*module)->setAttr(DTensorDialect::getDefaultEntryAttrName(),
                         StringAttr::get(context, plans.front().plan.name));
    // The plan's rotation of context parallelism, for
    // --dtensor-cpu-ring-attention (entries share the plan's setting).
    for (EntryPlan &entryPlan : plans)
      if (entryPlan.plan.contextParallel &&
          !entryPlan.plan.contextParallel->rotateMethod.empty())
        (*module)->setAttr(
            DTensorDialect::getRotateMethodAttrName(),
            StringAttr::get(context,
                            entryPlan.plan.contextParallel->rotateMethod));
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }
}

void dtensor::frontend::registerImportJsonTranslation() {
  static llvm::cl::opt<int64_t> worldSize(
      "import-world-size",
      llvm::cl::desc("--import-json: ranks the program will run on; a larger "
                     "mesh is an error (default: any)"),
      llvm::cl::init(0));
  TranslateToMLIRRegistration registration(
      "import-json", "Import a JSON model plan (docs/model-plan.md)",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        ImportOptions options;
        options.worldSize = worldSize;
        return OwningOpRef<Operation *>(
            importModelPlan(sourceMgr, context, options).release());
      },
      registerAllDialects);
}

//===- Propagate.cpp - sharding propagation -----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gives every tensor value of a function a layout and inserts
// dtensor.redistribute where a user needs another layout than its operand
// has. The function becomes a propagation::Problem: one node per tensor
// argument, per op touching tensors and per returned tensor, each with its
// candidate strategies; the solver picks one per node globally; the choice
// is written back as attributes and redistributes.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Analysis/ElementBytes.h"
#include "CustomCallStrategies.h"
#include "RuleStrategies.h"

#include "dtensor/Analysis/ShardingRuleRegistry.h"
#include "dtensor/Dialect/DTensor/DTensorAttrs.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Propagation/Solver.h"
#include "dtensor/Propagation/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <map>
#include <string>

namespace dtensor {
#define GEN_PASS_DEF_PROPAGATE
#include "dtensor/Propagation/Passes.h.inc"
} // namespace dtensor

using namespace mlir;
using namespace dtensor;
using propagation::Layout;
using propagation::Strategy;

namespace {

/// The normalised layout-math placements of `attr` for a `rank`-D tensor.
Layout toLayout(LayoutAttr attr, int64_t rank) {
  return attr.getNormalized(rank).getLayoutPlacements();
}

/// A layout of a dtensor.local_map for a value of `type`.
Layout localMapLayout(LayoutAttr attr, Type type) {
  return toLayout(attr, cast<RankedTensorType>(type).getRank());
}

Layout replicated(const layout::Mesh &mesh) {
  return Layout(mesh.rank(), layout::Placement::replicate());
}

/// Arithmetic ops per point of `op`'s iteration space: what sharding the op
/// saves. A fill or a copy has none; reshapes and slices are views.
double getArithmeticPerPoint(Operation *op) {
  if (isa<tensor::TensorDialect>(op->getDialect()))
    return 0.0;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    // The payload minus its terminator.
    return static_cast<double>(linalgOp.getBlock()->getOperations().size() -
                               1);
  }
  return 1.0;
}

/// Ops recreated in each layout their users need instead of redistributed:
/// they cost nothing to build again on every rank.
bool isRematerializable(Operation *op) {
  return op && isa<tensor::EmptyOp, arith::ConstantOp>(op);
}

/// A user's claim that a value has a layout, and where it was made.
/// `open` (empty, or one flag per mesh dim) marks the mesh dims the claim
/// leaves to propagation (a distribute's or to_layout's `open_mesh_dims`);
/// their placements in `layout` mean nothing.
struct Assertion {
  Layout layout;
  Location loc;
  std::vector<bool> open;

  bool isOpen(size_t meshDim) const {
    return !open.empty() && open[meshDim];
  }
  bool isClosed() const {
    return llvm::none_of(open, [](bool flag) { return flag; });
  }
  /// True when `candidate` has the claimed placement on every closed dim.
  bool admits(const Layout &candidate) const {
    for (size_t dim = 0; dim < layout.size(); ++dim)
      if (!isOpen(dim) && !(candidate[dim] == layout[dim]))
        return false;
    return true;
  }
};

/// The open flags of `open_mesh_dims` over a mesh of `meshRank` dims; empty
/// when there are none.
std::vector<bool> getOpenFlags(std::optional<ArrayRef<int64_t>> dims,
                               size_t meshRank) {
  if (!dims || dims->empty())
    return {};
  std::vector<bool> open(meshRank, false);
  for (int64_t dim : *dims)
    open[dim] = true;
  return open;
}

/// What one node of the problem stands for.
struct NodeInfo {
  enum class Kind { Argument, Op, Result };
  Kind kind;
  /// The op (Op), or null.
  Operation *op = nullptr;
  /// Argument or result number (Argument, Result).
  unsigned index = 0;
  /// The uses each operand slot stands for.
  SmallVector<SmallVector<OpOperand *, 1>> slots;
  /// The values of the node's results, in node-result order.
  SmallVector<Value> results;
  /// Some result had to keep a layout other than a user's claim.
  bool missedClaim = false;
};

/// Propagation over one function.
/// What propagation did (--dtensor-propagate=statistics).
struct PropagationCounts {
  unsigned functions = 0;
  unsigned redistributes = 0;
  unsigned recreated = 0;
  unsigned sweeps = 0;
};

/// Mesh dims that some layout of `func` (its arguments, results and layout
/// ops) shards head-tail.
std::vector<bool> getHeadTailMeshDims(func::FuncOp func, int64_t meshRank) {
  std::vector<bool> dims(meshRank, false);
  auto note = [&](Attribute attr) {
    auto layout = dyn_cast_or_null<LayoutAttr>(attr);
    if (!layout)
      return;
    for (auto [meshDim, placement] : llvm::enumerate(layout.getPlacements()))
      if (auto shard = dyn_cast<ShardAttr>(placement);
          shard && shard.getHeadTail() &&
          static_cast<int64_t>(meshDim) < meshRank)
        dims[meshDim] = true;
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    note(func.getArgAttr(i, DTensorDialect::getLayoutAttrName()));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    note(func.getResultAttr(i, DTensorDialect::getLayoutAttrName()));
  func.walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrs()) {
      note(attr.getValue());
      if (auto array = dyn_cast<ArrayAttr>(attr.getValue()))
        for (Attribute element : array)
          note(element);
    }
  });
  return dims;
}

class FunctionPropagation {
public:
  FunctionPropagation(func::FuncOp func, MeshOp mesh,
                      FlatSymbolRefAttr meshRef, layout::CostParams costs,
                      ComputeParams compute, bool explain = false)
      : func(func), meshRef(meshRef), mesh(mesh.getLayoutMesh()),
        problem(this->mesh, costs), compute(compute), explain(explain) {}

  LogicalResult run(unsigned maxSweeps, PropagationCounts &counts);

private:
  LogicalResult collectAssertions();
  LogicalResult addAssertion(Value value, Layout layout, Location loc,
                             std::vector<bool> open = {});
  /// The layouts a value of `type` claimed by `assertion` may take: its
  /// closed dims as claimed, its open dims replicated or sharded.
  std::vector<Layout> getAdmittedLayouts(RankedTensorType type,
                                         const Assertion &assertion) const;
  LogicalResult addLocalMapAssertions(LocalMapOp op);
  void addValue(Value value);
  void buildNodes();
  void addOpNode(Operation *op);
  void addNode(NodeInfo info, SmallVector<Value> operands,
               std::vector<Strategy> strategies);
  void materialize(const std::vector<int> &choice, PropagationCounts &counts);
  /// The `explain` remark for a redistribute of operand `slot` of node
  /// `nodeId` from `from` to `to`.
  void explainRedistribute(int nodeId, unsigned slot, int chosen,
                           const Layout &from, const Layout &to,
                           const DenseMap<Value, Layout> &produced);
  /// The layout a constraint claims for `value` (which has one).
  const Layout &claimed(Value value) const {
    return assertions.find(value)->second.layout;
  }
  const Assertion &getAssertion(Value value) const {
    return assertions.find(value)->second;
  }
  LayoutAttr getAttr(const Layout &layout) const {
    return getLayoutAttr(meshRef, layout);
  }

  func::FuncOp func;
  FlatSymbolRefAttr meshRef;
  layout::Mesh mesh;
  propagation::Problem problem;
  ComputeParams compute;
  bool explain = false;
  DenseMap<Value, int> valueIds;
  /// Claims made by users (distribute, redistribute's source) and by
  /// argument attributes or the layout-carrying producers.
  llvm::MapVector<Value, Assertion> assertions;
  std::vector<NodeInfo> nodes;
};

} // namespace

LogicalResult FunctionPropagation::addAssertion(Value value, Layout layout,
                                                Location loc,
                                                std::vector<bool> open) {
  Assertion claim{std::move(layout), loc, std::move(open)};
  auto [it, inserted] = assertions.try_emplace(value, claim);
  if (inserted)
    return success();
  Assertion &old = it->second;
  size_t meshRank = claim.layout.size();
  if (old.isClosed() && claim.isClosed()) {
    if (old.layout == claim.layout)
      return success();
  } else {
    // An open claim and another: both hold where either is closed.
    Assertion merged{old.layout, old.loc, {}};
    bool conflict = false;
    for (size_t dim = 0; dim < meshRank; ++dim) {
      if (claim.isOpen(dim))
        continue;
      if (old.isOpen(dim))
        merged.layout[dim] = claim.layout[dim];
      else
        conflict |= !(old.layout[dim] == claim.layout[dim]);
    }
    if (!conflict) {
      for (size_t dim = 0; dim < meshRank; ++dim)
        merged.open.push_back(old.isOpen(dim) && claim.isOpen(dim));
      old = std::move(merged);
      return success();
    }
  }
  // Open mesh dims are written `?`.
  auto describe = [](const Assertion &assertion) {
    std::string text = "[";
    for (size_t dim = 0; dim < assertion.layout.size(); ++dim)
      text += (dim ? ", " : "") + (assertion.isOpen(dim)
                                       ? std::string("?")
                                       : assertion.layout[dim].str());
    return text + "]";
  };
  InFlightDiagnostic diag = emitError(loc)
                            << "conflicting layouts for one value: "
                            << describe(claim) << " here, but "
                            << describe(old) << " before";
  diag.attachNote(old.loc) << "the other layout constraint is here";
  return failure();
}

std::vector<Layout>
FunctionPropagation::getAdmittedLayouts(RankedTensorType type,
                                        const Assertion &assertion) const {
  if (assertion.isClosed())
    return {assertion.layout};
  std::vector<int64_t> shape(type.getShape());
  std::vector<Layout> layouts;
  for (Layout candidate : enumerateShardLayouts(shape, mesh)) {
    for (size_t dim = 0; dim < candidate.size(); ++dim)
      if (!assertion.isOpen(dim))
        candidate[dim] = assertion.layout[dim];
    if (llvm::find(layouts, candidate) == layouts.end())
      layouts.push_back(std::move(candidate));
  }
  return layouts;
}

LogicalResult FunctionPropagation::collectAssertions() {
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    auto attr = func.getArgAttrOfType<LayoutAttr>(
        arg.getArgNumber(), DTensorDialect::getLayoutAttrName());
    if (type && attr &&
        failed(addAssertion(arg, toLayout(attr, type.getRank()),
                            arg.getLoc())))
      return failure();
  }
  for (Operation &op : func.getBody().front()) {
    if (auto distribute = dyn_cast<DistributeOp>(op)) {
      int64_t rank = distribute.getInput().getType().getRank();
      Layout layout = toLayout(distribute.getLayout(), rank);
      std::vector<bool> open =
          getOpenFlags(distribute.getOpenMeshDims(), layout.size());
      if (failed(addAssertion(distribute.getInput(), layout, op.getLoc(),
                              open)) ||
          failed(addAssertion(distribute.getResult(), layout, op.getLoc(),
                              open)))
        return failure();
    } else if (auto request = dyn_cast<ToLayoutOp>(op)) {
      // Only the result: the input keeps its producer's choice.
      int64_t rank = request.getInput().getType().getRank();
      Layout layout = toLayout(request.getLayout(), rank);
      if (failed(addAssertion(
              request.getResult(), layout, op.getLoc(),
              getOpenFlags(request.getOpenMeshDims(), layout.size()))))
        return failure();
    } else if (auto localMap = dyn_cast<LocalMapOp>(op)) {
      if (failed(addLocalMapAssertions(localMap)))
        return failure();
    } else if (auto redistribute = dyn_cast<RedistributeOp>(op)) {
      int64_t rank = redistribute.getInput().getType().getRank();
      if (failed(addAssertion(redistribute.getInput(),
                              toLayout(redistribute.getSource(), rank),
                              op.getLoc())) ||
          failed(addAssertion(redistribute.getResult(),
                              toLayout(redistribute.getTarget(), rank),
                              op.getLoc())))
        return failure();
    }
  }
  return success();
}

LogicalResult FunctionPropagation::addLocalMapAssertions(LocalMapOp op) {
  // Its results are claims; so are its input layouts, unless it may
  // redistribute its inputs.
  for (auto [index, result] : llvm::enumerate(op.getResults()))
    if (failed(addAssertion(result, localMapLayout(op.getOutLayout(index),
                                                   result.getType()),
                            op.getLoc())))
      return failure();
  if (op.getRedistributeInputs())
    return success();
  for (auto [index, input] : llvm::enumerate(op.getInputs()))
    if (failed(addAssertion(input, localMapLayout(op.getInLayout(index),
                                                  input.getType()),
                            op.getLoc())))
      return failure();
  return success();
}

void FunctionPropagation::addValue(Value value) {
  Operation *producer = value.getDefiningOp();
  propagation::ValueInfo info;
  auto type = cast<RankedTensorType>(value.getType());
  for (int64_t size : type.getShape())
    info.shape.push_back(ShapedType::isDynamic(size) ? layout::kDynamic
                                                     : size);
  info.elementBytes = getElementBytes(type);
  info.rematerializable = isRematerializable(producer);
  valueIds[value] = problem.addValue(std::move(info));
}

void FunctionPropagation::addNode(NodeInfo info, SmallVector<Value> operands,
                                  std::vector<Strategy> strategies) {
  // A user's claim on a result narrows the producer's choice; when no
  // strategy can honour it, the claiming op converts instead.
  for (auto [index, result] : llvm::enumerate(info.results)) {
    auto it = assertions.find(result);
    if (it == assertions.end())
      continue;
    std::vector<Strategy> kept;
    for (const Strategy &strategy : strategies)
      if (it->second.admits(strategy.results[index]))
        kept.push_back(strategy);
    if (kept.empty())
      info.missedClaim = true;
    else
      strategies = std::move(kept);
  }
  std::vector<int> operandIds, resultIds;
  for (Value operand : operands)
    operandIds.push_back(valueIds.at(operand));
  for (Value result : info.results)
    resultIds.push_back(valueIds.at(result));
  problem.addNode(std::move(operandIds), std::move(resultIds),
                  std::move(strategies));
  nodes.push_back(std::move(info));
}

void FunctionPropagation::addOpNode(Operation *op) {
  NodeInfo info{NodeInfo::Kind::Op, op};
  SmallVector<Value> operands;
  std::vector<Strategy> strategies;
  auto isTracked = [&](Value value) { return valueIds.contains(value); };
  auto addSlot = [&](OpOperand &use) {
    info.slots.push_back({&use});
    operands.push_back(use.get());
  };
  for (Value result : op->getResults())
    if (isa<RankedTensorType>(result.getType())) {
      addValue(result);
      info.results.push_back(result);
    }

  auto replicateAll = [&] {
    Strategy strategy;
    for (OpOperand &use : op->getOpOperands())
      if (isTracked(use.get())) {
        addSlot(use);
        strategy.operands.push_back(replicated(mesh));
      }
    strategy.results.assign(info.results.size(), replicated(mesh));
    strategies.push_back(std::move(strategy));
  };

  if (isa<DistributeOp, ToLayoutOp>(op)) {
    // The claimed layout, or with open mesh dims each layout it admits.
    Value result = op->getResult(0);
    addSlot(op->getOpOperand(0));
    for (Layout &layout :
         getAdmittedLayouts(cast<RankedTensorType>(result.getType()),
                            getAssertion(result)))
      strategies.push_back(Strategy{{layout}, {layout}, 0.0});
  } else if (auto redistribute = dyn_cast<RedistributeOp>(op)) {
    addSlot(redistribute.getInputMutable());
    strategies.push_back(
        Strategy{{claimed(redistribute.getInput())},
                 {claimed(redistribute.getResult())},
                 0.0});
  } else if (auto localMap = dyn_cast<LocalMapOp>(op)) {
    // A boundary with fixed layouts: the body is per-rank code, never
    // looked into.
    Strategy strategy;
    for (auto [index, use] : llvm::enumerate(localMap.getInputsMutable())) {
      addSlot(use);
      strategy.operands.push_back(
          localMapLayout(localMap.getInLayout(index), use.get().getType()));
    }
    for (auto [index, result] : llvm::enumerate(localMap.getResults()))
      strategy.results.push_back(
          localMapLayout(localMap.getOutLayout(index), result.getType()));
    strategies.push_back(std::move(strategy));
  } else if (auto call = dyn_cast<func::CallOp>(op)) {
    // The callee was propagated first: its signature is the contract.
    auto callee =
        SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op,
                                                           call.getCalleeAttr());
    Strategy strategy;
    for (OpOperand &use : op->getOpOperands()) {
      if (!isTracked(use.get()))
        continue;
      addSlot(use);
      auto attr = callee ? callee.getArgAttrOfType<LayoutAttr>(
                               use.getOperandNumber(),
                               DTensorDialect::getLayoutAttrName())
                         : LayoutAttr();
      int64_t rank = cast<RankedTensorType>(use.get().getType()).getRank();
      strategy.operands.push_back(attr ? toLayout(attr, rank)
                                       : replicated(mesh));
    }
    for (Value result : info.results) {
      unsigned number = cast<OpResult>(result).getResultNumber();
      auto attr = callee ? callee.getResultAttrOfType<LayoutAttr>(
                               number, DTensorDialect::getLayoutAttrName())
                         : LayoutAttr();
      int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
      strategy.results.push_back(attr ? toLayout(attr, rank)
                                      : replicated(mesh));
    }
    strategies.push_back(std::move(strategy));
  } else if (auto custom = dyn_cast<CustomCallOp>(op)) {
    // Without strategies a custom op runs replicated, as PyTorch's default.
    if (custom.getStrategiesAttr()) {
      for (OpOperand &use : custom.getInputsMutable())
        addSlot(use);
      addSlot(custom.getInitMutable());
      strategies = getCustomCallStrategies(custom, mesh, compute);
    } else {
      replicateAll();
    }
  } else if (std::optional<ShardingRule> rule = getShardingRule(op)) {
    for (unsigned number : rule->tensorOperands)
      addSlot(op->getOpOperand(number));
    ComputeParams params = compute;
    params.usPerPoint *= getArithmeticPerPoint(op);
    strategies = enumerateStrategies(*rule, mesh, params);
  } else {
    op->emitRemark() << "no sharding rule for '" << op->getName()
                     << "'; replicated";
    replicateAll();
  }
  if (strategies.empty()) {
    // A rule whose every strategy is invalid on this mesh (e.g. a unit
    // factor everywhere) still runs replicated.
    info.slots.clear();
    operands.clear();
    replicateAll();
  }

  // Tensors captured by regions are read whole by the body.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value value : captured) {
    if (!isTracked(value))
      continue;
    SmallVector<OpOperand *, 1> uses;
    for (OpOperand &use : value.getUses())
      if (op->isProperAncestor(use.getOwner()))
        uses.push_back(&use);
    info.slots.push_back(std::move(uses));
    operands.push_back(value);
    for (Strategy &strategy : strategies)
      strategy.operands.push_back(replicated(mesh));
  }
  addNode(std::move(info), std::move(operands), std::move(strategies));
}

void FunctionPropagation::buildNodes() {
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    addValue(arg);
    std::vector<Strategy> strategies;
    auto it = assertions.find(arg);
    if (it != assertions.end()) {
      for (Layout &layout : getAdmittedLayouts(type, it->second))
        strategies.push_back(Strategy{{}, {std::move(layout)}, 0.0});
    } else {
      std::vector<int64_t> shape(type.getShape());
      for (Layout &layout : enumerateShardLayouts(shape, mesh))
        strategies.push_back(Strategy{{}, {std::move(layout)}, 0.0});
    }
    NodeInfo info{NodeInfo::Kind::Argument, nullptr, arg.getArgNumber()};
    info.results.push_back(arg);
    // The argument's own claim is already its only strategy.
    nodes.push_back(std::move(info));
    problem.addNode({}, {valueIds.at(arg)}, std::move(strategies));
  }
  Operation *terminator = func.getBody().front().getTerminator();
  for (Operation &op : func.getBody().front()) {
    if (&op == terminator || isa<tensor::DimOp>(op))
      // tensor.dim reads the global shape, which every layout knows.
      continue;
    bool touchesTensors =
        llvm::any_of(op.getResultTypes(), llvm::IsaPred<RankedTensorType>) ||
        llvm::any_of(op.getOperands(),
                     [&](Value v) { return valueIds.contains(v); });
    if (!touchesTensors) {
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(op.getRegions(), captured);
      touchesTensors = llvm::any_of(
          captured, [&](Value v) { return valueIds.contains(v); });
    }
    if (touchesTensors)
      addOpNode(&op);
  }
  for (OpOperand &use : terminator->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(use.get().getType());
    if (!type)
      continue;
    unsigned number = use.getOperandNumber();
    std::vector<Strategy> strategies;
    if (auto attr = func.getResultAttrOfType<LayoutAttr>(
            number, DTensorDialect::getLayoutAttrName())) {
      strategies.push_back(Strategy{{toLayout(attr, type.getRank())}, {}, 0});
    } else {
      std::vector<int64_t> shape(type.getShape());
      for (Layout &layout : enumerateShardLayouts(shape, mesh))
        strategies.push_back(Strategy{{std::move(layout)}, {}, 0.0});
    }
    NodeInfo info{NodeInfo::Kind::Result, nullptr, number};
    info.slots.push_back({&use});
    nodes.push_back(std::move(info));
    problem.addNode({valueIds.at(use.get())}, {}, std::move(strategies));
  }
}

void FunctionPropagation::materialize(const std::vector<int> &choice,
                                      PropagationCounts &counts) {
  MLIRContext *context = func.getContext();
  StringAttr layoutsName =
      StringAttr::get(context, DTensorDialect::getResultLayoutsAttrName());
  // The layout each value ends up with.
  DenseMap<Value, Layout> produced;
  for (auto [nodeId, info] : llvm::enumerate(nodes)) {
    const Strategy &strategy = problem.getStrategy(nodeId, choice[nodeId]);
    for (auto [value, layout] : llvm::zip_equal(info.results,
                                                strategy.results))
      produced[value] = layout;
    switch (info.kind) {
    case NodeInfo::Kind::Argument:
      func.setArgAttr(info.index, DTensorDialect::getLayoutAttrName(),
                      getAttr(strategy.results.front()));
      break;
    case NodeInfo::Kind::Result:
      func.setResultAttr(info.index, DTensorDialect::getLayoutAttrName(),
                         getAttr(strategy.operands.front()));
      break;
    case NodeInfo::Kind::Op: {
      // The open mesh dims are chosen: the claim becomes a whole layout.
      LayoutAttr chosen = getAttr(strategy.results.front());
      if (auto distribute = dyn_cast<DistributeOp>(info.op);
          distribute && distribute.getOpenMeshDims()) {
        distribute.setLayoutAttr(chosen);
        distribute.removeOpenMeshDimsAttr();
      } else if (auto request = dyn_cast<ToLayoutOp>(info.op);
                 request && request.getOpenMeshDims()) {
        request.setLayoutAttr(chosen);
        request.removeOpenMeshDimsAttr();
      }
      if (isa<DistributeOp, RedistributeOp, ToLayoutOp>(info.op))
        break;
      if (info.missedClaim)
        info.op->emitRemark()
            << "cannot produce the layout a user asks for; its result is "
               "redistributed";
      SmallVector<Attribute> layouts;
      unsigned next = 0;
      for (Value result : info.op->getResults())
        layouts.push_back(isa<RankedTensorType>(result.getType())
                              ? Attribute(getAttr(strategy.results[next++]))
                              : Attribute(UnitAttr::get(context)));
      info.op->setAttr(layoutsName, ArrayAttr::get(context, layouts));
      break;
    }
    }
  }

  // Group the uses of each value by the layout their node needs; with
  // `explain`, remember the first node (and its slot) that needs each.
  llvm::MapVector<Value, std::vector<std::pair<Layout, SmallVector<OpOperand *>>>>
      needs;
  std::map<std::pair<const void *, std::string>, std::pair<int, unsigned>>
      demanders;
  for (auto [nodeId, info] : llvm::enumerate(nodes)) {
    const Strategy &strategy = problem.getStrategy(nodeId, choice[nodeId]);
    for (auto [slot, uses] : llvm::enumerate(info.slots)) {
      if (uses.empty())
        continue;
      Value value = uses.front()->get();
      const Layout &layout = strategy.operands[slot];
      if (layout == produced.at(value))
        continue;
      auto &groups = needs[value];
      auto group = llvm::find_if(
          groups, [&](const auto &entry) { return entry.first == layout; });
      if (group == groups.end()) {
        groups.push_back({layout, {}});
        group = std::prev(groups.end());
        if (explain)
          demanders[{value.getAsOpaquePointer(), layout::str(layout)}] = {
              static_cast<int>(nodeId), static_cast<unsigned>(slot)};
      }
      group->second.append(uses.begin(), uses.end());
    }
  }

  OpBuilder builder(context);
  Block &body = func.getBody().front();
  for (auto &[value, groups] : needs) {
    Operation *producer = value.getDefiningOp();
    bool rematerialize = isRematerializable(producer);
    for (auto &[layout, uses] : groups) {
      Value replacement;
      if (rematerialize) {
        builder.setInsertionPointAfter(producer);
        Operation *clone = builder.clone(*producer);
        clone->setAttr(layoutsName,
                       ArrayAttr::get(context, {getAttr(layout)}));
        replacement = clone->getResult(0);
        ++counts.recreated;
      } else {
        // Just before the first user in the function body.
        Operation *first = nullptr;
        for (OpOperand *use : uses) {
          Operation *owner = body.findAncestorOpInBlock(*use->getOwner());
          if (!first || owner->isBeforeInBlock(first))
            first = owner;
        }
        builder.setInsertionPoint(first);
        replacement = RedistributeOp::create(
            builder, first->getLoc(), value.getType(), value,
            getAttr(produced.at(value)), getAttr(layout));
        ++counts.redistributes;
        if (explain) {
          auto [nodeId, slot] = demanders.at(
              {value.getAsOpaquePointer(), layout::str(layout)});
          explainRedistribute(nodeId, slot, choice[nodeId], produced.at(value),
                              layout, produced);
        }
      }
      for (OpOperand *use : uses)
        use->set(replacement);
    }
    // A recreated producer nobody reads any more is dropped.
    if (rematerialize && producer->use_empty())
      producer->erase();
  }

  // The input of each to_layout now has its layout: it is a distribute.
  for (Operation &op : llvm::make_early_inc_range(body)) {
    auto request = dyn_cast<ToLayoutOp>(op);
    if (!request)
      continue;
    builder.setInsertionPoint(request);
    auto distribute =
        DistributeOp::create(builder, request.getLoc(), request.getInput(),
                             request.getLayout(), /*open_mesh_dims=*/nullptr);
    request.replaceAllUsesWith(distribute.getResult());
    request.erase();
  }
}

void FunctionPropagation::explainRedistribute(
    int nodeId, unsigned slot, int chosen, const Layout &from,
    const Layout &to, const DenseMap<Value, Layout> &produced) {
  const NodeInfo &info = nodes[nodeId];
  auto valueOf = [&](unsigned s) { return info.slots[s].front()->get(); };
  double moveUs =
      problem.redistributeTimeUs(valueIds.at(valueOf(slot)), from, to);
  auto layouts = [](const std::vector<Layout> &list) {
    std::string text;
    for (const Layout &layout : list)
      text += (text.empty() ? "" : ", ") + layout::str(layout);
    return text.empty() ? std::string("-") : text;
  };
  // Each strategy of the node, priced with its operands' producers as
  // chosen: local cost plus the redistributes its operands would need.
  struct Priced {
    int index;
    double localUs, movesUs;
  };
  std::vector<Priced> priced;
  for (int count = 0; count < problem.getNumStrategies(nodeId); ++count) {
    const Strategy &strategy = problem.getStrategy(nodeId, count);
    double moves = 0;
    for (unsigned s = 0; s < info.slots.size(); ++s) {
      if (info.slots[s].empty())
        continue;
      Value operand = valueOf(s);
      // A recreated producer (an empty tensor, a constant) costs nothing.
      if (isRematerializable(operand.getDefiningOp()))
        continue;
      auto it = produced.find(operand);
      if (it != produced.end() && it->second != strategy.operands[s])
        moves += problem.redistributeTimeUs(valueIds.at(operand), it->second,
                                            strategy.operands[s]);
    }
    priced.push_back({count, strategy.costUs, moves});
  }
  std::stable_sort(priced.begin(), priced.end(),
                   [](const Priced &a, const Priced &b) {
                     return a.localUs + a.movesUs < b.localUs + b.movesUs;
                   });
  std::string list;
  llvm::raw_string_ostream os(list);
  size_t shown = 0;
  for (const Priced &p : priced) {
    if (shown == 8 && p.index != chosen)
      continue;
    const Strategy &strategy = problem.getStrategy(nodeId, p.index);
    os << (shown ? "; " : "") << "#" << p.index << " "
       << layouts(strategy.operands) << " -> " << layouts(strategy.results)
       << ": " << llvm::format("%.3g + %.3g = %.3g", p.localUs, p.movesUs,
                               p.localUs + p.movesUs)
       << (p.index == chosen ? " (chosen)" : "");
    ++shown;
  }
  if (priced.size() > shown)
    os << "; " << priced.size() - shown << " more";
  Location loc = info.kind == NodeInfo::Kind::Result
                     ? func.getBody().front().getTerminator()->getLoc()
                     : info.op->getLoc();
  std::string what =
      info.kind == NodeInfo::Kind::Result
          ? "the function's result #" + std::to_string(info.index)
          : "this op (" + info.op->getName().getStringRef().str();
  // A model plan's ops are located in their module: name it.
  if (auto module = dyn_cast<NameLoc>(loc); module && info.op)
    what += ", module '" + module.getName().str() + "'";
  if (info.op)
    what += ")";
  std::string cost;
  llvm::raw_string_ostream(cost) << llvm::format(" (%.3g us)", moveUs);
  emitRemark(loc) << "explain: operand #" << slot
                  << " is redistributed from " << layout::str(from) << " to "
                  << layout::str(to) << cost << " for " << what
                  << ", whose chosen strategy #" << chosen << " needs "
                  << layout::str(to)
                  << "; its strategies, given its operands' producers "
                     "(local + redistributes = total us): "
                  << list;
}

LogicalResult FunctionPropagation::run(unsigned maxSweeps,
                                       PropagationCounts &counts) {
  if (failed(collectAssertions()))
    return failure();
  buildNodes();
  unsigned sweeps = 0;
  std::vector<int> choice = problem.solve(maxSweeps, &sweeps);
  counts.sweeps += sweeps;
  materialize(choice, counts);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// The mesh references a function uses, with a location for each.
struct MeshUse {
  FlatSymbolRefAttr mesh;
  Location loc;
};

/// Finds the one mesh `func` uses; null when it uses none. Two meshes are
/// an error.
FailureOr<FlatSymbolRefAttr> getFunctionMesh(func::FuncOp func) {
  std::optional<MeshUse> found;
  auto use = [&](LayoutAttr layout, Location loc) -> LogicalResult {
    if (!layout)
      return success();
    if (!found) {
      found = MeshUse{layout.getMesh(), loc};
      return success();
    }
    if (found->mesh == layout.getMesh())
      return success();
    InFlightDiagnostic diag =
        emitError(loc) << "function '" << func.getSymName() << "' uses mesh "
                       << layout.getMesh() << " here and mesh " << found->mesh
                       << " elsewhere; propagation needs one mesh per function";
    diag.attachNote(found->loc) << "mesh " << found->mesh << " is used here";
    return failure();
  };
  StringRef name = DTensorDialect::getLayoutAttrName();
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (failed(use(func.getArgAttrOfType<LayoutAttr>(i, name),
                   func.getArgument(i).getLoc())))
      return failure();
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (failed(use(func.getResultAttrOfType<LayoutAttr>(i, name),
                   func.getLoc())))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    LogicalResult result = success();
    if (auto distribute = dyn_cast<DistributeOp>(op))
      result = use(distribute.getLayout(), op->getLoc());
    else if (auto request = dyn_cast<ToLayoutOp>(op))
      result = use(request.getLayout(), op->getLoc());
    else if (auto redistribute = dyn_cast<RedistributeOp>(op))
      result = use(redistribute.getSource(), op->getLoc());
    else if (auto localMap = dyn_cast<LocalMapOp>(op)) {
      for (Attribute layout : localMap.getInLayouts())
        if (succeeded(result))
          result = use(cast<LayoutAttr>(layout), op->getLoc());
      for (Attribute layout : localMap.getOutLayouts())
        if (succeeded(result))
          result = use(cast<LayoutAttr>(layout), op->getLoc());
    }
    else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          op, call.getCalleeAttr());
      for (unsigned i = 0, e = callee ? callee.getNumArguments() : 0;
           i < e && succeeded(result); ++i)
        result = use(callee.getArgAttrOfType<LayoutAttr>(i, name),
                     op->getLoc());
      for (unsigned i = 0, e = callee ? callee.getNumResults() : 0;
           i < e && succeeded(result); ++i)
        result = use(callee.getResultAttrOfType<LayoutAttr>(i, name),
                     op->getLoc());
    }
    return failed(result) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return found ? found->mesh : FlatSymbolRefAttr();
}

struct Propagate : public dtensor::impl::PropagateBase<Propagate> {
  using PropagateBase::PropagateBase;

  void runOnOperation() override;

private:
  /// Orders functions so that callees come before callers.
  LogicalResult orderFunctions(SmallVectorImpl<func::FuncOp> &order);
  LogicalResult propagate(func::FuncOp func);

  PropagationCounts total;
};

} // namespace

LogicalResult Propagate::orderFunctions(SmallVectorImpl<func::FuncOp> &order) {
  ModuleOp module = getOperation();
  enum class Mark { InProgress, Done };
  DenseMap<Operation *, Mark> marks;
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp func) -> LogicalResult {
    auto [it, inserted] = marks.try_emplace(func, Mark::InProgress);
    if (!inserted)
      return success();
    WalkResult walk = func.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
      if (!callee)
        return WalkResult::advance();
      auto mark = marks.find(callee);
      if (mark != marks.end() && mark->second == Mark::InProgress) {
        call.emitError() << "recursive call to '" << callee.getSymName()
                         << "': propagation needs an acyclic call graph";
        return WalkResult::interrupt();
      }
      return failed(visit(callee)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    marks[func] = Mark::Done;
    order.push_back(func);
    return success();
  };
  for (auto func : module.getOps<func::FuncOp>())
    if (failed(visit(func)))
      return failure();
  return success();
}

LogicalResult Propagate::propagate(func::FuncOp func) {
  if (func.isExternal())
    return success();
  FailureOr<FlatSymbolRefAttr> meshRef = getFunctionMesh(func);
  if (failed(meshRef))
    return failure();
  // A function with no layout anywhere is not distributed: it runs whole
  // on every rank, as it is.
  if (!*meshRef)
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << "propagation supports functions with a single block";
  // The verifier resolved every layout's mesh before any pass runs.
  MeshOp mesh = lookupMesh(func, *meshRef);
  assert(mesh && "layouts of a verified module name existing meshes");
  for (Operation &op : func.getBody().front()) {
    WalkResult nested = op.walk([&](Operation *inner) {
      if (inner != &op &&
          isa<DistributeOp, RedistributeOp, ToLayoutOp>(inner)) {
        inner->emitError()
            << "layout constraints must be at the top level of a function";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return failure();
  }
  layout::CostParams costs;
  costs.callUs = callUs;
  costs.latencyUs = latencyUs;
  costs.bandwidthGBps = bandwidthGBps;
  ComputeParams compute;
  compute.usPerPoint = 1.0 / (computeGflops * 1e3);
  compute.headTailMeshDims = getHeadTailMeshDims(func, mesh.getRank());
  FunctionPropagation propagation(func, mesh, *meshRef, costs, compute,
                                  explain);
  PropagationCounts counts;
  if (failed(propagation.run(maxSweeps, counts)))
    return failure();
  ++total.functions;
  total.redistributes += counts.redistributes;
  total.recreated += counts.recreated;
  total.sweeps += counts.sweeps;
  return success();
}

void Propagate::runOnOperation() {
  if (callUs < 0 || latencyUs < 0 || bandwidthGBps <= 0 ||
      computeGflops <= 0) {
    getOperation().emitError()
        << "dtensor-propagate: call-us and latency-us must be >= 0, "
           "bandwidth-gbps and compute-gflops > 0";
    return signalPassFailure();
  }
  SmallVector<func::FuncOp> order;
  if (failed(orderFunctions(order)))
    return signalPassFailure();
  total = {};
  for (func::FuncOp func : order)
    if (failed(propagate(func)))
      return signalPassFailure();
  // MLIR's own pass statistics are compiled out of release builds of MLIR
  // (Debian's among them), so the counts are a remark.
  if (statistics)
    emitRemark(getOperation().getLoc())
        << "dtensor-propagate: " << total.functions << " functions given "
        << "layouts, " << total.redistributes << " redistributes inserted, "
        << total.recreated << " producers recreated, " << total.sweeps
        << " improvement sweeps";
}

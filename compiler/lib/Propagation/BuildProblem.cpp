//===- BuildProblem.cpp - A function as the solver's problem --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The function becomes a propagation::Problem: one node per tensor
// argument, per op touching tensors and per returned tensor, each with its
// candidate strategies. The users' layout claims (assertions) come first:
// they fix or narrow the strategies of the nodes they touch.
//
//===----------------------------------------------------------------------===//

#include "CustomCallStrategies.h"
#include "FunctionPropagation.h"
#include "RuleStrategies.h"

#include "dtensor/Analysis/ElementBytes.h"
#include "dtensor/Analysis/ShardingRuleRegistry.h"
#include "dtensor/Autodiff/BackwardMark.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <string>

using namespace mlir;
using namespace dtensor;
using propagation::Assertion;
using propagation::FunctionPropagation;
using propagation::Layout;
using propagation::NodeInfo;
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
    return static_cast<double>(linalgOp.getBlock()->getOperations().size() - 1);
  }
  // One addition per update element; its rule's points also count the
  // table's rows, which no loop runs over.
  if (auto scatter = dyn_cast<ScatterAddOp>(op)) {
    int64_t rows = scatter.getInit().getType().getDimSize(0);
    return ShapedType::isDynamic(rows) || rows == 0 ? 1.0 : 1.0 / rows;
  }
  return 1.0;
}

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

} // namespace

bool propagation::isRematerializable(Operation *op) {
  return op && isa<tensor::EmptyOp, arith::ConstantOp>(op);
}

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
  InFlightDiagnostic diag =
      emitError(loc) << "conflicting layouts for one value: " << describe(claim)
                     << " here, but " << describe(old) << " before";
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
        failed(addAssertion(arg, toLayout(attr, type.getRank()), arg.getLoc())))
      return failure();
  }
  for (Operation &op : func.getBody().front()) {
    if (auto distribute = dyn_cast<DistributeOp>(op)) {
      int64_t rank = distribute.getInput().getType().getRank();
      Layout layout = toLayout(distribute.getLayout(), rank);
      std::vector<bool> open =
          getOpenFlags(distribute.getOpenMeshDims(), layout.size());
      if (failed(
              addAssertion(distribute.getInput(), layout, op.getLoc(), open)) ||
          failed(
              addAssertion(distribute.getResult(), layout, op.getLoc(), open)))
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
    if (failed(addAssertion(
            result, localMapLayout(op.getOutLayout(index), result.getType()),
            op.getLoc())))
      return failure();
  if (op.getRedistributeInputs())
    return success();
  for (auto [index, input] : llvm::enumerate(op.getInputs()))
    if (failed(addAssertion(
            input, localMapLayout(op.getInLayout(index), input.getType()),
            op.getLoc())))
      return failure();
  return success();
}

void FunctionPropagation::addValue(Value value) {
  Operation *producer = value.getDefiningOp();
  propagation::ValueInfo info;
  auto type = cast<RankedTensorType>(value.getType());
  for (int64_t size : type.getShape())
    info.shape.push_back(ShapedType::isDynamic(size) ? layout::kDynamic : size);
  info.elementBytes = getElementBytes(type);
  info.rematerializable = isRematerializable(producer);
  if (producer && numGradients > 1 &&
      !autodiff::getBackwardMark(producer->getLoc()).gradientOf.empty())
    info.fixedCostShare = 1.0 / numGradients;
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
    for (Layout &layout : getAdmittedLayouts(
             cast<RankedTensorType>(result.getType()), getAssertion(result)))
      strategies.push_back(Strategy{{layout}, {layout}, 0.0});
  } else if (auto redistribute = dyn_cast<RedistributeOp>(op)) {
    addSlot(redistribute.getInputMutable());
    strategies.push_back(Strategy{{claimed(redistribute.getInput())},
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
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        op, call.getCalleeAttr());
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
  // The weights' gradients, whose reductions share one bucket.
  numGradients = 0;
  for (Operation &op : func.getBody().front())
    if (!autodiff::getBackwardMark(op.getLoc()).gradientOf.empty())
      ++numGradients;
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
      touchesTensors =
          llvm::any_of(captured, [&](Value v) { return valueIds.contains(v); });
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

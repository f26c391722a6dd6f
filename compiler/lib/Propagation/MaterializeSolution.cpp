//===- MaterializeSolution.cpp - The solver's choice written back ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each node's chosen strategy becomes attributes: the layouts of the
// function's arguments and results, of each op's results, and of the open
// mesh dims of a distribute or to_layout. Where a user needs another layout
// than its operand's producer gives, a dtensor.redistribute is inserted (or
// a cheap producer recreated), one per value and needed layout.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <string>
#include <utility>

#define DEBUG_TYPE "dtensor-propagate"

using namespace mlir;
using namespace dtensor;
using propagation::FunctionPropagation;
using propagation::Layout;
using propagation::NodeInfo;
using propagation::Strategy;

void FunctionPropagation::materialize(const std::vector<int> &choice,
                                      PropagationCounts &counts) {
  MLIRContext *context = func.getContext();
  StringAttr layoutsName =
      StringAttr::get(context, DTensorDialect::getResultLayoutsAttrName());
  // The layout each value ends up with.
  DenseMap<Value, Layout> produced;
  for (auto [nodeId, info] : llvm::enumerate(nodes)) {
    const Strategy &strategy = problem.getStrategy(nodeId, choice[nodeId]);
    for (auto [value, layout] : llvm::zip_equal(info.results, strategy.results))
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
  llvm::MapVector<Value,
                  std::vector<std::pair<Layout, SmallVector<OpOperand *>>>>
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
        clone->setAttr(layoutsName, ArrayAttr::get(context, {getAttr(layout)}));
        replacement = clone->getResult(0);
        ++counts.recreated;
        LLVM_DEBUG(llvm::dbgs()
                   << DEBUG_TYPE ": recreated " << producer->getName()
                   << " at " << producer->getLoc() << " in layout "
                   << layout::str(layout) << "\n");
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
        LLVM_DEBUG(llvm::dbgs()
                   << DEBUG_TYPE ": redistribute before " << first->getName()
                   << " at " << first->getLoc() << ": "
                   << layout::str(produced.at(value)) << " -> "
                   << layout::str(layout) << "\n");
        if (explain) {
          auto [nodeId, slot] =
              demanders.at({value.getAsOpaquePointer(), layout::str(layout)});
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

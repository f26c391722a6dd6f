//===- ExplainRedistribute.cpp - Why propagation redistributes ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// With `explain`, each inserted redistribute gets a remark at the node that
// needs it: the move's price and the node's strategies, each priced with its
// operands' producers as chosen, so that one sees why the solver preferred
// moving the operand. Ops of the backward (Autodiff/BackwardMark.h) say so,
// and a gradient names its weight: the layout that gradient is given is
// what forces a reduction of it, or gathers of what computes it.
//
//===----------------------------------------------------------------------===//

#include "FunctionPropagation.h"

#include "dtensor/Autodiff/BackwardMark.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>
#include <string>

using namespace mlir;
using namespace dtensor;
using propagation::FunctionPropagation;
using propagation::Layout;
using propagation::NodeInfo;
using propagation::Strategy;

void FunctionPropagation::findGradients() {
  for (Operation &op : func.getBody().front()) {
    autodiff::BackwardMark mark = autodiff::getBackwardMark(op.getLoc());
    std::optional<GradientOrigin> origin;
    if (!mark.gradientOf.empty()) {
      origin = GradientOrigin{mark.gradientOf, /*derived=*/false};
    } else if (!mark.backward) {
      // An op after the backward (clipping, the optimizer) that reads the
      // gradient of one weight and no other.
      for (Value operand : op.getOperands()) {
        auto it = gradients.find(operand);
        if (it == gradients.end())
          continue;
        if (origin && origin->weight != it->second.weight) {
          origin.reset();
          break;
        }
        origin = GradientOrigin{it->second.weight, /*derived=*/true};
      }
    }
    if (origin)
      for (Value result : op.getResults())
        gradients.try_emplace(result, *origin);
  }
}

void FunctionPropagation::explainRedistribute(
    int nodeId, unsigned slot, int chosen, const Layout &from, const Layout &to,
    const DenseMap<Value, Layout> &produced) {
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
       << ": "
       << llvm::format("%.3g + %.3g = %.3g", p.localUs, p.movesUs,
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
  if (auto module = dyn_cast<NameLoc>(autodiff::getUnmarkedLoc(loc));
      module && info.op)
    what += ", module '" + module.getName().str() + "'";
  if (info.op) {
    autodiff::BackwardMark mark = autodiff::getBackwardMark(loc);
    if (!mark.gradientOf.empty()) {
      // The layout the strategy gives the gradient: what asks for the move.
      what += ", computing the gradient of '" + mark.gradientOf + "'";
      const Strategy &strategy = problem.getStrategy(nodeId, chosen);
      if (strategy.results.size() == 1)
        what += " as " + layout::str(strategy.results.front());
    } else if (mark.backward) {
      what += ", of the backward";
    }
    what += ")";
  }
  // The moved value, when it is a weight's gradient.
  std::string operand = "operand #" + std::to_string(slot);
  if (auto it = gradients.find(valueOf(slot)); it != gradients.end())
    operand += std::string(it->second.derived ? " (computed from the gradient "
                                                "of '"
                                              : " (the gradient of '") +
               it->second.weight + "')";
  std::string cost;
  llvm::raw_string_ostream costStream(cost);
  costStream << llvm::format(" (%.3g us", moveUs);
  // With a topology: the link of each mesh dim the move changes.
  const std::vector<layout::LinkCost> &links = problem.getParams().meshDimLinks;
  for (size_t dim = 0; dim < links.size() && dim < from.size(); ++dim)
    if (from[dim] != to[dim])
      costStream << ", mesh dim " << dim << " on " << links[dim].name;
  costStream << ")";
  emitRemark(loc) << "explain: " << operand << " is redistributed from "
                  << layout::str(from) << " to " << layout::str(to) << cost
                  << " for " << what << ", whose chosen strategy #" << chosen
                  << " needs " << layout::str(to)
                  << "; its strategies, given its operands' producers "
                     "(local + redistributes = total us): "
                  << list;
}

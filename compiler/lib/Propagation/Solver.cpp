//===- Solver.cpp - global choice of op sharding strategies ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Propagation/Solver.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace dtensor::propagation {

namespace {
/// A compact, exact key for a layout.
void appendKey(std::string &key, const Layout &layout) {
  for (const layout::Placement &p : layout) {
    key += static_cast<char>('0' + static_cast<int>(p.kind));
    if (p.isShard())
      key += std::to_string(p.dim) + (p.headTail ? "h" : "");
    else if (p.isPartial())
      key += static_cast<char>('a' + static_cast<int>(p.reduce));
    key += ',';
  }
  key += ';';
}

/// True when `candidate` is cheaper than `best` beyond rounding noise.
bool isCheaper(double candidate, double best) {
  return candidate < best - 1e-9 * std::max(1.0, std::fabs(best));
}
} // namespace

Problem::Problem(layout::Mesh mesh, layout::CostParams params)
    : mesh(std::move(mesh)), params(params) {}

int Problem::addValue(ValueInfo info) {
  values.push_back(Value{std::move(info), -1, -1, {}});
  return static_cast<int>(values.size()) - 1;
}

int Problem::addNode(std::vector<int> operands, std::vector<int> results,
                     std::vector<Strategy> strategies) {
  assert(!strategies.empty() && "a node needs a strategy");
  int id = static_cast<int>(nodes.size());
  for (const Strategy &strategy : strategies) {
    assert(strategy.operands.size() == operands.size() &&
           strategy.results.size() == results.size() &&
           "one layout per operand and result");
    (void)strategy;
  }
  for (size_t slot = 0; slot < operands.size(); ++slot) {
    Value &value = values.at(operands[slot]);
    assert(value.producer >= 0 && "operand used before it is produced");
    value.uses.push_back(Use{id, static_cast<int>(slot)});
  }
  for (size_t index = 0; index < results.size(); ++index) {
    Value &value = values.at(results[index]);
    assert(value.producer < 0 && "value produced twice");
    value.producer = id;
    value.producerResult = static_cast<int>(index);
  }
  std::vector<Choice> choices;
  for (const Strategy &strategy : strategies) {
    Choice choice{{}, {}, strategy.costUs};
    for (const Layout &layout : strategy.operands)
      choice.operands.push_back(intern(layout));
    for (const Layout &layout : strategy.results)
      choice.results.push_back(intern(layout));
    choices.push_back(std::move(choice));
  }
  nodes.push_back(Node{std::move(operands), std::move(results),
                       std::move(strategies), std::move(choices)});
  return id;
}

int Problem::intern(const Layout &layout) {
  std::string key;
  appendKey(key, layout);
  auto [it, inserted] =
      layoutIds.try_emplace(key, static_cast<int>(layouts.size()));
  if (inserted)
    layouts.push_back(layout);
  return it->second;
}

double Problem::redistributeTimeUs(int value, const Layout &source,
                                   const Layout &target) {
  return redistributeTimeUs(value, intern(source), intern(target));
}

const layout::CostParams &Problem::getSharedFixedCost(double share) {
  auto [it, inserted] = sharedFixedCostParams.try_emplace(share, params);
  if (inserted) {
    layout::CostParams &shared = it->second;
    shared.callUs *= share;
    shared.latencyUs *= share;
    for (layout::LinkCost &link : shared.meshDimLinks)
      link.latencyUs *= share;
  }
  return it->second;
}

double Problem::redistributeTimeUs(int value, int source, int target) {
  if (source == target)
    return 0.0;
  assert(source < (1 << 20) && target < (1 << 20) && value < (1 << 23) &&
         "cache key fields overflow");
  uint64_t key = (static_cast<uint64_t>(value) << 40) |
                 (static_cast<uint64_t>(source) << 20) |
                 static_cast<uint64_t>(target);
  auto it = redistributeCache.find(key);
  if (it != redistributeCache.end())
    return it->second;
  const ValueInfo &info = values[value].info;
  double time = layout::redistributeTimeUs(
      info.shape, info.elementBytes, layouts[source], layouts[target], mesh,
      info.fixedCostShare == 1.0 ? params
                                 : getSharedFixedCost(info.fixedCostShare));
  redistributeCache.emplace(key, time);
  return time;
}

double Problem::valueCost(int value, const std::vector<int> &choice) {
  const Value &v = values[value];
  if (v.info.rematerializable || v.producer < 0 || choice[v.producer] < 0)
    return 0.0;
  int produced =
      nodes[v.producer].choices[choice[v.producer]].results[v.producerResult];
  // One redistribute serves every user that needs the same layout.
  std::vector<int> &needed = scratch;
  needed.clear();
  double cost = 0.0;
  for (const Use &use : v.uses) {
    if (choice[use.node] < 0)
      continue;
    int layout = nodes[use.node].choices[choice[use.node]].operands[use.slot];
    if (layout == produced ||
        std::find(needed.begin(), needed.end(), layout) != needed.end())
      continue;
    needed.push_back(layout);
    cost += redistributeTimeUs(value, produced, layout);
  }
  return cost;
}

double Problem::localCost(int node, std::vector<int> &choice, int strategy) {
  int saved = choice[node];
  choice[node] = strategy;
  double cost = scopeCost({node}, choice);
  choice[node] = saved;
  return cost;
}

int Problem::bestResponse(int node, std::vector<int> &choice) {
  int best = choice[node];
  double bestCost = localCost(node, choice, best);
  int count = static_cast<int>(nodes[node].strategies.size());
  for (int strategy = 0; strategy < count; ++strategy) {
    double cost = localCost(node, choice, strategy);
    if (isCheaper(cost, bestCost)) {
      best = strategy;
      bestCost = cost;
    }
  }
  return best;
}

double Problem::scopeCost(const std::vector<int> &scope,
                          const std::vector<int> &choice) {
  std::vector<int> touched;
  double cost = 0.0;
  for (int node : scope) {
    const Node &n = nodes[node];
    cost += n.choices[choice[node]].costUs;
    touched.insert(touched.end(), n.operands.begin(), n.operands.end());
    touched.insert(touched.end(), n.results.begin(), n.results.end());
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (int value : touched)
    cost += valueCost(value, choice);
  return cost;
}

bool Problem::improve(int node, std::vector<int> &choice) {
  const Node &n = nodes[node];
  // Producers that may follow this node's move: an op and the op preparing
  // its operand (e.g. a matmul and the fill of its accumulator) often only
  // pay off when they change together.
  std::vector<int> partners;
  for (int value : n.operands) {
    int producer = values[value].producer;
    if (producer != node && choice[producer] >= 0 &&
        nodes[producer].strategies.size() > 1 &&
        std::find(partners.begin(), partners.end(), producer) ==
            partners.end())
      partners.push_back(producer);
  }
  std::vector<int> scope{node};
  scope.insert(scope.end(), partners.begin(), partners.end());

  int current = choice[node];
  std::vector<int> original;
  for (int partner : partners)
    original.push_back(choice[partner]);
  int best = current;
  std::vector<int> bestPartners = original;
  double bestCost = 0.0;
  if (current >= 0)
    bestCost = scopeCost(scope, choice);
  int count = static_cast<int>(n.strategies.size());
  for (int strategy = 0; strategy < count; ++strategy) {
    choice[node] = strategy;
    for (int partner : partners)
      choice[partner] = bestResponse(partner, choice);
    double cost = scopeCost(scope, choice);
    if (best < 0 || isCheaper(cost, bestCost)) {
      best = strategy;
      bestCost = cost;
      for (size_t i = 0; i < partners.size(); ++i)
        bestPartners[i] = choice[partners[i]];
    }
    for (size_t i = 0; i < partners.size(); ++i)
      choice[partners[i]] = original[i];
  }
  choice[node] = best;
  bool changed = best != current;
  for (size_t i = 0; i < partners.size(); ++i) {
    changed |= bestPartners[i] != original[i];
    choice[partners[i]] = bestPartners[i];
  }
  return changed;
}

std::vector<int> Problem::search(bool forwardStart, unsigned maxSweeps,
                                 unsigned &sweeps) {
  int count = getNumNodes();
  std::vector<int> choice(count, -1);
  // Greedy start: each node sees only the nodes decided before it.
  if (forwardStart)
    for (int node = 0; node < count; ++node)
      improve(node, choice);
  else
    for (int node = count - 1; node >= 0; --node)
      improve(node, choice);
  for (unsigned sweep = 0; sweep < maxSweeps; ++sweep) {
    ++sweeps;
    bool changed = false;
    for (int node = count - 1; node >= 0; --node)
      changed |= improve(node, choice);
    for (int node = 0; node < count; ++node)
      changed |= improve(node, choice);
    if (!changed)
      break;
  }
  return choice;
}

std::vector<int> Problem::solve(unsigned maxSweeps, unsigned *sweeps) {
  // Two starts: producers first (layouts flow from the arguments) and users
  // first (layouts flow from what results need). Each is refined by sweeps;
  // the cheaper end point wins, the forward one on a tie.
  unsigned ran = 0;
  std::vector<int> forward = search(/*forwardStart=*/true, maxSweeps, ran);
  std::vector<int> backward = search(/*forwardStart=*/false, maxSweeps, ran);
  if (sweeps)
    *sweeps = ran;
  return isCheaper(totalCost(backward), totalCost(forward)) ? backward
                                                            : forward;
}

double Problem::totalCost(const std::vector<int> &choice) {
  assert(static_cast<int>(choice.size()) == getNumNodes() &&
         "one choice per node");
  double cost = 0.0;
  for (int node = 0; node < getNumNodes(); ++node)
    cost += nodes[node].choices[choice[node]].costUs;
  for (int value = 0; value < static_cast<int>(values.size()); ++value)
    cost += valueCost(value, choice);
  return cost;
}

} // namespace dtensor::propagation

//===- RedistributePlanTest.cpp - Tests for the redistribute planner ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The planner's steps are checked by running them on data: a small global
// tensor is distributed over a simulated mesh as the source layout says
// (Partials as random integer parts), every planned step is applied to the
// per-rank buffers by an independent implementation of its group semantics,
// and after each step the buffers must represent the global tensor under
// the layout the plan claims. This runs for every (source, target) pair on
// several meshes and even, uneven and partly empty shapes.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Planner/RedistributePlan.h"

#include "ChunkOracles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace {

using namespace dtensor::layout;
using Coord = std::vector<int64_t>;
using Layout = std::vector<Placement>;
using Step = RedistributeStep;

const Placement R = Placement::replicate();
Placement S(int64_t dim) { return Placement::shard(dim); }
Placement P(ReduceKind kind = ReduceKind::Sum) {
  return Placement::partial(kind);
}

//===----------------------------------------------------------------------===//
// Independent oracles: torch.chunk, mesh groups
//===----------------------------------------------------------------------===//

using oracle::allCoords;
using oracle::nestedPiece;

/// The simulated machine: one buffer per mesh coord (row-major).
struct World {
  std::vector<int64_t> meshShape;
  std::vector<Coord> coords;

  explicit World(std::vector<int64_t> shape)
      : meshShape(std::move(shape)), coords(allCoords(meshShape)) {}

  /// Groups over `meshDims`: each a list of coord positions ordered
  /// row-major over the listed dims, first listed most significant.
  std::vector<std::vector<size_t>>
  groups(const std::vector<int64_t> &meshDims) const {
    std::map<Coord, std::map<int64_t, size_t>> byRest;
    for (size_t pos = 0; pos < coords.size(); ++pos) {
      Coord rest = coords[pos];
      int64_t index = 0;
      for (int64_t d : meshDims) {
        index = index * meshShape[d] + coords[pos][d];
        rest[d] = -1;
      }
      byRest[rest][index] = pos;
    }
    std::vector<std::vector<size_t>> result;
    for (const auto &[rest, members] : byRest) {
      result.emplace_back();
      for (const auto &[index, pos] : members)
        result.back().push_back(pos);
    }
    return result;
  }

  /// Coordinates of coord `pos` on `meshDims` and those dims' sizes.
  std::pair<std::vector<int64_t>, std::vector<int64_t>>
  groupPosition(const std::vector<int64_t> &meshDims, size_t pos) const {
    std::vector<int64_t> index, sizes;
    for (int64_t d : meshDims) {
      index.push_back(coords[pos][d]);
      sizes.push_back(meshShape[d]);
    }
    return {index, sizes};
  }
};

//===----------------------------------------------------------------------===//
// Dense 2-D blocks
//===----------------------------------------------------------------------===//

/// Row-major rows x cols block of integer-valued doubles.
struct Block {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> data;

  Block() = default;
  Block(int64_t r, int64_t c) : rows(r), cols(c), data(r * c, 0.0) {}
  double &at(int64_t r, int64_t c) { return data[r * cols + c]; }
  double at(int64_t r, int64_t c) const { return data[r * cols + c]; }
  int64_t extent(int64_t dim) const { return dim == 0 ? rows : cols; }
};

/// Same shape and values. Values are compared with a rounding tolerance:
/// an avg over 3 ranks can leave thirds that a later sum adds inexactly.
bool sameValues(const Block &a, const Block &b) {
  if (a.rows != b.rows || a.cols != b.cols)
    return false;
  for (size_t e = 0; e < a.data.size(); ++e)
    if (std::fabs(a.data[e] - b.data[e]) >
        1e-9 * std::max(1.0, std::fabs(b.data[e])))
      return false;
  return true;
}

/// Sub-block at `offset` of extent `shape`.
Block subBlock(const Block &b, const Coord &offset, const Coord &shape) {
  Block out(shape[0], shape[1]);
  for (int64_t r = 0; r < shape[0]; ++r)
    for (int64_t c = 0; c < shape[1]; ++c)
      out.at(r, c) = b.at(offset[0] + r, offset[1] + c);
  return out;
}

/// Rows or columns [range) of `b`.
Block slice(const Block &b, int64_t dim, Range range) {
  Coord offset{0, 0}, shape{b.rows, b.cols};
  offset[dim] = range.begin;
  shape[dim] = range.size();
  return subBlock(b, offset, shape);
}

/// Blocks joined along `dim`; std::nullopt when the other dim disagrees.
std::optional<Block> concat(const std::vector<Block> &parts, int64_t dim) {
  int64_t other = 1 - dim;
  Coord shape{0, 0};
  shape[other] = parts.front().extent(other);
  for (const Block &p : parts) {
    if (p.extent(other) != shape[other])
      return std::nullopt;
    shape[dim] += p.extent(dim);
  }
  Block out(shape[0], shape[1]);
  int64_t at = 0;
  for (const Block &p : parts) {
    for (int64_t r = 0; r < p.rows; ++r)
      for (int64_t c = 0; c < p.cols; ++c)
        out.at(dim == 0 ? at + r : r, dim == 0 ? c : at + c) = p.at(r, c);
    at += p.extent(dim);
  }
  return out;
}

/// Elementwise reduction; std::nullopt when the shapes disagree.
std::optional<Block> reduce(const std::vector<Block> &parts, ReduceKind kind) {
  Block out = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].rows != out.rows || parts[i].cols != out.cols)
      return std::nullopt;
    for (size_t e = 0; e < out.data.size(); ++e) {
      double v = parts[i].data[e];
      double &acc = out.data[e];
      switch (kind) {
      case ReduceKind::Sum:
      case ReduceKind::Avg:
        acc += v;
        break;
      case ReduceKind::Max:
        acc = std::max(acc, v);
        break;
      case ReduceKind::Min:
        acc = std::min(acc, v);
        break;
      }
    }
  }
  if (kind == ReduceKind::Avg)
    for (double &v : out.data)
      v /= static_cast<double>(parts.size());
  return out;
}

//===----------------------------------------------------------------------===//
// Simulated steps
//===----------------------------------------------------------------------===//

using Buffers = std::vector<Block>;

/// Applies `step` to every rank's buffer by its group semantics; returns ""
/// or what went wrong (mismatched shapes between group members).
std::string simulate(const Step &step, const World &world, Buffers &bufs) {
  const std::vector<int64_t> &dims = step.meshDims;
  Buffers next = bufs;
  for (const std::vector<size_t> &group : world.groups(dims)) {
    std::vector<Block> mine;
    for (size_t pos : group)
      mine.push_back(bufs[pos]);
    switch (step.kind) {
    case Step::Kind::AllGather: {
      std::optional<Block> all = concat(mine, step.dim);
      if (!all)
        return "all_gather of mismatched pieces";
      for (size_t pos : group)
        next[pos] = *all;
      break;
    }
    case Step::Kind::AllReduce:
    case Step::Kind::ReduceScatter: {
      std::optional<Block> all = reduce(mine, step.reduce);
      if (!all)
        return "reduction of mismatched buffers";
      for (size_t pos : group) {
        next[pos] = *all;
        if (step.kind == Step::Kind::ReduceScatter) {
          auto [index, sizes] = world.groupPosition(dims, pos);
          next[pos] = slice(*all, step.dim,
                            nestedPiece(all->extent(step.dim), sizes, index));
        }
      }
      break;
    }
    case Step::Kind::AllToAll:
      // Member j receives, from every member i in group order, the piece
      // of i's buffer that j owns along toDim, and joins them along dim.
      for (size_t to : group) {
        auto [index, sizes] = world.groupPosition(dims, to);
        std::vector<Block> pieces;
        for (const Block &from : mine)
          pieces.push_back(
              slice(from, step.toDim,
                    nestedPiece(from.extent(step.toDim), sizes, index)));
        std::optional<Block> joined = concat(pieces, step.dim);
        if (!joined)
          return "all_to_all of mismatched pieces";
        next[to] = *joined;
      }
      break;
    case Step::Kind::Chunk:
      for (size_t pos : group) {
        auto [index, sizes] = world.groupPosition(dims, pos);
        next[pos] =
            slice(bufs[pos], step.dim,
                  nestedPiece(bufs[pos].extent(step.dim), sizes, index));
      }
      break;
    case Step::Kind::MarkPartial:
      if (step.reduce != ReduceKind::Sum)
        break;
      for (size_t i = 1; i < group.size(); ++i)
        std::fill(next[group[i]].data.begin(), next[group[i]].data.end(), 0.0);
      break;
    case Step::Kind::PadPartial: {
      // Each member: zeros of the joined size, its own piece in place.
      std::optional<Block> all = concat(mine, step.dim);
      if (!all)
        return "pad_partial of mismatched pieces";
      for (size_t pos : group) {
        auto [index, sizes] = world.groupPosition(dims, pos);
        Range piece = nestedPiece(all->extent(step.dim), sizes, index);
        Block padded(all->rows, all->cols);
        for (int64_t r = 0; r < all->rows; ++r)
          for (int64_t c = 0; c < all->cols; ++c) {
            int64_t at = step.dim == 0 ? r : c;
            if (at >= piece.begin && at < piece.end)
              padded.at(r, c) = all->at(r, c);
          }
        next[pos] = padded;
      }
      break;
    }
    }
  }
  bufs = std::move(next);
  return "";
}

//===----------------------------------------------------------------------===//
// Distributing and checking
//===----------------------------------------------------------------------===//

/// Splits `v` into `n` integer parts whose reduction with `kind` is `v`.
std::vector<Block> splitPartial(const Block &v, ReduceKind kind, int64_t n,
                                std::mt19937 &rng) {
  std::uniform_int_distribution<int> small(-3, 3), gap(0, 3);
  std::uniform_int_distribution<int64_t> member(0, n - 1);
  std::vector<Block> parts(n, Block(v.rows, v.cols));
  for (size_t e = 0; e < v.data.size(); ++e) {
    double x = v.data[e];
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Avg: {
      // avg parts sum to n * x so that their mean is x.
      double rest = kind == ReduceKind::Sum ? x : x * n;
      for (int64_t i = 0; i + 1 < n; ++i) {
        parts[i].data[e] = small(rng);
        rest -= parts[i].data[e];
      }
      parts[n - 1].data[e] = rest;
      break;
    }
    case ReduceKind::Max:
    case ReduceKind::Min: {
      int64_t holder = member(rng);
      for (int64_t i = 0; i < n; ++i) {
        double delta = i == holder ? 0 : gap(rng);
        parts[i].data[e] = kind == ReduceKind::Max ? x - delta : x + delta;
      }
      break;
    }
    }
  }
  return parts;
}

/// Per-rank buffers of `global` laid out as `layout`. Partial values are
/// split one mesh dim at a time from the last Partial dim down, so that
/// reducing in ascending mesh-dim order (the documented convention)
/// recovers `global`.
Buffers distribute(const Block &global, const Layout &layout,
                   const World &world, const Mesh &mesh, std::mt19937 &rng) {
  std::vector<int64_t> partialDims;
  for (size_t d = 0; d < layout.size(); ++d)
    if (layout[d].isPartial())
      partialDims.push_back(static_cast<int64_t>(d));
  std::map<Coord, Block> leaves{{Coord(partialDims.size(), 0), global}};
  for (size_t i = partialDims.size(); i-- > 0;) {
    int64_t d = partialDims[i];
    std::map<Coord, Block> split;
    for (const auto &[key, block] : leaves) {
      std::vector<Block> parts =
          splitPartial(block, layout[d].reduce, world.meshShape[d], rng);
      for (size_t j = 0; j < parts.size(); ++j) {
        Coord k = key;
        k[i] = static_cast<int64_t>(j);
        split[k] = parts[j];
      }
    }
    leaves = std::move(split);
  }
  Buffers bufs;
  for (const Coord &c : world.coords) {
    Coord key;
    for (int64_t d : partialDims)
      key.push_back(c[d]);
    Shard shard = localShard({global.rows, global.cols}, layout, mesh, c);
    bufs.push_back(subBlock(leaves.at(key), shard.offset, shard.shape));
  }
  return bufs;
}

/// "" when `bufs` hold `global` laid out as `layout`: after reducing every
/// Partial mesh dim (ascending), each rank must hold exactly its
/// localShard block.
std::string checkRepresents(Buffers bufs, const Block &global,
                            const Layout &layout, const World &world,
                            const Mesh &mesh) {
  for (size_t d = 0; d < layout.size(); ++d) {
    if (!layout[d].isPartial())
      continue;
    std::string error =
        simulate(Step::allReduce({static_cast<int64_t>(d)}, layout[d].reduce),
                 world, bufs);
    if (!error.empty())
      return "resolving Partials: " + error;
  }
  for (size_t pos = 0; pos < world.coords.size(); ++pos) {
    Shard shard =
        localShard({global.rows, global.cols}, layout, mesh, world.coords[pos]);
    if (!sameValues(bufs[pos], subBlock(global, shard.offset, shard.shape)))
      return "wrong data at mesh coord #" + std::to_string(pos);
  }
  return "";
}

/// Global test tensor with distinct integer values.
Block globalTensor(int64_t rows, int64_t cols) {
  Block g(rows, cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      g.at(r, c) = static_cast<double>(10 * r + c + 1);
  return g;
}

/// Every assignment of `choices` to `count` mesh dims.
std::vector<Layout> allLayouts(const std::vector<Placement> &choices,
                               size_t count) {
  std::vector<Layout> result{{}};
  for (size_t i = 0; i < count; ++i) {
    std::vector<Layout> next;
    for (const Layout &prefix : result)
      for (const Placement &p : choices) {
        next.push_back(prefix);
        next.back().push_back(p);
      }
    result = std::move(next);
  }
  return result;
}

std::string describe(const Layout &source, const Layout &target,
                     const std::vector<int64_t> &meshShape,
                     const std::vector<int64_t> &shape) {
  auto list = [](const std::vector<int64_t> &v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i)
      out += (i ? "x" : "") + std::to_string(v[i]);
    return out;
  };
  return str(source) + " -> " + str(target) + " on mesh " + list(meshShape) +
         ", shape " + list(shape);
}

/// Plans source -> target and checks the plan's bookkeeping and, by
/// simulation, its data after every step. Returns "" or a failure message.
std::string checkPlan(const Layout &source, const Layout &target,
                      const World &world, const std::vector<int64_t> &shape,
                      uint32_t seed) {
  Mesh mesh(world.meshShape);
  CostParams params;
  RedistributePlan plan = planRedistribute(shape, 4, source, target, mesh);
  std::string where =
      describe(source, target, world.meshShape, shape) + ":\n" + str(plan);
  if (plan.layouts.size() != plan.steps.size() ||
      plan.stepUs.size() != plan.steps.size())
    return where + "inconsistent plan sizes";
  if (source == target)
    return plan.steps.empty() ? "" : where + "non-empty plan for equal layouts";
  if (plan.steps.empty() || plan.layouts.back() != target)
    return where + "plan does not end at the target";

  Block global = globalTensor(shape[0], shape[1]);
  std::mt19937 rng(seed);
  Buffers bufs = distribute(global, source, world, mesh, rng);
  if (std::string e = checkRepresents(bufs, global, source, world, mesh);
      !e.empty())
    return where + "bad source distribution: " + e;

  Layout layout = source;
  double total = 0.0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    std::string at = "step " + std::to_string(i) + " " + str(step) + ": ";
    if (!canApplyStep(layout, step, mesh, 2))
      return where + at + "not applicable";
    if (applyStep(layout, step, mesh, 2) != plan.layouts[i])
      return where + at + "layout after it is wrong";
    if (stepTimeUs(shape, 4, layout, step, mesh, params) != plan.stepUs[i])
      return where + at + "cost differs from stepTimeUs";
    total += plan.stepUs[i];
    if (std::string e = simulate(step, world, bufs); !e.empty())
      return where + at + e;
    layout = plan.layouts[i];
    if (std::string e = checkRepresents(bufs, global, layout, world, mesh);
        !e.empty())
      return where + at + e;
  }
  if (total != plan.totalUs)
    return where + "total differs from the sum of the steps";
  return "";
}

/// Runs checkPlan over every pair of layouts built from `choices`.
void checkAllPairs(const std::vector<int64_t> &meshShape,
                   const std::vector<Placement> &choices,
                   const std::vector<std::vector<int64_t>> &shapes) {
  World world(meshShape);
  std::vector<Layout> layouts = allLayouts(choices, meshShape.size());
  std::vector<std::string> failures;
  int64_t checked = 0;
  uint32_t seed = 1;
  for (const std::vector<int64_t> &shape : shapes)
    for (const Layout &source : layouts)
      for (const Layout &target : layouts) {
        ++checked;
        std::string failure = checkPlan(source, target, world, shape, seed++);
        if (!failure.empty())
          failures.push_back(failure);
      }
  EXPECT_EQ(checked, static_cast<int64_t>(shapes.size() * layouts.size() *
                                          layouts.size()));
  EXPECT_TRUE(failures.empty())
      << failures.size() << " of " << checked << " plans failed; first:\n"
      << failures.front();
}

const std::vector<Placement> kAllChoices = {R,
                                            P(ReduceKind::Sum),
                                            P(ReduceKind::Avg),
                                            P(ReduceKind::Max),
                                            P(ReduceKind::Min),
                                            S(0),
                                            S(1)};

const std::vector<std::vector<int64_t>> kShapes = {
    {12, 24}, // even on every mesh below, nested or not
    {5, 7},   // uneven
    {1, 7},   // fewer rows than ranks: some shards are empty
    {2, 3}};  // tiny in both dims

//===----------------------------------------------------------------------===//
// Exhaustive simulation
//===----------------------------------------------------------------------===//

TEST(RedistributePlanSimulation, EveryPairOnMesh2) {
  checkAllPairs({2}, kAllChoices, kShapes);
}

TEST(RedistributePlanSimulation, EveryPairOnMesh3) {
  checkAllPairs({3}, kAllChoices, kShapes);
}

TEST(RedistributePlanSimulation, EveryPairOnMesh2x2) {
  checkAllPairs({2, 2}, kAllChoices, kShapes);
}

TEST(RedistributePlanSimulation, EveryPairOnMesh2x3) {
  checkAllPairs({2, 3}, kAllChoices, kShapes);
}

// Three mesh dims: one Partial kind each keeps these quick.

TEST(RedistributePlanSimulation, EveryPairOnMesh2x1x2) {
  // A mesh dim of size 1: its steps are free and change nothing.
  checkAllPairs({2, 1, 2}, {R, P(ReduceKind::Max), S(0), S(1)}, {{5, 7}});
}

TEST(RedistributePlanSimulation, EveryPairOnMesh2x2x2) {
  // Shards nested three deep.
  checkAllPairs({2, 2, 2}, {R, P(ReduceKind::Sum), S(0), S(1)},
                {{5, 7}, {16, 8}});
}

//===----------------------------------------------------------------------===//
// Optimality
//===----------------------------------------------------------------------===//

TEST(RedistributePlanOptimality, CostsObeyTheTriangleInequality) {
  // Shortest paths cannot be improved by a detour through a third layout;
  // this also checks that restricting Partial kinds to those of the two
  // endpoints loses nothing.
  for (const std::vector<int64_t> &meshShape :
       std::vector<std::vector<int64_t>>{{3}, {2, 2}, {2, 3}}) {
    Mesh mesh(meshShape);
    std::vector<Layout> layouts = allLayouts(kAllChoices, meshShape.size());
    size_t n = layouts.size();
    std::vector<double> cost(n * n);
    for (size_t a = 0; a < n; ++a)
      for (size_t b = 0; b < n; ++b)
        cost[a * n + b] =
            planRedistribute({96, 40}, 4, layouts[a], layouts[b], mesh).totalUs;
    int64_t violations = 0;
    for (size_t a = 0; a < n; ++a)
      for (size_t b = 0; b < n; ++b)
        for (size_t c = 0; c < n; ++c)
          if (cost[a * n + c] >
              cost[a * n + b] + cost[b * n + c] + 1e-9 * (1 + cost[a * n + c]))
            ++violations;
    EXPECT_EQ(violations, 0) << "on a mesh of rank " << meshShape.size();
  }
}

TEST(RedistributePlanOptimality, NeverWorseThanTheCommCostEstimate) {
  // On a 1-D mesh with an even split, CommCost's one-step-per-mesh-dim
  // estimate is a valid plan, so the search can only match or beat it.
  Mesh mesh({4});
  for (const Layout &source : allLayouts(kAllChoices, 1))
    for (const Layout &target : allLayouts(kAllChoices, 1)) {
      double planned =
          planRedistribute({64, 32}, 4, source, target, mesh).totalUs;
      double estimate =
          redistributeTimeUs({64, 32}, 4, source, target, mesh, CostParams());
      EXPECT_LE(planned, estimate + 1e-9)
          << str(source) << " -> " << str(target);
    }
}

//===----------------------------------------------------------------------===//
// Specific plans
//===----------------------------------------------------------------------===//

TEST(RedistributePlan, IdenticalLayoutsGiveAnEmptyPlan) {
  Mesh mesh({2, 2});
  for (const Layout &layout : allLayouts(kAllChoices, 2)) {
    RedistributePlan plan = planRedistribute({8, 8}, 4, layout, layout, mesh);
    EXPECT_TRUE(plan.steps.empty()) << str(layout);
    EXPECT_EQ(plan.totalUs, 0.0);
  }
}

TEST(RedistributePlan, NestedShardIsGatheredInOneCall) {
  Mesh mesh({2, 2});
  // One call over 4 ranks takes log2(4) = 2 rounds, as many as two calls
  // over 2 ranks, for the same bytes and one call overhead less.
  RedistributePlan plan =
      planRedistribute({64, 64}, 4, {S(0), S(0)}, {R, R}, mesh);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::allGather({0, 1}, 0));
  EXPECT_EQ(str(plan.steps[0]), "all_gather(mesh_dims=[0,1], dim=0)");

  // On 2x3: ceil(log2 6) = 3 rounds and one call, against 1 + 2 rounds and
  // two calls.
  Mesh wide({2, 3});
  plan = planRedistribute({64, 64}, 4, {S(0), S(0)}, {R, R}, wide);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::allGather({0, 1}, 0));
}

TEST(RedistributePlan, PartialToShardIsOneReduceScatter) {
  Mesh mesh({4});
  for (ReduceKind kind :
       {ReduceKind::Sum, ReduceKind::Avg, ReduceKind::Max, ReduceKind::Min}) {
    RedistributePlan plan =
        planRedistribute({64, 64}, 4, {P(kind)}, {S(1)}, mesh);
    ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
    EXPECT_EQ(plan.steps[0], Step::reduceScatter({0}, kind, 1));
  }
}

TEST(RedistributePlan, ReplicateToShardIsOneLocalChunk) {
  Mesh mesh({4});
  RedistributePlan plan = planRedistribute({64, 64}, 4, {R}, {S(0)}, mesh);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::chunk({0}, 0));
  EXPECT_TRUE(plan.steps[0].isLocal());
  // Copying out 16x64 floats at 20 GB/s: 4096 / 2e4 us.
  EXPECT_DOUBLE_EQ(plan.totalUs, 4096 / 2e4);
}

TEST(RedistributePlan, HeadTailShardsGoThroughReplicate) {
  Placement HT = Placement::shardHeadTail(1);
  Mesh mesh({2});
  RedistributePlan plan = planRedistribute({2, 13}, 4, {HT}, {R}, mesh);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::allGatherHeadTail(0, 1));
  EXPECT_NE(plan.steps[0], Step::allGather({0}, 1));
  EXPECT_EQ(str(plan.steps[0]), "all_gather(mesh_dims=[0], dim=1, head_tail)");

  plan = planRedistribute({2, 13}, 4, {R}, {HT}, mesh);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::chunkHeadTail(0, 1));
  EXPECT_TRUE(plan.steps[0].isLocal());
  EXPECT_EQ(str(plan.steps[0]), "chunk(mesh_dims=[0], dim=1, head_tail)");

  // To and from a plain shard of the same or another dim: gathered whole
  // first, as no other step reads or makes a head-tail shard.
  for (const Layout &other : {Layout{S(1)}, Layout{S(0)}, Layout{P()}}) {
    plan = planRedistribute({2, 13}, 4, {HT}, other, mesh);
    ASSERT_GE(plan.steps.size(), 1u) << str(plan);
    EXPECT_EQ(plan.steps[0], Step::allGatherHeadTail(0, 1)) << str(plan);
    plan = planRedistribute({2, 13}, 4, other, {HT}, mesh);
    EXPECT_EQ(plan.steps.back(), Step::chunkHeadTail(0, 1)) << str(plan);
  }

  // cp x tp: the other mesh dim's shard of another dim is kept.
  Mesh grid({2, 2});
  plan = planRedistribute({2, 13, 8}, 4, {HT, S(2)}, {R, S(2)}, grid);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::allGatherHeadTail(0, 1));
}

TEST(RedistributePlan, HeadTailStepsApplyOnlyWhereTheyMayNest) {
  Placement HT = Placement::shardHeadTail(1);
  Mesh grid({2, 2});
  // Plain steps never consume a head-tail shard or nest inside one.
  EXPECT_FALSE(canApplyStep({HT, R}, Step::allGather({0}, 1), grid, 2));
  EXPECT_FALSE(canApplyStep({HT, R}, Step::chunk({1}, 1), grid, 2));
  EXPECT_FALSE(canApplyStep({HT, R}, Step::padPartial({0}, 1), grid, 2));
  EXPECT_FALSE(canApplyStep({HT, R}, Step::allToAll({0}, 1, 0), grid, 2));
  EXPECT_FALSE(canApplyStep({HT, S(0)}, Step::allToAll({1}, 0, 1), grid, 2));
  EXPECT_TRUE(canApplyStep({HT, R}, Step::allGatherHeadTail(0, 1), grid, 2));
  EXPECT_FALSE(canApplyStep({HT, R}, Step::allGatherHeadTail(0, 0), grid, 2));
  // A head-tail chunk needs the dim unsharded.
  EXPECT_TRUE(canApplyStep({R, S(0)}, Step::chunkHeadTail(0, 1), grid, 2));
  EXPECT_FALSE(canApplyStep({R, S(1)}, Step::chunkHeadTail(0, 1), grid, 2));
  EXPECT_EQ(applyStep({R, S(0)}, Step::chunkHeadTail(0, 1), grid, 2),
            (Layout{HT, S(0)}));
}

TEST(RedistributePlan, ShardToPartialSumIsOneLocalPad) {
  // DTensor's Shard -> Partial(sum): no communication, each rank's piece in
  // zeros of the joined size; nested shards pad only the inner mesh dim.
  Mesh mesh({4});
  RedistributePlan plan = planRedistribute({10, 6}, 4, {S(0)}, {P()}, mesh);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::padPartial({0}, 0));
  EXPECT_TRUE(plan.steps[0].isLocal());
  Mesh square({2, 2});
  plan = planRedistribute({10, 6}, 4, {S(0), S(0)}, {S(0), P()}, square);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::padPartial({1}, 0));
  // Only sum: other kinds of Partial still gather first.
  plan = planRedistribute({10, 6}, 4, {S(0)}, {P(ReduceKind::Max)}, mesh);
  EXPECT_TRUE(std::none_of(
      plan.steps.begin(), plan.steps.end(),
      [](const Step &s) { return s.kind == Step::Kind::PadPartial; }))
      << str(plan);
}

/// True when some step of `plan` is an all_gather.
bool gathers(const RedistributePlan &plan) {
  return std::any_of(plan.steps.begin(), plan.steps.end(), [](const Step &s) {
    return s.kind == Step::Kind::AllGather;
  });
}

TEST(RedistributePlan, TransposedShardingAvoidsReplicate) {
  Mesh mesh({2, 2});
  Layout source{S(0), S(1)}, target{S(1), S(0)};
  // A large tensor: three all_to_alls (the middle one over both mesh dims)
  // move less data than any route that gathers.
  RedistributePlan big =
      planRedistribute({4096, 4096}, 4, source, target, mesh);
  EXPECT_FALSE(gathers(big)) << str(big);
  ASSERT_EQ(big.steps.size(), 3u) << str(big);
  EXPECT_EQ(big.steps[0], Step::allToAll({1}, 1, 0));
  EXPECT_EQ(big.steps[1], Step::allToAll({0, 1}, 0, 1));
  EXPECT_EQ(big.steps[2], Step::allToAll({1}, 1, 0));

  // A small one: latency dominates and one gather of a half is cheaper,
  // but the plan still never replicates the whole tensor.
  RedistributePlan small = planRedistribute({64, 64}, 4, source, target, mesh);
  EXPECT_TRUE(gathers(small)) << str(small);
  for (const Layout &layout : small.layouts)
    EXPECT_NE(layout, Layout({R, R})) << str(small);
}

TEST(RedistributePlan, MixedPartialsReduceInMeshDimOrder) {
  Mesh mesh({2, 2});
  Layout source{P(ReduceKind::Sum), P(ReduceKind::Max)};
  // max over mesh dim 1 may not run while the sum over mesh dim 0 pends.
  EXPECT_FALSE(
      canApplyStep(source, Step::allReduce({1}, ReduceKind::Max), mesh, 2));
  EXPECT_TRUE(
      canApplyStep(source, Step::allReduce({0}, ReduceKind::Sum), mesh, 2));
  RedistributePlan plan = planRedistribute({8, 8}, 4, source, {R, R}, mesh);
  ASSERT_EQ(plan.steps.size(), 2u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::allReduce({0}, ReduceKind::Sum));
  EXPECT_EQ(plan.steps[1], Step::allReduce({1}, ReduceKind::Max));
  // sum and avg commute, so either order is allowed.
  Layout linear{P(ReduceKind::Avg), P(ReduceKind::Sum)};
  EXPECT_TRUE(
      canApplyStep(linear, Step::allReduce({1}, ReduceKind::Sum), mesh, 2));
}

TEST(RedistributePlan, NestingRules) {
  Mesh mesh({2, 2});
  // Only the innermost mesh dims of a nested shard can be gathered.
  EXPECT_FALSE(canApplyStep({S(0), S(0)}, Step::allGather({0}, 0), mesh, 2));
  EXPECT_TRUE(canApplyStep({S(0), S(0)}, Step::allGather({1}, 0), mesh, 2));
  EXPECT_TRUE(canApplyStep({S(0), S(0)}, Step::allGather({0, 1}, 0), mesh, 2));
  // New shards nest inside existing ones only.
  EXPECT_TRUE(canApplyStep({S(0), R}, Step::chunk({1}, 0), mesh, 2));
  EXPECT_FALSE(canApplyStep({R, S(0)}, Step::chunk({0}, 0), mesh, 2));
  EXPECT_FALSE(canApplyStep(
      {P(), S(0)}, Step::reduceScatter({0}, ReduceKind::Sum, 0), mesh, 2));
  EXPECT_TRUE(canApplyStep(
      {S(1), P()}, Step::reduceScatter({1}, ReduceKind::Sum, 1), mesh, 2));
  // all_to_all: innermost on its source dim, inside the target dim's shards.
  EXPECT_TRUE(canApplyStep({S(0), S(1)}, Step::allToAll({1}, 1, 0), mesh, 2));
  EXPECT_FALSE(canApplyStep({S(0), S(1)}, Step::allToAll({0}, 0, 1), mesh, 2));
  // Wrong placements, unsorted or empty mesh dims.
  EXPECT_FALSE(
      canApplyStep({R, R}, Step::allReduce({0}, ReduceKind::Sum), mesh, 2));
  EXPECT_FALSE(canApplyStep({R, R}, Step::chunk({1, 0}, 0), mesh, 2));
  EXPECT_FALSE(canApplyStep({R, R}, Step::chunk({}, 0), mesh, 2));
}

TEST(RedistributePlan, TotalIsTheSumOfTheSteps) {
  Mesh mesh({2, 3});
  RedistributePlan plan =
      planRedistribute({30, 50}, 2, {P(ReduceKind::Sum), S(1)},
                       {S(1), P(ReduceKind::Max)}, mesh);
  ASSERT_FALSE(plan.steps.empty());
  double total = 0.0;
  std::vector<Placement> layout{P(ReduceKind::Sum), S(1)};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    total += stepTimeUs({30, 50}, 2, layout, plan.steps[i], mesh, CostParams());
    layout = plan.layouts[i];
  }
  EXPECT_DOUBLE_EQ(plan.totalUs, total);
}

TEST(RedistributePlan, DynamicDimsArePricedByTheEstimate) {
  Mesh mesh({2});
  CostParams params;
  params.dynamicDimEstimate = 100;
  RedistributePlan plan =
      planRedistribute({kDynamic, 10}, 4, {S(0)}, {R}, mesh, params);
  ASSERT_EQ(plan.steps.size(), 1u) << str(plan);
  EXPECT_EQ(plan.steps[0], Step::allGather({0}, 0));
  // Each rank holds 50 of the 100 estimated rows: 2000 bytes.
  EXPECT_DOUBLE_EQ(plan.totalUs, 1.0 + 5.0 + 2000 / 1e4);
}

TEST(RedistributePlan, Deterministic) {
  Mesh mesh({2, 3});
  for (const Layout &source : allLayouts(kAllChoices, 2))
    for (const Layout &target : {Layout{R, R}, Layout{S(1), S(0)}}) {
      std::string first =
          str(planRedistribute({50, 70}, 4, source, target, mesh));
      EXPECT_EQ(str(planRedistribute({50, 70}, 4, source, target, mesh)),
                first);
    }
}

TEST(RedistributePlan, StepRendering) {
  EXPECT_EQ(str(Step::allReduce({1}, ReduceKind::Sum)),
            "all_reduce(sum, mesh_dims=[1])");
  EXPECT_EQ(str(Step::reduceScatter({0}, ReduceKind::Avg, 1)),
            "reduce_scatter(avg, mesh_dims=[0], dim=1)");
  EXPECT_EQ(str(Step::allToAll({1}, 1, 0)),
            "all_to_all(mesh_dims=[1], from_dim=1, to_dim=0)");
  EXPECT_EQ(str(Step::chunk({0, 1}, 1)), "chunk(mesh_dims=[0,1], dim=1)");
  EXPECT_EQ(str(Step::markPartial({0}, ReduceKind::Max)),
            "mark_partial(max, mesh_dims=[0])");
  EXPECT_EQ(str(Step::padPartial({1}, 0)), "pad_partial(mesh_dims=[1], dim=0)");
}

TEST(RedistributePlanTest, ASlowMeshDimReducesAShard) {
  // A sum over a 2 x 2 mesh of 4 MiB. With every dim alike, one all_reduce
  // over both dims is cheapest. When mesh dim 0 crosses a slow link, the
  // plan reduces only a half over it: reduce_scatter inside the fast dim,
  // all_reduce of the half over the slow dim, all_gather back.
  Mesh mesh({2, 2});
  std::vector<int64_t> shape{1 << 20};
  RedistributePlan uniform =
      planRedistribute(shape, 4, {P(), P()}, {R, R}, mesh, CostParams());
  ASSERT_EQ(uniform.steps.size(), 1u) << str(uniform);
  EXPECT_EQ(str(uniform.steps[0]), "all_reduce(sum, mesh_dims=[0,1])");
  EXPECT_EQ(uniform.stepLinks, std::vector<std::string>{""});

  CostParams params;
  params.meshDimLinks = {{"slow", 50.0, 1.0}, {"fast", 5.0, 10.0}};
  RedistributePlan plan =
      planRedistribute(shape, 4, {P(), P()}, {R, R}, mesh, params);
  ASSERT_EQ(plan.steps.size(), 3u) << str(plan);
  EXPECT_EQ(str(plan.steps[0]), "reduce_scatter(sum, mesh_dims=[1], dim=0)");
  EXPECT_EQ(str(plan.steps[1]), "all_reduce(sum, mesh_dims=[0])");
  EXPECT_EQ(str(plan.steps[2]), "all_gather(mesh_dims=[1], dim=0)");
  EXPECT_EQ(plan.stepLinks, (std::vector<std::string>{"fast", "slow", "fast"}));
  EXPECT_NE(str(plan).find("over slow"), std::string::npos) << str(plan);
  // The single all_reduce, priced over the slow link, costs more.
  EXPECT_LT(plan.totalUs,
            stepTimeUs(shape, 4, {P(), P()}, uniform.steps[0], mesh, params));
}

} // namespace

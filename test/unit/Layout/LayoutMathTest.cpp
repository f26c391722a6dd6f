//===- LayoutMathTest.cpp - Tests for DTensor layout arithmetic -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Expected values are computed independently of the library wherever
// possible (simulated torch.chunk, odometer enumeration, brute force over all
// coords) so that a bug in the library cannot also hide in the oracle.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Layout/LayoutMath.h"

#include "ChunkOracles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <ostream>
#include <set>

namespace dtensor::layout {
// Readable gtest failure messages.
void PrintTo(const Range &r, std::ostream *os) {
  *os << "[" << r.begin << ", " << r.end << ")";
}
void PrintTo(const Placement &p, std::ostream *os) { *os << p.str(); }
} // namespace dtensor::layout

namespace {

using namespace dtensor::layout;
using Coord = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Independent oracles
//===----------------------------------------------------------------------===//

using oracle::allCoords;
using oracle::torchChunkRange;
using oracle::torchChunkSizes;

/// Nested chunking reference: outer mesh dims first.
Range nestedRange(int64_t n, const std::vector<int64_t> &meshShape,
                  const std::vector<int64_t> &meshDims, const Coord &coord) {
  std::vector<int64_t> sizes, index;
  for (int64_t d : meshDims) {
    sizes.push_back(meshShape[d]);
    index.push_back(coord[d]);
  }
  return oracle::nestedPiece(n, sizes, index);
}

/// Every ordered subset (including the empty one) of {0..rank-1}.
std::vector<std::vector<int64_t>> orderedSubsets(int64_t rank) {
  std::vector<std::vector<int64_t>> result;
  for (int64_t mask = 0; mask < (int64_t{1} << rank); ++mask) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (mask & (int64_t{1} << d))
        dims.push_back(d);
    do
      result.push_back(dims);
    while (std::next_permutation(dims.begin(), dims.end()));
  }
  return result;
}

/// Every assignment of `choices` to `count` mesh dims.
std::vector<std::vector<Placement>>
allAssignments(const std::vector<Placement> &choices, size_t count) {
  std::vector<std::vector<Placement>> result{{}};
  for (size_t i = 0; i < count; ++i) {
    std::vector<std::vector<Placement>> next;
    for (const auto &prefix : result)
      for (const Placement &p : choices) {
        next.push_back(prefix);
        next.back().push_back(p);
      }
    result = std::move(next);
  }
  return result;
}

const std::vector<std::vector<int64_t>> kTilingMeshes = {
    {2}, {3}, {4}, {2, 2}, {2, 3}, {3, 2}};

const std::vector<Placement> kRank2Choices = {
    Placement::replicate(), Placement::partial(ReduceKind::Sum),
    Placement::shard(0), Placement::shard(1)};

//===----------------------------------------------------------------------===//
// ReduceKind
//===----------------------------------------------------------------------===//

TEST(ReduceKind, StringifyAndParseRoundTrip) {
  const std::pair<ReduceKind, const char *> table[] = {
      {ReduceKind::Sum, "sum"},
      {ReduceKind::Avg, "avg"},
      {ReduceKind::Max, "max"},
      {ReduceKind::Min, "min"}};
  for (auto [kind, name] : table) {
    EXPECT_STREQ(stringifyReduceKind(kind), name);
    EXPECT_EQ(parseReduceKind(name), kind);
  }
}

TEST(ReduceKind, ParseRejectsOtherSpellings) {
  for (const char *junk : {"", "prod", "product", "Sum", "SUM", " sum", "mean"})
    EXPECT_FALSE(parseReduceKind(junk).has_value()) << junk;
}

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

TEST(Placement, FactoriesAndPredicates) {
  Placement r = Placement::replicate();
  EXPECT_TRUE(r.isReplicate());
  EXPECT_FALSE(r.isShard());
  EXPECT_FALSE(r.isPartial());

  Placement s = Placement::shard(-1);
  EXPECT_TRUE(s.isShard());
  EXPECT_FALSE(s.isReplicate());
  EXPECT_EQ(s.dim, -1);

  Placement p = Placement::partial();
  EXPECT_TRUE(p.isPartial());
  EXPECT_EQ(p.reduce, ReduceKind::Sum);
  EXPECT_EQ(Placement::partial(ReduceKind::Max).reduce, ReduceKind::Max);

  EXPECT_TRUE(Placement{}.isReplicate());
}

TEST(Placement, EqualityComparesMeaningfulFieldsOnly) {
  EXPECT_EQ(Placement::shard(0), Placement::shard(0));
  EXPECT_NE(Placement::shard(0), Placement::shard(1));
  EXPECT_NE(Placement::shard(0), Placement::replicate());
  EXPECT_NE(Placement::partial(ReduceKind::Sum),
            Placement::partial(ReduceKind::Max));
  EXPECT_NE(Placement::partial(), Placement::replicate());

  // Stale fields that do not apply to the kind are ignored.
  Placement r = Placement::replicate();
  r.dim = 5;
  r.reduce = ReduceKind::Min;
  EXPECT_EQ(r, Placement::replicate());
  Placement p = Placement::partial(ReduceKind::Avg);
  p.dim = 3;
  EXPECT_EQ(p, Placement::partial(ReduceKind::Avg));
  Placement s = Placement::shard(2);
  s.reduce = ReduceKind::Max;
  EXPECT_EQ(s, Placement::shard(2));
}

TEST(Placement, ShortNotation) {
  EXPECT_EQ(Placement::replicate().str(), "R");
  EXPECT_EQ(Placement::shard(0).str(), "S(0)");
  EXPECT_EQ(Placement::shard(-1).str(), "S(-1)");
  EXPECT_EQ(Placement::partial().str(), "P(sum)");
  EXPECT_EQ(Placement::partial(ReduceKind::Avg).str(), "P(avg)");
  EXPECT_EQ(Placement::partial(ReduceKind::Max).str(), "P(max)");
  EXPECT_EQ(Placement::partial(ReduceKind::Min).str(), "P(min)");
}

TEST(Placement, ListRendering) {
  EXPECT_EQ(str({}), "[]");
  EXPECT_EQ(str({Placement::shard(0)}), "[S(0)]");
  EXPECT_EQ(str({Placement::shard(0), Placement::replicate()}), "[S(0), R]");
  EXPECT_EQ(str({Placement::partial(ReduceKind::Min), Placement::shard(-2),
                 Placement::replicate()}),
            "[P(min), S(-2), R]");
}

TEST(ParsePlacement, AcceptsShortAndLongForms) {
  const std::pair<const char *, Placement> table[] = {
      {"S(0)", Placement::shard(0)},
      {"S(-1)", Placement::shard(-1)},
      {"S(12)", Placement::shard(12)},
      {"Shard(1)", Placement::shard(1)},
      {"Shard(dim=2)", Placement::shard(2)},
      {" S( 3 ) ", Placement::shard(3)},
      {"R", Placement::replicate()},
      {"Replicate", Placement::replicate()},
      {"Replicate()", Placement::replicate()},
      {"P", Placement::partial(ReduceKind::Sum)},
      {"P()", Placement::partial(ReduceKind::Sum)},
      {"P(sum)", Placement::partial(ReduceKind::Sum)},
      {"P(avg)", Placement::partial(ReduceKind::Avg)},
      {"P(min)", Placement::partial(ReduceKind::Min)},
      {"Partial", Placement::partial(ReduceKind::Sum)},
      {"Partial(max)", Placement::partial(ReduceKind::Max)},
      {"Partial(reduce_op=avg)", Placement::partial(ReduceKind::Avg)},
  };
  for (const auto &[text, expected] : table) {
    std::optional<Placement> parsed = parsePlacement(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(*parsed, expected) << text;
    // Check the kind explicitly too: operator== could be wrong in the same way.
    EXPECT_EQ(parsed->kind, expected.kind) << text;
  }
}

TEST(ParsePlacement, RejectsJunk) {
  // clang-format off
  const char *const junkInputs[] = {
      "", " ", "S(", "S(x)", "Q", "P(prod)", "S", "S()", "S(1", "S1)",
      "S(1)x", "S(1.5)", "S(+1)", "S(1 2)", "S((1))", "s(0)", "r", "Shard",
      "R(1)", "Replicate(0)", "P(sum", "P(Sum)", "Partial(sum,1)",
      "Shard(dim=)", "Shard(dim=x)", "S(99999999999999999999)", "(0)", "X(0)"};
  // clang-format on
  for (const char *junk : junkInputs)
    EXPECT_FALSE(parsePlacement(junk).has_value()) << '"' << junk << '"';
}

TEST(ParsePlacement, RoundTripsThroughStr) {
  std::vector<Placement> all = {Placement::replicate()};
  for (int64_t d = -4; d <= 4; ++d)
    all.push_back(Placement::shard(d));
  for (ReduceKind k :
       {ReduceKind::Sum, ReduceKind::Avg, ReduceKind::Max, ReduceKind::Min})
    all.push_back(Placement::partial(k));
  for (const Placement &p : all) {
    std::optional<Placement> parsed = parsePlacement(p.str());
    ASSERT_TRUE(parsed.has_value()) << p.str();
    EXPECT_EQ(*parsed, p);
    EXPECT_EQ(parsed->str(), p.str());
  }
}

//===----------------------------------------------------------------------===//
// Chunking arithmetic
//===----------------------------------------------------------------------===//

TEST(CeilDiv, MatchesSearch) {
  for (int64_t b = 1; b <= 9; ++b)
    for (int64_t a = 0; a <= 60; ++a) {
      int64_t expected = 0;
      while (expected * b < a)
        ++expected;
      EXPECT_EQ(ceilDiv(a, b), expected) << a << "/" << b;
    }
}

TEST(ChunkRange, DTensorExamples) {
  auto sizes = [](int64_t n, int64_t parts) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < parts; ++i)
      out.push_back(chunkRange(n, parts, i).size());
    return out;
  };
  EXPECT_EQ(sizes(10, 4), (std::vector<int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(sizes(9, 4), (std::vector<int64_t>{3, 3, 3, 0}));
  EXPECT_EQ(sizes(2, 4), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(sizes(0, 3), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(chunkRange(10, 4, 3), (Range{9, 10}));
  EXPECT_EQ(chunkRange(9, 4, 3), (Range{9, 9}));
  EXPECT_EQ(chunkRange(2, 4, 1), (Range{1, 2}));
}

TEST(ChunkRange, MatchesTorchChunkExhaustive) {
  for (int64_t n = 0; n <= 40; ++n)
    for (int64_t parts = 1; parts <= 9; ++parts) {
      SCOPED_TRACE("N=" + std::to_string(n) +
                   " parts=" + std::to_string(parts));
      std::vector<int64_t> expected = torchChunkSizes(n, parts);
      int64_t cursor = 0;
      for (int64_t i = 0; i < parts; ++i) {
        Range r = chunkRange(n, parts, i);
        EXPECT_EQ(r.begin, cursor) << "piece " << i << " not contiguous";
        EXPECT_LE(r.begin, r.end) << "piece " << i;
        EXPECT_EQ(r.size(), expected[i]) << "piece " << i;
        cursor = r.end;
      }
      EXPECT_EQ(cursor, n) << "pieces do not cover [0, N)";
    }
}

TEST(NormalizeDim, PythonStyle) {
  for (int64_t rank = 0; rank <= 4; ++rank)
    for (int64_t dim = -6; dim <= 6; ++dim) {
      std::optional<int64_t> got = normalizeDim(dim, rank);
      if (dim < -rank || dim >= rank) {
        EXPECT_FALSE(got.has_value()) << dim << " rank " << rank;
      } else {
        ASSERT_TRUE(got.has_value()) << dim << " rank " << rank;
        EXPECT_EQ(*got, dim >= 0 ? dim : rank + dim);
      }
    }
  EXPECT_EQ(normalizeDim(-1, 3), 2);
  EXPECT_EQ(normalizeDim(-3, 3), 0);
  EXPECT_FALSE(normalizeDim(-4, 3).has_value());
  EXPECT_FALSE(normalizeDim(3, 3).has_value());
}

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

TEST(Mesh, BasicAccessors) {
  Mesh mesh({2, 3, 4});
  EXPECT_EQ(mesh.shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(mesh.rank(), 3);
  EXPECT_EQ(mesh.size(), 24);
  EXPECT_EQ(mesh.dimSize(0), 2);
  EXPECT_EQ(mesh.dimSize(1), 3);
  EXPECT_EQ(mesh.dimSize(2), 4);
  EXPECT_TRUE(mesh.deviceIds().empty());
}

TEST(Mesh, CoordIndexRoundTripIsRowMajor) {
  for (const std::vector<int64_t> &shape : std::vector<std::vector<int64_t>>{
           {1}, {4}, {2, 3}, {2, 2, 2}, {3, 1, 2}}) {
    Mesh mesh(shape);
    ASSERT_EQ(mesh.validate(), "");
    std::vector<Coord> coords = allCoords(shape);
    ASSERT_EQ(static_cast<int64_t>(coords.size()), mesh.size());
    for (int64_t i = 0; i < mesh.size(); ++i) {
      // Odometer order is row-major order.
      EXPECT_EQ(mesh.indexOfCoord(coords[i]), i);
      EXPECT_EQ(mesh.coordOfIndex(i), coords[i]);
      EXPECT_EQ(mesh.indexOfCoord(mesh.coordOfIndex(i)), i);
      EXPECT_EQ(mesh.deviceAt(coords[i]), i) << "default ids are row-major";
      EXPECT_EQ(mesh.coordOfDevice(i), coords[i]);
    }
    EXPECT_FALSE(mesh.coordOfDevice(-1).has_value());
    EXPECT_FALSE(mesh.coordOfDevice(mesh.size()).has_value());
  }
  // Spot check: last dim varies fastest.
  Mesh m23({2, 3});
  EXPECT_EQ(m23.indexOfCoord({1, 0}), 3);
  EXPECT_EQ(m23.coordOfIndex(5), (Coord{1, 2}));
}

TEST(Mesh, ExplicitDeviceIdsHonoured) {
  const std::vector<int64_t> ids = {5, 3, 1, 0, 2, 4};
  Mesh mesh({2, 3}, ids);
  ASSERT_EQ(mesh.validate(), "");
  EXPECT_EQ(mesh.deviceIds(), ids);
  EXPECT_EQ(mesh.deviceAt({0, 0}), 5);
  EXPECT_EQ(mesh.deviceAt({0, 2}), 1);
  EXPECT_EQ(mesh.deviceAt({1, 0}), 0);
  EXPECT_EQ(mesh.deviceAt({1, 2}), 4);
  for (const Coord &c : allCoords({2, 3})) {
    int64_t device = mesh.deviceAt(c);
    EXPECT_EQ(device, ids[mesh.indexOfCoord(c)]);
    EXPECT_EQ(mesh.coordOfDevice(device), c);
  }
  EXPECT_EQ(mesh.coordOfDevice(0), (Coord{1, 0}));
  EXPECT_FALSE(mesh.coordOfDevice(6).has_value());
  EXPECT_FALSE(mesh.coordOfDevice(-1).has_value());
  // Device ids never affect positional arithmetic.
  EXPECT_EQ(mesh.indexOfCoord({1, 0}), 3);
}

TEST(Mesh, ValidateAccepts) {
  EXPECT_EQ(Mesh({1}).validate(), "");
  EXPECT_EQ(Mesh({8}).validate(), "");
  EXPECT_EQ(Mesh({2, 1, 3}).validate(), "");
  EXPECT_EQ(Mesh({2, 2}, {3, 2, 1, 0}).validate(), "");
  EXPECT_EQ(Mesh({2, 2}, {0, 1, 2, 3}).validate(), "");
}

TEST(Mesh, ValidateRejects) {
  struct Case {
    Mesh mesh;
    const char *mentions;
  };
  const Case cases[] = {
      {Mesh(), "no dimensions"},
      {Mesh({0}), "non-positive"},
      {Mesh({2, 0}), "non-positive"},
      {Mesh({2, -1}), "non-positive"},
      {Mesh({-2, -1}), "non-positive"},
      {Mesh({2, 2}, {0, 1, 2}), "device ids"},
      {Mesh({2, 2}, {0, 1, 2, 3, 4}), "device ids"},
      {Mesh({4}, {0, 1, 1, 2}), "more than once"},
      {Mesh({4}, {3, 3, 3, 3}), "more than once"},
      {Mesh({4}, {0, 1, 2, 4}), "out of range"},
      {Mesh({4}, {0, -1, 2, 3}), "out of range"},
  };
  for (const Case &c : cases) {
    std::string error = c.mesh.validate();
    EXPECT_NE(error.find(c.mentions), std::string::npos)
        << "shape rank " << c.mesh.rank() << ": got \"" << error << "\"";
  }
  EXPECT_EQ(Mesh({2, 0}).validate(), "mesh dim 1 has non-positive size 0");
  EXPECT_EQ(Mesh({4}, {0, 1, 1, 2}).validate(),
            "device id 1 appears more than once");
}

TEST(Mesh, GroupIndexExamples) {
  Mesh mesh({2, 3, 2});
  EXPECT_EQ(mesh.groupSize({}), 1);
  EXPECT_EQ(mesh.groupSize({1}), 3);
  EXPECT_EQ(mesh.groupSize({0, 2}), 4);
  EXPECT_EQ(mesh.groupSize({2, 1, 0}), 12);
  EXPECT_EQ(mesh.groupIndex({}, {1, 2, 1}), 0);
  EXPECT_EQ(mesh.groupIndex({0, 1}, {1, 1, 0}), 1 * 3 + 1);
  EXPECT_EQ(mesh.groupIndex({1, 0}, {1, 1, 0}), 1 * 2 + 1);
  EXPECT_EQ(mesh.groupIndex({2, 0}, {1, 2, 1}), 1 * 2 + 1);
  EXPECT_EQ(mesh.groupIndex({0, 2}, {1, 2, 0}), 1 * 2 + 0);
  EXPECT_EQ(mesh.groupIndex({2, 0}, {1, 2, 0}), 0 * 2 + 1);
  EXPECT_EQ(mesh.groupIndex({0, 1, 2}, {1, 2, 1}), 11);
  EXPECT_EQ(mesh.groupIndex({2, 1, 0}, {1, 2, 1}), 1 * 6 + 2 * 2 + 1);
  EXPECT_EQ(mesh.groupMembers({1}, {1, 0, 1}),
            (std::vector<Coord>{{1, 0, 1}, {1, 1, 1}, {1, 2, 1}}));
  EXPECT_EQ(mesh.groupMembers({2, 0}, {0, 1, 0}),
            (std::vector<Coord>{{0, 1, 0}, {1, 1, 0}, {0, 1, 1}, {1, 1, 1}}));
}

TEST(Mesh, GroupsOverEverySubsetAndOrder) {
  const std::vector<int64_t> shape = {2, 3, 2};
  Mesh mesh(shape);
  const std::vector<Coord> coords = allCoords(shape);
  for (const std::vector<int64_t> &dims : orderedSubsets(mesh.rank())) {
    SCOPED_TRACE("dims=" + ::testing::PrintToString(dims));
    int64_t expectedSize = 1;
    for (int64_t d : dims)
      expectedSize *= shape[d];
    EXPECT_EQ(mesh.groupSize(dims), expectedSize);
    auto isListed = [&](int64_t d) {
      return std::find(dims.begin(), dims.end(), d) != dims.end();
    };

    for (const Coord &coord : coords) {
      std::vector<Coord> members = mesh.groupMembers(dims, coord);
      ASSERT_EQ(static_cast<int64_t>(members.size()), expectedSize);

      // Members are exactly the coords agreeing with `coord` off the listed
      // dims, in row-major order of the listed dims: first listed dim most
      // significant, i.e. an odometer whose last listed dim spins fastest.
      std::vector<int64_t> listedShape;
      for (int64_t d : dims)
        listedShape.push_back(shape[d]);
      std::vector<Coord> digits = allCoords(listedShape);
      ASSERT_EQ(digits.size(), members.size());
      for (size_t k = 0; k < members.size(); ++k) {
        Coord expected = coord;
        for (size_t j = 0; j < dims.size(); ++j)
          expected[dims[j]] = digits[k][j];
        EXPECT_EQ(members[k], expected) << "member " << k;
        EXPECT_EQ(mesh.groupIndex(dims, members[k]), static_cast<int64_t>(k));
        // Consistency: every member sees the same group.
        EXPECT_EQ(mesh.groupMembers(dims, members[k]), members);
      }

      // Every index 0..size-1 occurs exactly once.
      std::set<int64_t> indices;
      for (const Coord &m : members)
        indices.insert(mesh.groupIndex(dims, m));
      EXPECT_EQ(static_cast<int64_t>(indices.size()), expectedSize);
      EXPECT_EQ(*indices.begin(), 0);
      EXPECT_EQ(*indices.rbegin(), expectedSize - 1);

      // `coord` belongs to its own group at its own index.
      int64_t self = mesh.groupIndex(dims, coord);
      ASSERT_LT(self, expectedSize);
      EXPECT_EQ(members[self], coord);

      // Group membership is "agree on every unlisted dim".
      for (const Coord &other : coords) {
        bool sameGroup = true;
        for (int64_t d = 0; d < mesh.rank(); ++d)
          if (!isListed(d) && other[d] != coord[d])
            sameGroup = false;
        bool isMember =
            std::find(members.begin(), members.end(), other) != members.end();
        EXPECT_EQ(isMember, sameGroup);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Sharded layouts
//===----------------------------------------------------------------------===//

TEST(ShardingMeshDims, AscendingMeshDimOrder) {
  std::vector<Placement> ps = {Placement::shard(1), Placement::replicate(),
                               Placement::shard(0), Placement::shard(1),
                               Placement::partial()};
  EXPECT_EQ(shardingMeshDims(ps, 0), (std::vector<int64_t>{2}));
  EXPECT_EQ(shardingMeshDims(ps, 1), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(shardingMeshDims(ps, 2), (std::vector<int64_t>{}));
  EXPECT_EQ(shardingMeshDims({}, 0), (std::vector<int64_t>{}));
}

TEST(ShardRange, NestedShardingIsNotFlatChunking) {
  Mesh mesh({2, 2});
  const std::vector<int64_t> dims = {0, 1};
  EXPECT_EQ(shardRange(10, mesh, dims, {0, 0}), (Range{0, 3}));
  EXPECT_EQ(shardRange(10, mesh, dims, {0, 1}), (Range{3, 5}));
  EXPECT_EQ(shardRange(10, mesh, dims, {1, 0}), (Range{5, 8}));
  EXPECT_EQ(shardRange(10, mesh, dims, {1, 1}), (Range{8, 10}));
  // Flat chunking over 4 would give 3,3,3,1 instead of 3,2,3,2.
  EXPECT_NE(shardRange(10, mesh, dims, {0, 1}), chunkRange(10, 4, 1));

  // Reversed nesting: mesh dim 1 outermost.
  const std::vector<int64_t> rev = {1, 0};
  EXPECT_EQ(shardRange(10, mesh, rev, {0, 0}), (Range{0, 3}));
  EXPECT_EQ(shardRange(10, mesh, rev, {1, 0}), (Range{3, 5}));
  EXPECT_EQ(shardRange(10, mesh, rev, {0, 1}), (Range{5, 8}));
  EXPECT_EQ(shardRange(10, mesh, rev, {1, 1}), (Range{8, 10}));

  // Unsharded: the whole dim.
  EXPECT_EQ(shardRange(10, mesh, {}, {1, 1}), (Range{0, 10}));
  // Single level equals chunkRange; unrelated mesh dims do not matter.
  EXPECT_EQ(shardRange(10, Mesh({2, 4}), {1}, {1, 3}), (Range{9, 10}));
}

TEST(ShardRange, MatchesNestedTorchChunk) {
  for (const std::vector<int64_t> &shape :
       std::vector<std::vector<int64_t>>{{3}, {2, 3}, {2, 3, 2}, {4, 1, 3}}) {
    Mesh mesh(shape);
    for (const std::vector<int64_t> &dims : orderedSubsets(mesh.rank()))
      for (int64_t n = 0; n <= 30; ++n)
        for (const Coord &c : allCoords(shape))
          EXPECT_EQ(shardRange(n, mesh, dims, c),
                    nestedRange(n, shape, dims, c))
              << "N=" << n << " dims=" << ::testing::PrintToString(dims)
              << " coord=" << ::testing::PrintToString(c);
  }
}

TEST(LocalShard, NestedShardingExample) {
  Mesh mesh({2, 2});
  std::vector<Placement> ps = {Placement::shard(0), Placement::shard(0)};
  const std::pair<Coord, Range> expected[] = {
      {{0, 0}, {0, 3}}, {{0, 1}, {3, 5}}, {{1, 0}, {5, 8}}, {{1, 1}, {8, 10}}};
  for (const auto &[coord, range] : expected) {
    Shard s = localShard({10, 7}, ps, mesh, coord);
    EXPECT_EQ(s.offset, (std::vector<int64_t>{range.begin, 0}));
    EXPECT_EQ(s.shape, (std::vector<int64_t>{range.size(), 7}));
  }
}

TEST(LocalShard, NegativeShardDimAndMixedPlacements) {
  Mesh mesh({2, 3});
  // S(-1) on a rank-2 tensor shards dim 1; P(max) holds dim 0 whole.
  std::vector<Placement> ps = {Placement::partial(ReduceKind::Max),
                               Placement::shard(-1)};
  Shard s = localShard({5, 7}, ps, mesh, {1, 2});
  EXPECT_EQ(s.offset, (std::vector<int64_t>{0, 6}));
  EXPECT_EQ(s.shape, (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(localShapeType({5, 7}, ps, mesh),
            (std::vector<int64_t>{5, kDynamic}));
  // Rank-0 tensors have an empty block.
  Shard scalar = localShard({}, {Placement::replicate(), Placement::partial()},
                            mesh, {0, 0});
  EXPECT_TRUE(scalar.offset.empty());
  EXPECT_TRUE(scalar.shape.empty());
}

TEST(LocalShard, TilesGlobalTensorExhaustive) {
  for (const std::vector<int64_t> &meshShape : kTilingMeshes) {
    Mesh mesh(meshShape);
    const std::vector<Coord> coords = allCoords(meshShape);
    for (const std::vector<Placement> &ps :
         allAssignments(kRank2Choices, meshShape.size())) {
      // Mesh dims that shard nothing replicate the data (R and P alike).
      std::vector<int64_t> replicaDims;
      int64_t replication = 1;
      for (size_t m = 0; m < ps.size(); ++m)
        if (!ps[m].isShard()) {
          replicaDims.push_back(static_cast<int64_t>(m));
          replication *= meshShape[m];
        }

      for (int64_t n0 = 0; n0 <= 13; ++n0)
        for (int64_t n1 = 0; n1 <= 13; ++n1) {
          SCOPED_TRACE("mesh=" + ::testing::PrintToString(meshShape) +
                       " placements=" + str(ps) + " global=[" +
                       std::to_string(n0) + ", " + std::to_string(n1) + "]");
          const std::vector<int64_t> global = {n0, n1};
          // Per replication class (coords agreeing on the non-sharding mesh
          // dims), how often each element is held.
          std::map<Coord, std::vector<int>> classCounts;
          std::vector<int> total(n0 * n1, 0);
          std::map<Coord, Shard> blockBySharding;

          for (const Coord &c : coords) {
            Shard s = localShard(global, ps, mesh, c);
            ASSERT_EQ(s.offset.size(), 2u);
            ASSERT_EQ(s.shape.size(), 2u);
            for (int64_t d = 0; d < 2; ++d) {
              std::vector<int64_t> dims = shardingMeshDims(ps, d);
              Range r = shardRange(global[d], mesh, dims, c);
              EXPECT_EQ(s.offset[d], r.begin);
              EXPECT_EQ(s.shape[d], r.size());
              Range ref = nestedRange(global[d], meshShape, dims, c);
              EXPECT_EQ(s.offset[d], ref.begin) << "dim " << d;
              EXPECT_EQ(s.shape[d], ref.size()) << "dim " << d;
              EXPECT_GE(s.shape[d], 0);
              EXPECT_GE(s.offset[d], 0);
              EXPECT_LE(s.offset[d] + s.shape[d], global[d]);
            }

            Coord classKey;
            for (int64_t m : replicaDims)
              classKey.push_back(c[m]);
            std::vector<int> &counts = classCounts[classKey];
            counts.resize(n0 * n1, 0);
            for (int64_t i = s.offset[0]; i < s.offset[0] + s.shape[0]; ++i)
              for (int64_t j = s.offset[1]; j < s.offset[1] + s.shape[1]; ++j) {
                ++counts[i * n1 + j];
                ++total[i * n1 + j];
              }

            // Coords differing only in non-sharding dims hold the same block.
            Coord shardingKey = c;
            for (int64_t m : replicaDims)
              shardingKey[m] = 0;
            auto [it, inserted] = blockBySharding.emplace(shardingKey, s);
            if (!inserted) {
              EXPECT_EQ(it->second.offset, s.offset);
              EXPECT_EQ(it->second.shape, s.shape);
            }
          }

          EXPECT_EQ(static_cast<int64_t>(classCounts.size()), replication);
          for (const auto &[key, counts] : classCounts)
            for (int64_t e = 0; e < n0 * n1; ++e)
              ASSERT_EQ(counts[e], 1)
                  << "element (" << e / n1 << ", " << e % n1
                  << ") in replication class " << ::testing::PrintToString(key);
          for (int64_t e = 0; e < n0 * n1; ++e)
            ASSERT_EQ(total[e], replication);
        }
    }
  }
}

TEST(ShardSize, MaxAndUniformMatchBruteForce) {
  for (const std::vector<int64_t> &shape : std::vector<std::vector<int64_t>>{
           {1}, {2}, {3}, {4}, {2, 2}, {2, 3}, {3, 2}, {2, 3, 2}, {4, 1, 3}}) {
    Mesh mesh(shape);
    const std::vector<Coord> coords = allCoords(shape);
    for (const std::vector<int64_t> &dims : orderedSubsets(mesh.rank()))
      for (int64_t n = 0; n <= 40; ++n) {
        SCOPED_TRACE("mesh=" + ::testing::PrintToString(shape) +
                     " dims=" + ::testing::PrintToString(dims) +
                     " N=" + std::to_string(n));
        std::set<int64_t> sizes;
        for (const Coord &c : coords)
          sizes.insert(nestedRange(n, shape, dims, c).size());
        EXPECT_EQ(maxShardSize(n, mesh, dims), *sizes.rbegin());
        std::optional<int64_t> uniform = uniformShardSize(n, mesh, dims);
        if (sizes.size() == 1) {
          ASSERT_TRUE(uniform.has_value());
          EXPECT_EQ(*uniform, *sizes.begin());
        } else {
          EXPECT_FALSE(uniform.has_value()) << "got " << *uniform;
        }
      }
  }
  // Direct examples.
  Mesh m22({2, 2});
  EXPECT_EQ(maxShardSize(10, m22, {0, 1}), 3);
  EXPECT_FALSE(uniformShardSize(10, m22, {0, 1}).has_value());
  EXPECT_EQ(uniformShardSize(12, m22, {0, 1}), 3);
  EXPECT_EQ(uniformShardSize(0, m22, {0, 1}), 0);
  EXPECT_EQ(uniformShardSize(7, m22, {}), 7);
  // 6 splits evenly over 2 but the halves (3) do not over 2.
  EXPECT_FALSE(uniformShardSize(6, m22, {0, 1}).has_value());
  EXPECT_EQ(maxShardSize(6, m22, {0, 1}), 2);
}

TEST(LocalShapeType, MatchesBruteForceOverCoords) {
  static_assert(kDynamic == std::numeric_limits<int64_t>::min(),
                "must match mlir::ShapedType::kDynamic");
  for (const std::vector<int64_t> &meshShape : kTilingMeshes) {
    Mesh mesh(meshShape);
    const std::vector<Coord> coords = allCoords(meshShape);
    for (const std::vector<Placement> &ps :
         allAssignments(kRank2Choices, meshShape.size()))
      for (int64_t n0 = 0; n0 <= 13; ++n0)
        for (int64_t n1 = 0; n1 <= 13; ++n1) {
          const std::vector<int64_t> global = {n0, n1};
          std::vector<std::set<int64_t>> sizes(2);
          for (const Coord &c : coords) {
            Shard s = localShard(global, ps, mesh, c);
            sizes[0].insert(s.shape[0]);
            sizes[1].insert(s.shape[1]);
          }
          std::vector<int64_t> expected;
          for (const std::set<int64_t> &s : sizes)
            expected.push_back(s.size() == 1 ? *s.begin() : kDynamic);
          EXPECT_EQ(localShapeType(global, ps, mesh), expected)
              << "mesh=" << ::testing::PrintToString(meshShape)
              << " placements=" << str(ps) << " global=[" << n0 << ", " << n1
              << "]";
        }
  }
  // Direct examples.
  EXPECT_EQ(localShapeType({8, 6}, {Placement::shard(0), Placement::shard(1)},
                           Mesh({2, 3})),
            (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(localShapeType({8, 7},
                           {Placement::shard(1), Placement::replicate()},
                           Mesh({2, 3})),
            (std::vector<int64_t>{8, kDynamic}));
}

TEST(NormalizeAndValidate, NormalisesNegativeShardDims) {
  Mesh mesh({2, 2, 2});
  std::vector<Placement> ps = {Placement::shard(-1), Placement::partial(),
                               Placement::shard(-3)};
  EXPECT_EQ(normalizeAndValidate(ps, mesh, 3), "");
  EXPECT_EQ(ps,
            (std::vector<Placement>{Placement::shard(2), Placement::partial(),
                                    Placement::shard(0)}));
  // Already-normalised lists are unchanged.
  std::vector<Placement> again = ps;
  EXPECT_EQ(normalizeAndValidate(again, mesh, 3), "");
  EXPECT_EQ(again, ps);
  // Non-shard placements never depend on the tensor rank.
  std::vector<Placement> noShard = {Placement::replicate(),
                                    Placement::partial(ReduceKind::Min),
                                    Placement::replicate()};
  EXPECT_EQ(normalizeAndValidate(noShard, mesh, 0), "");
}

TEST(NormalizeAndValidate, ErrorMessages) {
  Mesh mesh({2, 2});
  std::vector<Placement> three = {
      Placement::replicate(), Placement::replicate(), Placement::replicate()};
  EXPECT_EQ(normalizeAndValidate(three, mesh, 2),
            "placement count 3 does not match mesh rank 2");

  std::vector<Placement> none;
  EXPECT_EQ(normalizeAndValidate(none, mesh, 2),
            "placement count 0 does not match mesh rank 2");

  std::vector<Placement> tooHigh = {Placement::shard(4),
                                    Placement::replicate()};
  EXPECT_EQ(normalizeAndValidate(tooHigh, mesh, 2),
            "shard dim 4 out of range for rank-2 tensor");

  std::vector<Placement> tooLow = {Placement::replicate(),
                                   Placement::shard(-3)};
  EXPECT_EQ(normalizeAndValidate(tooLow, mesh, 2),
            "shard dim -3 out of range for rank-2 tensor");

  std::vector<Placement> scalar = {Placement::shard(0), Placement::replicate()};
  EXPECT_EQ(normalizeAndValidate(scalar, mesh, 0),
            "shard dim 0 out of range for rank-0 tensor");

  std::vector<Placement> badMesh = {Placement::replicate()};
  EXPECT_EQ(normalizeAndValidate(badMesh, Mesh({0}), 1),
            "invalid mesh: mesh dim 0 has non-positive size 0");
}

TEST(NormalizeAndValidate, LeavesPlacementsUntouchedOnError) {
  Mesh mesh({2, 2});
  // The first dim would normalise fine; the second is invalid.
  std::vector<Placement> ps = {Placement::shard(-1), Placement::shard(5)};
  const std::vector<Placement> before = ps;
  EXPECT_NE(normalizeAndValidate(ps, mesh, 2), "");
  EXPECT_EQ(ps, before);
}

} // namespace

//===----------------------------------------------------------------------===//
// Extreme sizes
//===----------------------------------------------------------------------===//

TEST(ChunkRange, NoOverflowNearInt64Max) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // ceil(kMax / 2) = 2^62; piece 1 ends exactly at kMax.
  EXPECT_EQ(chunkRange(kMax, 2, 0), (Range{0, int64_t(1) << 62}));
  EXPECT_EQ(chunkRange(kMax, 2, 1), (Range{int64_t(1) << 62, kMax}));
  // Far more parts than data: trailing pieces are empty, at the end.
  int64_t parts = (int64_t(1) << 62) + 1;
  EXPECT_EQ(chunkRange(3, parts, parts - 1), (Range{3, 3}));
  EXPECT_EQ(chunkRange(kMax, parts, parts - 1).size(), 0);
}

TEST(Mesh, ValidateRejectsDeviceCountOverflow) {
  Mesh mesh({int64_t(1) << 32, int64_t(1) << 32});
  EXPECT_EQ(mesh.validate(), "mesh has more devices than int64_t can count");
}

TEST(LocalShapeType, DynamicGlobalDimStaysDynamic) {
  for (int64_t n : {2, 3, 4}) {
    Mesh mesh({n});
    EXPECT_EQ(localShapeType({kDynamic, 8}, {Placement::shard(0)}, mesh),
              (std::vector<int64_t>{kDynamic, 8}));
    EXPECT_EQ(localShapeType({kDynamic, 8}, {Placement::replicate()}, mesh),
              (std::vector<int64_t>{kDynamic, 8}));
    EXPECT_EQ(uniformShardSize(kDynamic, mesh, {0}), std::nullopt);
  }
}

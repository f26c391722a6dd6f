//===- FusedAttentionTest.cpp - CPU attention against a naive one ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "FusedAttention.h"
#include "SkinnyGemm.h"
#include "StridedTensor.h"
#include "WorkerPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace dtensor::rt;
using namespace dtensor::rt::attention;

namespace {

/// The sizes and options of one case. Tensors are stored in a permuted
/// order (`layout` of each logical dim, like a transpose view) with padding,
/// so the kernel sees non-trivial strides.
struct Case {
  int64_t batch = 2, heads = 4, kvHeads = 4, queries = 5, keys = 7,
          features = 8, valueFeatures = 8;
  bool causal = false;
  bool mask = false;
  /// Mask broadcast over batch and heads ([1, 1, L, S]).
  bool broadcastMask = false;
  bool positions = false;
  /// Rows picking a slot of a larger key batch (a KV cache).
  bool rows = false;
  int64_t keyBatch = 0;
  /// Stores [B, L, H, E] (as a transposed view) rather than [B, H, L, E].
  bool transposed = false;
  unsigned seed = 1;
};

/// A 4-D tensor stored in dim order `order` (outermost first) with each
/// stored row padded by `pad` elements; `strides` gives the logical strides.
template <typename T> using Stored = dtensor::test::StridedTensor<T>;

template <typename T> struct Fixture {
  Case c;
  int64_t keyBatch;
  Stored<T> q, k, v, out, mask;
  std::vector<T> lse;
  std::vector<int64_t> rows, positions;

  explicit Fixture(const Case &c)
      : c(c), keyBatch(c.rows ? c.keyBatch : c.batch),
        q({c.batch, c.heads, c.queries, c.features}, c.transposed, 3),
        k({keyBatch, c.kvHeads, c.keys, c.features}, c.transposed, 1),
        v({keyBatch, c.kvHeads, c.keys, c.valueFeatures}, c.transposed, 2),
        out({c.batch, c.heads, c.queries, c.valueFeatures}, c.transposed, 0),
        mask({c.broadcastMask ? 1 : c.batch, c.broadcastMask ? 1 : c.heads,
              c.queries, c.keys},
             false, 0),
        lse(static_cast<size_t>(c.batch * c.heads * c.queries)) {
    std::mt19937 generator(c.seed);
    std::uniform_real_distribution<double> value(-2.0, 2.0);
    for (T &x : q.data)
      x = static_cast<T>(value(generator));
    for (T &x : k.data)
      x = static_cast<T>(value(generator));
    for (T &x : v.data)
      x = static_cast<T>(value(generator));
    for (T &x : out.data)
      x = std::numeric_limits<T>::quiet_NaN(); // every element is written
    // A mask of finite values and -inf; some rows wholly masked.
    std::uniform_int_distribution<int> pick(0, 3);
    for (T &x : mask.data)
      x = pick(generator) == 0 ? -std::numeric_limits<T>::infinity()
                               : static_cast<T>(value(generator));
    if (c.mask && c.queries > 0)
      for (int64_t j = 0; j < c.keys; ++j)
        mask.at(0, 0, c.queries - 1, j) = -std::numeric_limits<T>::infinity();
    if (c.broadcastMask)
      for (int dim = 0; dim < 2; ++dim)
        mask.strides[dim] = 0;
    std::uniform_int_distribution<int64_t> slot(0, keyBatch - 1);
    for (int64_t b = 0; b < c.batch; ++b) {
      rows.push_back(c.rows ? slot(generator) : b);
      positions.push_back(static_cast<int64_t>(generator() % (c.keys + 1)) - 1);
    }
    if (c.rows && c.batch > 1)
      rows[1] = -1; // a padding row
    if (c.rows && c.batch > 2)
      rows[2] = keyBatch; // out of range: no keys either
  }

  Problem<T> problem() {
    Problem<T> p;
    p.batch = c.batch;
    p.heads = c.heads;
    p.kvHeads = c.kvHeads;
    p.queries = c.queries;
    p.keys = c.keys;
    p.features = c.features;
    p.valueFeatures = c.valueFeatures;
    p.keyBatch = keyBatch;
    p.query = q.data.data();
    p.key = k.data.data();
    p.value = v.data.data();
    p.out = out.data.data();
    for (int dim = 0; dim < 4; ++dim) {
      p.queryStrides[dim] = q.strides[dim];
      p.keyStrides[dim] = k.strides[dim];
      p.valueStrides[dim] = v.strides[dim];
      p.outStrides[dim] = out.strides[dim];
      p.maskStrides[dim] = mask.strides[dim];
    }
    if (c.mask)
      p.mask = mask.data.data();
    if (c.rows)
      p.rows = rows.data();
    p.causal = c.causal;
    if (c.positions)
      p.positions = positions.data();
    p.scale = static_cast<T>(1.0 / std::sqrt(double(c.features) + 0.5));
    p.logSumExp = lse.data();
    p.logSumExpStrides[0] = c.heads * c.queries;
    p.logSumExpStrides[1] = c.queries;
    p.logSumExpStrides[2] = 1;
    return p;
  }

  /// The naive attention in double: every score, max, exp, sum; compares
  /// the kernel's output and log-sum-exp with it.
  void check(const Problem<T> &p, double tolerance) {
    const double minusInf = -std::numeric_limits<double>::infinity();
    int64_t groups = c.heads / c.kvHeads;
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t i = 0; i < c.queries; ++i) {
          int64_t row = rows[b];
          bool hasKeys = row >= 0 && row < keyBatch;
          std::vector<double> scores(c.keys, minusInf);
          double maximum = minusInf;
          for (int64_t j = 0; hasKeys && j < c.keys; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < c.features; ++e)
              dot += double(q.at(b, h, i, e)) *
                     double(k.at(row, h / groups, j, e));
            double score = dot * double(p.scale);
            if (c.mask)
              score +=
                  double(p.mask[b * p.maskStrides[0] + h * p.maskStrides[1] +
                                i * p.maskStrides[2] + j * p.maskStrides[3]]);
            int64_t position = (c.positions ? positions[b] : 0) + i;
            if (c.causal && j > position)
              score = minusInf;
            scores[j] = score;
            maximum = std::max(maximum, score);
          }
          double sum = 0;
          std::vector<double> expected(c.valueFeatures, 0.0);
          for (int64_t j = 0; j < c.keys; ++j) {
            if (scores[j] == minusInf)
              continue;
            double weight = std::exp(scores[j] - maximum);
            sum += weight;
            for (int64_t e = 0; e < c.valueFeatures; ++e)
              expected[e] += weight * double(v.at(row, h / groups, j, e));
          }
          for (int64_t e = 0; e < c.valueFeatures; ++e) {
            double want = sum > 0 ? expected[e] / sum : 0.0;
            ASSERT_NEAR(double(out.at(b, h, i, e)), want, tolerance)
                << "b " << b << " h " << h << " i " << i << " e " << e;
          }
          double gotLse = double(lse[(b * c.heads + h) * c.queries + i]);
          if (sum > 0)
            ASSERT_NEAR(gotLse, maximum + std::log(sum), tolerance)
                << "log-sum-exp of b " << b << " h " << h << " i " << i;
          else
            ASSERT_EQ(gotLse, minusInf) << "b " << b << " h " << h;
        }
  }
};

void runCase(const Case &c) {
  Fixture<float> f(c);
  Problem<float> p = f.problem();
  run(p, nullptr);
  f.check(p, 2e-5);
}

TEST(FusedAttentionTest, MultiHead) { runCase(Case{}); }

TEST(FusedAttentionTest, OddSizesAcrossTiles) {
  Case c;
  c.batch = 3;
  c.heads = 3;
  c.kvHeads = 3;
  c.queries = 13;
  c.keys = 131; // two full tiles of 64 and a partial one
  c.features = 5;
  c.valueFeatures = 3;
  c.transposed = true;
  runCase(c);
}

TEST(FusedAttentionTest, Causal) {
  Case c;
  c.causal = true;
  c.queries = 70;
  c.keys = 70;
  runCase(c);
  c.queries = 3; // fewer queries than keys: query i sees keys 0..i
  runCase(c);
}

TEST(FusedAttentionTest, GroupedQuery) {
  Case c;
  c.heads = 8;
  c.kvHeads = 2;
  c.queries = 9;
  c.keys = 100;
  c.causal = true;
  c.transposed = true;
  runCase(c);
  c.kvHeads = 1; // multi-query
  c.causal = false;
  c.mask = true;
  runCase(c);
}

TEST(FusedAttentionTest, AdditiveMask) {
  Case c;
  c.mask = true;
  c.keys = 77;
  runCase(c);
  c.broadcastMask = true;
  runCase(c);
}

TEST(FusedAttentionTest, KvCacheRowsAndPositions) {
  // A decode step and a prefill chunk over a cache of 5 slots x 150
  // positions: per-row slots (one padding row, one out of range) and start
  // positions, some negative (the whole row masked).
  Case c;
  c.batch = 4;
  c.heads = 4;
  c.kvHeads = 2;
  c.keys = 150;
  c.rows = true;
  c.keyBatch = 5;
  c.causal = true;
  c.positions = true;
  c.transposed = true;
  for (int64_t queries : {1, 6}) {
    for (unsigned seed : {1u, 2u, 3u}) {
      c.queries = queries;
      c.seed = seed;
      runCase(c);
    }
  }
}

TEST(FusedAttentionTest, ZeroLengths) {
  Case c;
  c.keys = 0; // no key: every output 0, log-sum-exp -inf
  runCase(c);
  c.keys = 4;
  c.queries = 0;
  runCase(c);
  c.queries = 3;
  c.batch = 0;
  runCase(c);
}

TEST(FusedAttentionTest, Double) {
  Case c;
  c.heads = 6;
  c.kvHeads = 3;
  c.keys = 90;
  c.queries = 4;
  c.causal = true;
  c.positions = true;
  Fixture<double> f(c);
  Problem<double> p = f.problem();
  run(p, nullptr);
  f.check(p, 1e-12);
}

TEST(FusedAttentionTest, VectorisedValueWidths) {
  // Value widths 16, 32, 64 and 128 keep their accumulators in vector
  // registers (accumulateValues); each against the naive attention, in f32
  // and f64, across whole and partial tiles of keys.
  for (int64_t width : {16, 32, 64, 128}) {
    Case c;
    c.heads = 2;
    c.kvHeads = 1;
    c.queries = 6;
    c.keys = 130;
    c.features = width;
    c.valueFeatures = width;
    c.causal = width == 32;
    runCase(c);
    Fixture<double> f(c);
    Problem<double> p = f.problem();
    run(p, nullptr);
    f.check(p, 1e-12);
  }
}

TEST(FusedAttentionTest, EveryBuildAgrees) {
  Case c;
  c.heads = 8;
  c.kvHeads = 2;
  c.queries = 17;
  c.keys = 200;
  c.features = 16;
  c.valueFeatures = 16;
  c.mask = true;
  std::vector<Isa> builds{Isa::Generic};
  skinny::Isa isa = skinny::detectIsa();
  if (isa == skinny::Isa::Avx2 || isa == skinny::Isa::Avx512)
    builds.push_back(Isa::Avx2);
  if (isa == skinny::Isa::Avx512)
    builds.push_back(Isa::Avx512);
  for (Isa build : builds) {
    Fixture<float> f(c);
    Problem<float> p = f.problem();
    runWith(build, p);
    f.check(p, 2e-5);
  }
}

TEST(FusedAttentionTest, EveryBuildGivesTheSameBits) {
  // The AVX-512, AVX2 and generic builds (explicit FMAs, -ffp-contract=off)
  // give the same bits, f32 and f64, causal with a mask over partial tiles.
  Case c;
  c.heads = 4;
  c.kvHeads = 2;
  c.queries = 37;
  c.keys = 150;
  c.features = 24;
  c.valueFeatures = 16;
  c.mask = true;
  c.causal = true;
  std::vector<Isa> builds{Isa::Generic};
  skinny::Isa isa = skinny::detectIsa();
  if (isa == skinny::Isa::Avx2 || isa == skinny::Isa::Avx512)
    builds.push_back(Isa::Avx2);
  if (isa == skinny::Isa::Avx512)
    builds.push_back(Isa::Avx512);
  Fixture<float> first(c);
  Fixture<double> firstDouble(c);
  runWith(builds[0], first.problem());
  runWith(builds[0], firstDouble.problem());
  for (size_t x = 1; x < builds.size(); ++x) {
    Fixture<float> other(c);
    Fixture<double> otherDouble(c);
    runWith(builds[x], other.problem());
    runWith(builds[x], otherDouble.problem());
    for (size_t i = 0; i < first.out.data.size(); ++i)
      ASSERT_EQ(std::memcmp(&first.out.data[i], &other.out.data[i], 4), 0)
          << "f32 build " << x << " element " << i;
    for (size_t i = 0; i < firstDouble.out.data.size(); ++i)
      ASSERT_EQ(
          std::memcmp(&firstDouble.out.data[i], &otherDouble.out.data[i], 8), 0)
          << "f64 build " << x << " element " << i;
    EXPECT_EQ(0, std::memcmp(first.lse.data(), other.lse.data(),
                             first.lse.size() * 4));
  }
}

TEST(FusedAttentionTest, HeadDimsAndLengths) {
  // Head dims 8 to 128 and odd ones, lengths that are no multiple of the
  // tiles (64 keys) or of the query blocks, causal offsets by positions.
  for (int64_t width : {8, 16, 32, 64, 128, 5, 33}) {
    Case c;
    c.batch = 2;
    c.heads = 4;
    c.kvHeads = 2;
    c.queries = 19;
    c.keys = 141;
    c.features = width;
    c.valueFeatures = width == 33 ? 7 : width;
    c.causal = width % 2 == 0;
    c.positions = width >= 64;
    c.mask = width == 16 || width == 5;
    runCase(c);
    Fixture<double> f(c);
    Problem<double> p = f.problem();
    run(p, nullptr);
    f.check(p, 1e-12);
  }
}

TEST(FusedAttentionTest, KeyBlocksAccumulateToTheWhole) {
  // A ring of key blocks (context parallelism): uneven blocks of the keys,
  // taken in a rotated order, the first written and the others merged in
  // through the log-sum-exp, equal the attention over all keys at once.
  // Causal per-row positions shift by each block's start, and a block wholly
  // after some rows' limits leaves those rows as they were.
  for (bool causal : {false, true}) {
    Case c;
    c.batch = 3;
    c.heads = 4;
    c.kvHeads = 2;
    c.queries = 9;
    c.keys = 130;
    c.features = 16;
    c.valueFeatures = 16;
    c.causal = causal;
    c.positions = causal;
    c.mask = !causal;
    c.transposed = true;
    Fixture<float> f(c);
    Problem<float> whole = f.problem();
    const int64_t starts[] = {44, 87, 0}, sizes[] = {43, 43, 44};
    for (int block = 0; block < 3; ++block) {
      Problem<float> p = whole;
      int64_t start = starts[block];
      p.keys = sizes[block];
      p.key = whole.key + start * whole.keyStrides[2];
      p.value = whole.value + start * whole.valueStrides[2];
      if (p.mask)
        p.mask = whole.mask + start * whole.maskStrides[3];
      std::vector<int64_t> positions(f.positions);
      for (int64_t &position : positions)
        position -= start;
      p.positions = causal ? positions.data() : nullptr;
      p.accumulate = block > 0;
      run(p, nullptr);
    }
    f.check(whole, 2e-5);
  }
}

TEST(FusedAttentionTest, ThreadsGiveTheSameResult) {
  // Large enough to be split over the pool.
  Case c;
  c.batch = 3;
  c.heads = 8;
  c.kvHeads = 4;
  c.queries = 40;
  c.keys = 300;
  c.causal = true;
  WorkerPool pool(3);
  Fixture<float> serial(c), threaded(c);
  Problem<float> p = serial.problem();
  run(p, nullptr);
  Problem<float> t = threaded.problem();
  run(t, &pool);
  serial.check(p, 2e-5);
  EXPECT_EQ(serial.out.data, threaded.out.data);
}

} // namespace

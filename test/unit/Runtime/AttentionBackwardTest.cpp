//===- AttentionBackwardTest.cpp - Attention gradients against references -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The backward kernel (attention/AttentionBackward.h) against a naive
// attention gradient in f64 and against central finite differences of the
// forward kernel; every build and thread count giving the same bits.
#include "AttentionBackward.h"
#include "FusedAttention.h"
#include "SkinnyGemm.h"
#include "StridedTensor.h"
#include "WorkerPool.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace dtensor::rt;
using namespace dtensor::rt::attention;

namespace {

struct Case {
  int64_t batch = 2, heads = 2, kvHeads = 2, queries = 5, keys = 7,
          features = 8, valueFeatures = 8;
  bool causal = false, mask = false, broadcastMask = false, positions = false;
  /// Stores [B, L, H, E] (a transposed view) rather than [B, H, L, E].
  bool transposed = false;
  unsigned seed = 1;
};

/// A 4-D tensor in dim order `order` (outermost first), each stored row
/// padded by `pad` elements.
template <typename T> using Stored = dtensor::test::StridedTensor<T>;

/// Inputs, the naive f64 forward (out, lse) stored as T, and the kernel's
/// gradients.
template <typename T> struct Fixture {
  Case c;
  Stored<T> q, k, v, out, dOut, mask, dQ, dK, dV;
  std::vector<T> lse;
  std::vector<int64_t> positions;
  double scale;

  explicit Fixture(const Case &c)
      : c(c), q({c.batch, c.heads, c.queries, c.features}, c.transposed, 3),
        k({c.batch, c.kvHeads, c.keys, c.features}, c.transposed, 1),
        v({c.batch, c.kvHeads, c.keys, c.valueFeatures}, c.transposed, 2),
        out({c.batch, c.heads, c.queries, c.valueFeatures}, c.transposed, 0),
        dOut({c.batch, c.heads, c.queries, c.valueFeatures}, !c.transposed, 1),
        mask({c.broadcastMask ? 1 : c.batch, c.broadcastMask ? 1 : c.heads,
              c.queries, c.keys},
             false, 0),
        dQ({c.batch, c.heads, c.queries, c.features}, !c.transposed, 2),
        dK({c.batch, c.kvHeads, c.keys, c.features}, c.transposed, 0),
        dV({c.batch, c.kvHeads, c.keys, c.valueFeatures}, !c.transposed, 1),
        lse(static_cast<size_t>(c.batch * c.heads * c.queries)),
        scale(1.0 / std::sqrt(double(c.features) + 0.5)) {
    std::mt19937 generator(c.seed);
    std::uniform_real_distribution<double> value(-2.0, 2.0);
    for (Stored<T> *t : {&q, &k, &v, &dOut})
      for (T &x : t->data)
        x = static_cast<T>(value(generator));
    for (Stored<T> *t : {&dQ, &dK, &dV})
      for (T &x : t->data)
        x = std::numeric_limits<T>::quiet_NaN(); // every element is written
    std::uniform_int_distribution<int> pick(0, 3);
    for (T &x : mask.data)
      x = pick(generator) == 0 ? -std::numeric_limits<T>::infinity()
                               : static_cast<T>(value(generator));
    if (c.mask && c.queries > 0)
      for (int64_t j = 0; j < c.keys; ++j) // a wholly masked query
        mask.at(0, 0, c.queries - 1, j) = -std::numeric_limits<T>::infinity();
    for (int64_t b = 0; b < c.batch; ++b)
      positions.push_back(static_cast<int64_t>(generator() % (c.keys + 1)) - 1);
    forward();
  }

  bool masked(int64_t b, int64_t i, int64_t j) const {
    int64_t position = (c.positions ? positions[b] : 0) + i;
    return c.causal && j > position;
  }
  double maskAt(int64_t b, int64_t h, int64_t i, int64_t j) {
    if (!c.mask)
      return 0;
    return double(
        mask.at(c.broadcastMask ? 0 : b, c.broadcastMask ? 0 : h, i, j));
  }

  /// Probabilities of query (b, h, i) in f64 (all 0 when it sees no key);
  /// returns its log-sum-exp.
  double probabilities(int64_t b, int64_t h, int64_t i,
                       std::vector<double> &p) {
    const double minusInf = -std::numeric_limits<double>::infinity();
    int64_t kvHead = h / (c.heads / c.kvHeads);
    p.assign(c.keys, minusInf);
    double maximum = minusInf;
    for (int64_t j = 0; j < c.keys; ++j) {
      if (masked(b, i, j))
        continue;
      double dot = 0;
      for (int64_t e = 0; e < c.features; ++e)
        dot += double(q.at(b, h, i, e)) * double(k.at(b, kvHead, j, e));
      p[j] = dot * double(T(scale)) + maskAt(b, h, i, j);
      maximum = std::max(maximum, p[j]);
    }
    double sum = 0;
    for (double &x : p) {
      x = x == minusInf ? 0.0 : std::exp(x - maximum);
      sum += x;
    }
    for (double &x : p)
      x = sum > 0 ? x / sum : 0.0;
    return sum > 0 ? maximum + std::log(sum) : minusInf;
  }

  void forward() {
    std::vector<double> p;
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t i = 0; i < c.queries; ++i) {
          lse[(b * c.heads + h) * c.queries + i] =
              static_cast<T>(probabilities(b, h, i, p));
          int64_t kvHead = h / (c.heads / c.kvHeads);
          for (int64_t e = 0; e < c.valueFeatures; ++e) {
            double o = 0;
            for (int64_t j = 0; j < c.keys; ++j)
              o += p[j] * double(v.at(b, kvHead, j, e));
            out.at(b, h, i, e) = static_cast<T>(o);
          }
        }
  }

  BackwardProblem<T> problem() {
    BackwardProblem<T> p;
    p.batch = c.batch;
    p.heads = c.heads;
    p.kvHeads = c.kvHeads;
    p.queries = c.queries;
    p.keys = c.keys;
    p.features = c.features;
    p.valueFeatures = c.valueFeatures;
    p.query = q.data.data();
    q.copyStrides(p.queryStrides);
    p.key = k.data.data();
    k.copyStrides(p.keyStrides);
    p.value = v.data.data();
    v.copyStrides(p.valueStrides);
    p.out = out.data.data();
    out.copyStrides(p.outStrides);
    p.dOut = dOut.data.data();
    dOut.copyStrides(p.dOutStrides);
    p.logSumExp = lse.data();
    p.logSumExpStrides[0] = c.heads * c.queries;
    p.logSumExpStrides[1] = c.queries;
    p.logSumExpStrides[2] = 1;
    if (c.mask) {
      p.mask = mask.data.data();
      mask.copyStrides(p.maskStrides);
      if (c.broadcastMask)
        p.maskStrides[0] = p.maskStrides[1] = 0;
    }
    p.causal = c.causal;
    if (c.positions)
      p.positions = positions.data();
    p.scale = static_cast<T>(scale);
    p.dQuery = dQ.data.data();
    dQ.copyStrides(p.dQueryStrides);
    p.dKey = dK.data.data();
    dK.copyStrides(p.dKeyStrides);
    p.dValue = dV.data.data();
    dV.copyStrides(p.dValueStrides);
    return p;
  }

  /// The naive gradients in f64 (from this fixture's out and lse, as the
  /// kernel gets them) against the kernel's, each within `tolerance` times
  /// (1 + |expected|).
  void check(double tolerance) {
    int64_t groups = c.heads / c.kvHeads;
    Stored<double> wantQ({c.batch, c.heads, c.queries, c.features}, false, 0),
        wantK({c.batch, c.kvHeads, c.keys, c.features}, false, 0),
        wantV({c.batch, c.kvHeads, c.keys, c.valueFeatures}, false, 0);
    std::vector<double> p, dP(c.keys);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t i = 0; i < c.queries; ++i) {
          probabilities(b, h, i, p);
          int64_t kvHead = h / groups;
          double d = 0;
          for (int64_t e = 0; e < c.valueFeatures; ++e)
            d += double(dOut.at(b, h, i, e)) * double(out.at(b, h, i, e));
          for (int64_t j = 0; j < c.keys; ++j) {
            double dp = 0;
            for (int64_t e = 0; e < c.valueFeatures; ++e) {
              dp += double(dOut.at(b, h, i, e)) * double(v.at(b, kvHead, j, e));
              wantV.at(b, kvHead, j, e) += p[j] * double(dOut.at(b, h, i, e));
            }
            double dS = p[j] * (dp - d) * double(T(scale));
            for (int64_t e = 0; e < c.features; ++e) {
              wantQ.at(b, h, i, e) += dS * double(k.at(b, kvHead, j, e));
              wantK.at(b, kvHead, j, e) += dS * double(q.at(b, h, i, e));
            }
          }
        }
    compare("d_query", dQ, wantQ, tolerance);
    compare("d_key", dK, wantK, tolerance);
    compare("d_value", dV, wantV, tolerance);
  }

  static void compare(const char *what, Stored<T> &got, Stored<double> &want,
                      double tolerance) {
    for (int64_t a = 0; a < want.sizes[0]; ++a)
      for (int64_t b = 0; b < want.sizes[1]; ++b)
        for (int64_t i = 0; i < want.sizes[2]; ++i)
          for (int64_t e = 0; e < want.sizes[3]; ++e) {
            double expected = want.at(a, b, i, e);
            ASSERT_NEAR(double(got.at(a, b, i, e)), expected,
                        tolerance * (1 + std::abs(expected)))
                << what << " [" << a << ", " << b << ", " << i << ", " << e
                << "]";
          }
  }
};

void runCase(const Case &c) {
  {
    Fixture<float> f(c);
    runBackward(f.problem(), nullptr);
    f.check(5e-5);
  }
  Fixture<double> f(c);
  runBackward(f.problem(), nullptr);
  f.check(1e-11);
}

TEST(AttentionBackwardTest, MultiHead) { runCase(Case{}); }

TEST(AttentionBackwardTest, OddLengthsAcrossBlocks) {
  // 131 keys: two blocks of 64 and a partial one; 37 queries: a block of 32
  // and a partial one; odd head dims and E != Ev.
  Case c;
  c.batch = 1;
  c.heads = 3;
  c.kvHeads = 3;
  c.queries = 37;
  c.keys = 131;
  c.features = 5;
  c.valueFeatures = 3;
  c.transposed = true;
  runCase(c);
  c.features = 13;
  c.valueFeatures = 24;
  c.transposed = false;
  runCase(c);
}

TEST(AttentionBackwardTest, Causal) {
  Case c;
  c.causal = true;
  c.queries = 70;
  c.keys = 70;
  runCase(c);
  c.queries = 3; // fewer queries than keys: query i sees keys 0..i
  runCase(c);
  c.queries = 90; // more queries than keys
  c.keys = 66;
  runCase(c);
}

TEST(AttentionBackwardTest, CausalPositions) {
  // Per-row start positions, some negative (the whole row sees no key).
  Case c;
  c.batch = 4;
  c.causal = true;
  c.positions = true;
  c.queries = 9;
  c.keys = 150;
  for (unsigned seed : {1u, 2u, 3u}) {
    c.seed = seed;
    runCase(c);
  }
}

TEST(AttentionBackwardTest, GroupedQuery) {
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

TEST(AttentionBackwardTest, AdditiveMask) {
  Case c;
  c.mask = true;
  c.keys = 77;
  c.queries = 40;
  runCase(c);
  c.broadcastMask = true;
  c.causal = true;
  runCase(c);
}

TEST(AttentionBackwardTest, HeadDims) {
  for (int64_t width : {8, 16, 32, 64, 128, 7, 33}) {
    Case c;
    c.batch = 1;
    c.heads = 2;
    c.kvHeads = 1;
    c.queries = 35;
    c.keys = 70;
    c.features = width;
    c.valueFeatures = width;
    c.causal = width % 2 == 0;
    runCase(c);
  }
}

TEST(AttentionBackwardTest, ZeroLengths) {
  Case c;
  c.keys = 0; // no key: d_query 0
  runCase(c);
  c.keys = 4;
  c.queries = 0; // no query: d_key and d_value 0
  runCase(c);
  c.queries = 3;
  c.batch = 0;
  runCase(c);
}

/// sum(out * w) of the f64 forward kernel on `f`'s inputs.
double weightedOutput(Fixture<double> &f, const Stored<double> &w) {
  const Case &c = f.c;
  Problem<double> p;
  p.batch = c.batch;
  p.heads = c.heads;
  p.kvHeads = c.kvHeads;
  p.queries = c.queries;
  p.keys = c.keys;
  p.features = c.features;
  p.valueFeatures = c.valueFeatures;
  p.keyBatch = c.batch;
  p.query = f.q.data.data();
  f.q.copyStrides(p.queryStrides);
  p.key = f.k.data.data();
  f.k.copyStrides(p.keyStrides);
  p.value = f.v.data.data();
  f.v.copyStrides(p.valueStrides);
  if (c.mask) {
    p.mask = f.mask.data.data();
    f.mask.copyStrides(p.maskStrides);
  }
  p.causal = c.causal;
  if (c.positions)
    p.positions = f.positions.data();
  p.scale = f.scale;
  Stored<double> out({c.batch, c.heads, c.queries, c.valueFeatures}, false, 0);
  p.out = out.data.data();
  out.copyStrides(p.outStrides);
  run(p, nullptr);
  double sum = 0;
  for (size_t x = 0; x < out.data.size(); ++x)
    sum += out.data[x] * w.data[x];
  return sum;
}

TEST(AttentionBackwardTest, FiniteDifferencesOfTheForward) {
  // The gradients of sum(out * w) against central differences of the
  // forward kernel in f64, for every element of q, k and v.
  for (bool causal : {false, true}) {
    Case c;
    c.batch = 2;
    c.heads = 4;
    c.kvHeads = 2;
    c.queries = 6;
    c.keys = 9;
    c.features = 5;
    c.valueFeatures = 3;
    c.causal = causal;
    c.positions = causal;
    c.mask = !causal;
    Fixture<double> f(c);
    // The forward kernel's out and lse, and w as d_out.
    Stored<double> w({c.batch, c.heads, c.queries, c.valueFeatures}, false, 0);
    std::mt19937 generator(7);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (double &x : w.data)
      x = value(generator);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t i = 0; i < c.queries; ++i)
          for (int64_t e = 0; e < c.valueFeatures; ++e)
            f.dOut.at(b, h, i, e) = w.at(b, h, i, e);
    runBackward(f.problem(), nullptr);
    const double step = 1e-5;
    auto checkAll = [&](const char *what, Stored<double> &input,
                        Stored<double> &gradient) {
      for (int64_t a = 0; a < input.sizes[0]; ++a)
        for (int64_t b = 0; b < input.sizes[1]; ++b)
          for (int64_t i = 0; i < input.sizes[2]; ++i)
            for (int64_t e = 0; e < input.sizes[3]; ++e) {
              double &x = input.at(a, b, i, e), saved = x;
              x = saved + step;
              double up = weightedOutput(f, w);
              x = saved - step;
              double down = weightedOutput(f, w);
              x = saved;
              double numeric = (up - down) / (2 * step);
              ASSERT_NEAR(gradient.at(a, b, i, e), numeric, 1e-7)
                  << what << " [" << a << ", " << b << ", " << i << ", " << e
                  << "] causal " << causal;
            }
    };
    checkAll("d_query", f.q, f.dQ);
    checkAll("d_key", f.k, f.dK);
    checkAll("d_value", f.v, f.dV);
  }
}

/// The logical elements of `a` and `b` (their padding is never written)
/// have the same bits.
template <typename T>
void expectSameBits(const char *what, Stored<T> &a, Stored<T> &b) {
  for (int64_t x = 0; x < a.sizes[0]; ++x)
    for (int64_t y = 0; y < a.sizes[1]; ++y)
      for (int64_t i = 0; i < a.sizes[2]; ++i)
        for (int64_t e = 0; e < a.sizes[3]; ++e)
          ASSERT_EQ(
              std::memcmp(&a.at(x, y, i, e), &b.at(x, y, i, e), sizeof(T)), 0)
              << what << " [" << x << ", " << y << ", " << i << ", " << e
              << "]: " << a.at(x, y, i, e) << " and " << b.at(x, y, i, e);
}

template <typename T> void expectEveryBuildAgrees(const Case &c) {
  std::vector<Isa> builds{Isa::Generic};
  skinny::Isa isa = skinny::detectIsa();
  if (isa == skinny::Isa::Avx2 || isa == skinny::Isa::Avx512)
    builds.push_back(Isa::Avx2);
  if (isa == skinny::Isa::Avx512)
    builds.push_back(Isa::Avx512);
  Fixture<T> first(c);
  runBackwardWith(builds[0], first.problem());
  first.check(std::is_same<T, float>::value ? 5e-5 : 1e-11);
  for (size_t x = 1; x < builds.size(); ++x) {
    Fixture<T> other(c);
    runBackwardWith(builds[x], other.problem());
    expectSameBits("d_query", first.dQ, other.dQ);
    expectSameBits("d_key", first.dK, other.dK);
    expectSameBits("d_value", first.dV, other.dV);
  }
}

TEST(AttentionBackwardTest, EveryBuildGivesTheSameBits) {
  Case c;
  c.heads = 4;
  c.kvHeads = 2;
  c.queries = 40;
  c.keys = 150;
  c.features = 16;
  c.valueFeatures = 24;
  c.mask = true;
  c.causal = true;
  expectEveryBuildAgrees<float>(c);
  expectEveryBuildAgrees<double>(c);
}

TEST(AttentionBackwardTest, ThreadsGiveTheSameResult) {
  // One (batch row, kv head): its keys split into chunks over the pool.
  for (int64_t batch : {1, 3}) {
    Case c;
    c.batch = batch;
    c.heads = 4;
    c.kvHeads = 1;
    c.queries = 100;
    c.keys = 300;
    c.features = 16;
    c.valueFeatures = 16;
    c.causal = true;
    WorkerPool pool(3);
    Fixture<float> serial(c), threaded(c);
    runBackward(serial.problem(), nullptr);
    runBackward(threaded.problem(), &pool);
    serial.check(5e-5);
    expectSameBits("d_query", serial.dQ, threaded.dQ);
    expectSameBits("d_key", serial.dK, threaded.dK);
    expectSameBits("d_value", serial.dV, threaded.dV);
  }
}

} // namespace

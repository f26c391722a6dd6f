//===- SkinnyGemmTest.cpp - The runtime's few-row products and threads ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "SkinnyGemm.h"
#include "Blas.h"
#include "WorkerPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace dtensor::rt;

namespace {

/// Operands with padded rows (lda, ldw, ldc larger than needed), random
/// values, and C filled with `fill`.
struct Operands {
  int64_t m, n, k, lda, ldw, ldc;
  std::vector<float> a, w, c;

  Operands(int64_t m, int64_t n, int64_t k, float fill, unsigned seed)
      : m(m), n(n), k(k), lda(k + 3), ldw(k + 5), ldc(n + 2), a(m * lda),
        w(n * ldw), c(m * ldc, fill) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float &x : a)
      x = value(generator);
    for (float &x : w)
      x = value(generator);
  }

  skinny::Problem problem(float beta) {
    return {m, n, k, a.data(), lda, w.data(), ldw, beta, c.data(), ldc};
  }

  /// C[i][j] in double, plus `old` when beta is 1.
  double expected(int64_t i, int64_t j, double old) const {
    double sum = old;
    for (int64_t p = 0; p < k; ++p)
      sum += double(a[i * lda + p]) * double(w[j * ldw + p]);
    return sum;
  }
};

std::vector<skinny::Isa> supportedIsas() {
  switch (skinny::detectIsa()) {
  case skinny::Isa::Avx512:
    return {skinny::Isa::Avx2, skinny::Isa::Avx512};
  case skinny::Isa::Avx2:
    return {skinny::Isa::Avx2};
  case skinny::Isa::None:
    return {};
  }
  return {};
}

const char *isaName(skinny::Isa isa) {
  return isa == skinny::Isa::Avx512 ? "avx512" : "avx2";
}

/// Sums of k products of values in [-1, 1] in f32 against f64.
double tolerance(int64_t k) { return 1e-6 * double(k) + 1e-6; }

} // namespace

TEST(SkinnyGemmTest, EveryRowCountAndShapeMatchesDouble) {
  std::vector<skinny::Isa> isas = supportedIsas();
  if (isas.empty())
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  unsigned seed = 1;
  for (skinny::Isa isa : isas)
    for (int64_t m = 1; m <= skinny::kMaxRows; ++m)
      for (int64_t n : {1, 3, 8, 9, 21})
        for (int64_t k : {1, 7, 8, 15, 16, 17, 40, 301})
          for (float beta : {0.0f, 1.0f}) {
            // beta 0 ignores C's old contents, NaN included.
            float fill =
                beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : 0.5f;
            Operands ops(m, n, k, fill, seed++);
            skinny::computeColumns(isa, ops.problem(beta), 0, n);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j)
                ASSERT_NEAR(ops.c[i * ops.ldc + j],
                            ops.expected(i, j, beta == 0.0f ? 0.0 : 0.5),
                            tolerance(k))
                    << isaName(isa) << " m=" << m << " n=" << n << " k=" << k
                    << " beta=" << beta << " at " << i << "," << j;
            // The padding after each row of C is left alone.
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = n; j < ops.ldc; ++j)
                ASSERT_TRUE(beta != 0.0f ? ops.c[i * ops.ldc + j] == 0.5f
                                         : std::isnan(ops.c[i * ops.ldc + j]));
          }
}

TEST(SkinnyGemmTest, ComputesOnlyTheColumnsAsked) {
  for (skinny::Isa isa : supportedIsas()) {
    Operands ops(5, 30, 33, -7.0f, 42);
    skinny::computeColumns(isa, ops.problem(0.0f), 9, 22);
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 30; ++j) {
        if (j >= 9 && j < 22)
          EXPECT_NEAR(ops.c[i * ops.ldc + j], ops.expected(i, j, 0.0),
                      tolerance(33));
        else
          EXPECT_EQ(ops.c[i * ops.ldc + j], -7.0f) << i << "," << j;
      }
  }
}

TEST(SkinnyGemmTest, ThreadedProductsEqualTheSerialOnes) {
  if (skinny::detectIsa() == skinny::Isa::None)
    GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  // W of 1000 x 333 floats (1.3 MB) is spread over the pool's threads.
  for (int threads : {1, 2, 3}) {
    WorkerPool pool(threads);
    for (int64_t m : {1, 4, 8}) {
      Operands ops(m, 1000, 333, 0.0f, unsigned(7 * m + threads));
      ASSERT_TRUE(skinny::multiply(ops.problem(0.0f), &pool));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < 1000; ++j)
          ASSERT_NEAR(ops.c[i * ops.ldc + j], ops.expected(i, j, 0.0),
                      tolerance(333))
              << threads << " threads, m=" << m << " at " << i << "," << j;
    }
  }
}

TEST(SkinnyGemmTest, LeavesOtherShapesToBlas) {
  Operands nine(9, 4, 4, 0.0f, 3);
  EXPECT_FALSE(skinny::multiply(nine.problem(0.0f), nullptr));
  Operands empty(2, 4, 0, 0.0f, 3);
  EXPECT_FALSE(skinny::multiply(empty.problem(0.0f), nullptr));
  // Small products of several rows: OpenBLAS's small-matrix kernels.
  Operands small(8, 64, 64, 0.0f, 3);
  EXPECT_FALSE(skinny::multiply(small.problem(0.0f), nullptr));
}

TEST(SkinnyGemmTest, BlasSgemmWithATransposedWeight) {
  // blas::sgemm routes few-row products by a [n, k] weight to the skinny
  // kernels and the rest to OpenBLAS; both give the product.
  for (int64_t m : {1, 2, 8, 9}) {
    Operands ops(m, 300, 200, 1.0f, unsigned(m));
    dtensor::rt::blas::sgemm(false, true, m, 300, 200, ops.a.data(), ops.lda,
                             ops.w.data(), ops.ldw, 1.0f, ops.c.data(),
                             ops.ldc);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < 300; ++j)
        ASSERT_NEAR(ops.c[i * ops.ldc + j], ops.expected(i, j, 1.0),
                    tolerance(200))
            << "m=" << m;
  }
}

TEST(WorkerPoolTest, RunsEveryPieceOnce) {
  for (int threads : {1, 2, 4}) {
    WorkerPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t count : {0, 1, 2, 5, 64, 1000}) {
      for (int loop = 0; loop < 50; ++loop) {
        std::vector<std::atomic<int>> runs(count);
        pool.parallelFor(count, [&](int64_t i) { runs[i].fetch_add(1); });
        for (int64_t i = 0; i < count; ++i)
          ASSERT_EQ(runs[i].load(), 1)
              << threads << " threads, " << count << " pieces, piece " << i;
      }
    }
  }
}

TEST(WorkerPoolTest, UsesTheWorkers) {
  // With 3 threads and pieces that wait for each other, all three must run
  // at once: the loop finishes only if the workers take part.
  WorkerPool pool(3);
  std::atomic<int> arrived{0};
  pool.parallelFor(3, [&](int64_t) {
    arrived.fetch_add(1);
    while (arrived.load() < 3)
      std::this_thread::yield();
  });
  EXPECT_EQ(arrived.load(), 3);
}

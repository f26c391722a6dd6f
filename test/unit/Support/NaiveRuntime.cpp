//===- NaiveRuntime.cpp - The runtime ABI for tests, done naively ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "NaiveRuntime.h"

#include "dtensor/rt_abi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace {

struct QueuedBuffer {
  int64_t rank;
  const int64_t *descriptor;
};
std::vector<QueuedBuffer> queue;
std::vector<int32_t> matmulBetas;
uint64_t stepSeed = 0;

/// Element `index` of a queued descriptor (any strides).
template <typename T>
T &element(const QueuedBuffer &buffer, const int64_t *index) {
  const int64_t *d = buffer.descriptor;
  T *aligned = reinterpret_cast<T *>(d[1]);
  const int64_t *strides = d + 3 + buffer.rank;
  int64_t position = d[2];
  for (int64_t dim = 0; dim < buffer.rank; ++dim)
    position += index[dim] * strides[dim];
  return aligned[position];
}

/// C = A x B (+ C), rank 2 or batched rank 3.
template <typename T> void naiveMatmul(int32_t beta) {
  const QueuedBuffer &a = queue[0], &b = queue[1], &c = queue[2];
  bool batched = c.rank == 3;
  const int64_t *sizesA = a.descriptor + 3, *sizesC = c.descriptor + 3;
  int64_t batches = batched ? sizesC[0] : 1;
  int64_t m = sizesC[batched], n = sizesC[batched + 1];
  int64_t k = sizesA[batched + 1];
  // Indices of (p, i, j) without p when not batched.
  auto at = [batched](int64_t p, int64_t i, int64_t j, int64_t *index) {
    int64_t full[3] = {p, i, j};
    for (int dim = 0; dim < 2 + batched; ++dim)
      index[dim] = full[dim + !batched];
    return index;
  };
  int64_t ia[3], ib[3], ic[3];
  for (int64_t p = 0; p < batches; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum +=
              element<T>(a, at(p, i, l, ia)) * element<T>(b, at(p, l, j, ib));
        T &out = element<T>(c, at(p, i, j, ic));
        out = beta ? out + sum : sum;
      }
}

} // namespace

const std::vector<int32_t> &dtensor::test::getMatmulBetas() {
  return matmulBetas;
}

void dtensor::test::resetNaiveRuntime() {
  queue.clear();
  matmulBetas.clear();
  stepSeed = 0;
}

void dtensor::test::setNaiveStepSeed(uint64_t seed) { stepSeed = seed; }

extern "C" {
__attribute__((used)) void dtensor_rt_push_buffer(int64_t rank,
                                                  void *descriptor) {
  queue.push_back({rank, static_cast<const int64_t *>(descriptor)});
}

__attribute__((used)) void dtensor_rt_matmul(int32_t dtype, int32_t beta) {
  matmulBetas.push_back(beta);
  if (queue.size() == 3 && dtype == DTENSOR_RT_F32)
    naiveMatmul<float>(beta);
  else if (queue.size() == 3 && dtype == DTENSOR_RT_F64)
    naiveMatmul<double>(beta);
  else
    ADD_FAILURE() << "bad matmul call: dtype " << dtype << ", " << queue.size()
                  << " buffers";
  queue.clear();
}

__attribute__((used)) void *dtensor_rt_alloc(uint64_t bytes) {
  return std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
}

__attribute__((used)) void dtensor_rt_free(void *buffer) { std::free(buffer); }

__attribute__((used)) uint64_t dtensor_rt_step_seed(void) { return stepSeed; }

/// Runs the iterations on the calling thread, in three pieces (each a
/// multiple of the step) so that a nest's task is run on sub-ranges, as the
/// runtime's worker threads would.
__attribute__((used)) void
dtensor_rt_parallel_for(void (*task)(void *args, int64_t begin, int64_t end),
                        void *args, int64_t begin, int64_t end, int64_t step,
                        int64_t /*work*/) {
  int64_t iterations = (end - begin + step - 1) / step;
  int64_t perPiece = (iterations + 2) / 3;
  for (int64_t first = 0; first < iterations; first += perPiece) {
    int64_t last = std::min(iterations, first + perPiece);
    task(args, begin + first * step, std::min(end, begin + last * step));
  }
}
}

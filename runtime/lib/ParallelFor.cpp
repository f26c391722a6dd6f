//===- ParallelFor.cpp - Parallel loop nests on the worker threads --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor_rt_parallel_for: the outer dim of a compiled parallel loop nest,
// cut into a few pieces per thread (loop nests are not all equally costly
// per iteration: causal attention's rows grow) and run on the worker pool
// that the runtime's own matrix kernels use. Small ranges run on the
// calling thread: waking the workers costs a few microseconds.
//
//===----------------------------------------------------------------------===//

#include "Blas.h"
#include "Export.h"
#include "WorkerPool.h"

#include "dtensor/rt_abi.h"

#include <algorithm>
#include <memory>

namespace {

/// Work (body ops times iterations, as the compiler counts it) below which
/// a range runs on the calling thread.
constexpr int64_t kGrain = 32768;
constexpr int64_t kPiecesPerThread = 4;

} // namespace

extern "C" DTENSOR_EXPORT void
dtensor_rt_parallel_for(void (*task)(void *, int64_t, int64_t), void *args,
                        int64_t begin, int64_t end, int64_t step,
                        int64_t work) {
  if (end <= begin)
    return;
  if (step < 1)
    step = 1;
  int64_t iterations = (end - begin + step - 1) / step;
  std::shared_ptr<dtensor::rt::WorkerPool> pool =
      dtensor::rt::blas::sharedWorkerPool();
  int threads = pool ? pool->threads() : 1;
  if (threads < 2 || iterations < 2 ||
      iterations * std::max<int64_t>(work, 1) < kGrain) {
    task(args, begin, end);
    return;
  }
  struct Range {
    void (*task)(void *, int64_t, int64_t);
    void *args;
    int64_t begin, end, step, iterations, pieces;
  } range{task,       args,      begin,
          end,        step,      iterations,
          std::min<int64_t>(iterations, threads * kPiecesPerThread)};
  // One pointer captured: std::function keeps it inline, with no
  // allocation.
  pool->parallelFor(range.pieces, [r = &range](int64_t piece) {
    int64_t first = piece * r->iterations / r->pieces;
    int64_t last = (piece + 1) * r->iterations / r->pieces;
    r->task(r->args, r->begin + first * r->step,
            std::min(r->end, r->begin + last * r->step));
  });
}

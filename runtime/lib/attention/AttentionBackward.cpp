//===- AttentionBackward.cpp - Backward pieces over the worker pool -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Splits the keys of each (batch row, key/value head) into chunks, enough
// for the pieces to keep the threads busy when B x Hkv is small, picks the
// build of the loops this CPU supports, runs the pieces on the worker pool
// and adds up the chunks' query gradients. The chunks depend only on the
// shapes, so the result does not depend on the number of threads.
//
//===----------------------------------------------------------------------===//

#include "AttentionBackward.h"
#include "AttentionBackwardKernel.h"

#include "SkinnyGemm.h"
#include "WorkerPool.h"

#include <vector>

namespace dtensor::rt::attention {

namespace {

/// Pieces wanted per backward problem: the chunks of a (batch row, kv head)
/// are raised until there are this many, or one per key block.
constexpr int64_t kBackwardPieces = 16;
/// Elements of the chunks' partial query gradients beyond which fewer
/// chunks are made (the memory is that of this many elements).
constexpr int64_t kPartialBudget = int64_t(1) << 23;
/// Multiply-adds below which the caller computes everything alone.
constexpr int64_t kBackwardParallelWork = int64_t(1) << 16;
/// Pieces per chunk of the pool's work.
constexpr int64_t kPiecesPerThread = 4;

template <typename T>
void piecesWith(Isa isa, const BackwardProblem<T> &p,
                const BackwardPlan<T> &plan, int64_t begin, int64_t end) {
  if (isa == Isa::Avx512)
    backwardPiecesAvx512(p, plan, begin, end);
  else if (isa == Isa::Avx2)
    backwardPiecesAvx2(p, plan, begin, end);
  else
    backwardPiecesGeneric(p, plan, begin, end);
}

/// Runs body(i) for i < count, on the pool when there is one and the work
/// is large enough.
template <typename Body>
void spread(WorkerPool *pool, int64_t count, int64_t work, Body body) {
  if (!pool || pool->threads() <= 1 || count <= 1 ||
      work < kBackwardParallelWork) {
    for (int64_t i = 0; i < count; ++i)
      body(i);
    return;
  }
  int64_t parts = std::min<int64_t>(count, pool->threads() * kPiecesPerThread);
  pool->parallelFor(parts, [&](int64_t part) {
    for (int64_t i = count * part / parts; i < count * (part + 1) / parts; ++i)
      body(i);
  });
}

template <typename T>
void runBackwardOn(Isa isa, const BackwardProblem<T> &p, WorkerPool *pool) {
  if (p.batch == 0 || p.heads == 0)
    return;
  BackwardPlan<T> plan;
  plan.keyBlocks = (p.keys + kBackwardKeys - 1) / kBackwardKeys;
  plan.paddedFeatures = paddedToVectors<T>(p.features);
  int64_t units = p.batch * p.kvHeads;
  int64_t gradientSize = p.batch * p.heads * p.queries * plan.paddedFeatures;
  int64_t chunks = (kBackwardPieces + units - 1) / units;
  chunks = std::min(chunks, plan.keyBlocks);
  if (gradientSize > 0)
    chunks = std::min(chunks, kPartialBudget / gradientSize);
  plan.chunks = std::max<int64_t>(chunks, 1);
  thread_local std::vector<T> partials;
  if (static_cast<int64_t>(partials.size()) < plan.chunks * gradientSize)
    partials.resize(static_cast<size_t>(plan.chunks * gradientSize));
  plan.partials = partials.data();

  // Five products of E or Ev per (query, key) pair.
  int64_t work = p.batch * p.heads * p.queries * p.keys *
                 (3 * p.features + 2 * p.valueFeatures);
  int64_t pieces = units * plan.chunks;
  spread(pool, pieces, work,
         [&](int64_t piece) { piecesWith(isa, p, plan, piece, piece + 1); });

  // dQ = scale * (the chunks' dS K summed in chunk order).
  const int64_t rowSize = p.queries * plan.paddedFeatures;
  spread(pool, p.batch * p.heads, gradientSize * plan.chunks, [&](int64_t bh) {
    int64_t b = bh / p.heads, h = bh % p.heads;
    for (int64_t i = 0; i < p.queries; ++i) {
      T *dQ = p.dQuery + b * p.dQueryStrides[0] + h * p.dQueryStrides[1] +
              i * p.dQueryStrides[2];
      const T *first = plan.partials + bh * rowSize + i * plan.paddedFeatures;
      for (int64_t e = 0; e < p.features; ++e) {
        T sum = first[e];
        for (int64_t c = 1; c < plan.chunks; ++c)
          sum += first[c * gradientSize + e];
        dQ[e * p.dQueryStrides[3]] = sum * p.scale;
      }
    }
  });
}

} // namespace

void runBackward(const BackwardProblem<float> &problem, WorkerPool *pool) {
  static const Isa isa = hostIsa();
  runBackwardOn(isa, problem, pool);
}

void runBackward(const BackwardProblem<double> &problem, WorkerPool *pool) {
  static const Isa isa = hostIsa();
  runBackwardOn(isa, problem, pool);
}

void runBackwardWith(Isa isa, const BackwardProblem<float> &problem) {
  runBackwardOn(isa, problem, nullptr);
}

void runBackwardWith(Isa isa, const BackwardProblem<double> &problem) {
  runBackwardOn(isa, problem, nullptr);
}

} // namespace dtensor::rt::attention

//===- FusedAttention.cpp - Attention's pieces over the worker pool -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Picks the build of the loops this CPU supports and spreads the pieces
// (batch row, key/value head, query block) over the worker pool when the
// work is large enough to pay for the hand-over.
//
//===----------------------------------------------------------------------===//

#include "FusedAttention.h"
#include "FusedAttentionKernel.h"

#include "SkinnyGemm.h"
#include "WorkerPool.h"

namespace dtensor::rt::attention {

namespace {

/// Query rows of one piece (all query heads of a key/value head, times the
/// queries of a block): enough to reuse each tile of keys, few enough for
/// their accumulators to stay in the L1 cache.
constexpr int64_t kRowsPerPiece = 32;
/// Multiply-adds below which the caller computes everything alone.
constexpr int64_t kParallelWork = int64_t(1) << 16;
/// Pieces per thread, so that a thread slowed by other load leaves its
/// rest to the others.
constexpr int64_t kPiecesPerThread = 4;

void computeWith(Isa isa, const Problem<float> &p, int64_t blockSize,
                 int64_t begin, int64_t end) {
  if (isa == Isa::Avx512)
    computePiecesAvx512(p, blockSize, begin, end);
  else if (isa == Isa::Avx2)
    computePiecesAvx2(p, blockSize, begin, end);
  else
    computePiecesGeneric(p, blockSize, begin, end);
}

void computeWith(Isa isa, const Problem<double> &p, int64_t blockSize,
                 int64_t begin, int64_t end) {
  if (isa == Isa::Avx512)
    computePiecesAvx512(p, blockSize, begin, end);
  else if (isa == Isa::Avx2)
    computePiecesAvx2(p, blockSize, begin, end);
  else
    computePiecesGeneric(p, blockSize, begin, end);
}

/// Queries per piece.
template <typename T> int64_t blockSizeOf(const Problem<T> &p) {
  int64_t groups = p.heads / p.kvHeads;
  return std::max<int64_t>(1, kRowsPerPiece / groups);
}

/// The multiply-adds of `p`, counting only the keys a causal row sees.
template <typename T> int64_t workOf(const Problem<T> &p) {
  int64_t perKey = p.features + p.valueFeatures;
  int64_t work = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t keys = p.keys;
    if (p.causal)
      keys = std::clamp<int64_t>((p.positions ? p.positions[b] : 0) + p.queries,
                                 0, p.keys);
    work += keys * p.heads * p.queries * perKey;
  }
  return work;
}

template <typename T>
void runOn(Isa isa, const Problem<T> &p, WorkerPool *pool) {
  if (p.batch == 0 || p.heads == 0 || p.queries == 0)
    return;
  int64_t blockSize = blockSizeOf(p);
  int64_t pieces =
      p.batch * p.kvHeads * ((p.queries + blockSize - 1) / blockSize);
  if (!pool || pool->threads() <= 1 || pieces <= 1 ||
      workOf(p) < kParallelWork) {
    computeWith(isa, p, blockSize, 0, pieces);
    return;
  }
  // Chunks of pieces, a few per thread.
  int64_t chunks =
      std::min<int64_t>(pieces, pool->threads() * kPiecesPerThread);
  pool->parallelFor(chunks, [&](int64_t chunk) {
    int64_t begin = pieces * chunk / chunks;
    int64_t end = pieces * (chunk + 1) / chunks;
    computeWith(isa, p, blockSize, begin, end);
  });
}

} // namespace

Isa hostIsa() {
  switch (skinny::detectIsa()) {
  case skinny::Isa::Avx512:
    return Isa::Avx512;
  case skinny::Isa::Avx2:
    return Isa::Avx2;
  case skinny::Isa::None:
    break;
  }
  return Isa::Generic;
}

void run(const Problem<float> &problem, WorkerPool *pool) {
  static const Isa isa = hostIsa();
  runOn(isa, problem, pool);
}

void run(const Problem<double> &problem, WorkerPool *pool) {
  static const Isa isa = hostIsa();
  runOn(isa, problem, pool);
}

void runWith(Isa isa, const Problem<float> &problem) {
  runOn(isa, problem, nullptr);
}

void runWith(Isa isa, const Problem<double> &problem) {
  runOn(isa, problem, nullptr);
}

} // namespace dtensor::rt::attention

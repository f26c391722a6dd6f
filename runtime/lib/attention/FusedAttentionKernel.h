//===- FusedAttentionKernel.h - The attention loops ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Included once per instruction set (FusedAttention{Generic,Avx2,Avx512}.cpp,
// compiled with their own target flags), so everything is in an anonymous
// namespace. The loops are written for the compiler to vectorise: each inner
// loop runs over keys or features with no reduction across iterations;
// maxima and sums of a tile are kept in kLanes partial lanes and combined at
// the end, so every build gives the same result.
//
// One piece is (batch row b, key/value head, block of queries). Its query
// rows (every query head of that key/value head, for each query of the
// block) go over the keys in tiles of kKeyTile:
//   scores = (q * scale) . k^T (+ mask), -inf past each row's causal limit
//   m' = max(m, max(scores)); p = exp(scores - m')
//   sum = sum * exp(m - m') + sum(p); acc = acc * exp(m - m') + p . v
// and the output is acc / sum (0 where sum is 0: no key seen). With
// `accumulate` the state starts from the output and log-sum-exp of earlier
// keys (m = lse, sum = 1, acc = out) instead of from nothing.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ATTENTION_FUSEDATTENTIONKERNEL_H
#define DTENSOR_RUNTIME_ATTENTION_FUSEDATTENTIONKERNEL_H

#include "AttentionVectors.h"
#include "FusedAttention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace dtensor::rt::attention {

/// Pieces [begin, end) of a problem (see computePieces below), one function
/// per build of these loops.
void computePiecesGeneric(const Problem<float> &problem, int64_t blockSize,
                          int64_t begin, int64_t end);
void computePiecesGeneric(const Problem<double> &problem, int64_t blockSize,
                          int64_t begin, int64_t end);
void computePiecesAvx2(const Problem<float> &problem, int64_t blockSize,
                       int64_t begin, int64_t end);
void computePiecesAvx512(const Problem<float> &problem, int64_t blockSize,
                         int64_t begin, int64_t end);

namespace {

/// Keys per tile: a tile of transposed keys (E x kKeyTile) and the scores
/// of a piece's rows stay in the L1 cache.
constexpr int64_t kKeyTile = 64;
/// Partial lanes of a tile's maximum and sum.
constexpr int64_t kLanes = 16;

/// Per-thread buffers of a piece, grown to the largest piece seen.
template <typename T> struct Scratch {
  std::vector<T> queries, acc, maxima, sums, scores, keysT, values;
  std::vector<int64_t> limits;
};

template <typename T> Scratch<T> &threadScratch() {
  thread_local Scratch<T> scratch;
  return scratch;
}

template <typename T> void grow(std::vector<T> &buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size)
    buffer.resize(static_cast<size_t>(size));
}

/// The maximum of data[0, n).
template <typename T> T tileMax(const T *data, int64_t n) {
  T lanes[kLanes];
  for (int64_t x = 0; x < kLanes; ++x)
    lanes[x] = -std::numeric_limits<T>::infinity();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t x = 0; x < kLanes; ++x)
      lanes[x] = lanes[x] < data[j + x] ? data[j + x] : lanes[x];
  for (; j < n; ++j)
    lanes[0] = lanes[0] < data[j] ? data[j] : lanes[0];
  T result = lanes[0];
  for (int64_t x = 1; x < kLanes; ++x)
    result = result < lanes[x] ? lanes[x] : result;
  return result;
}

/// data[j] = exp(data[j] - shift) for j < n; returns their sum.
template <typename T> T expAndSum(T *data, int64_t n, T shift) {
  T lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t x = 0; x < kLanes; ++x) {
      T p = expOf(data[j + x] - shift);
      data[j + x] = p;
      lanes[x] += p;
    }
  for (; j < n; ++j) {
    T p = expOf(data[j] - shift);
    data[j] = p;
    lanes[0] += p;
  }
  T result = 0;
  for (int64_t x = 0; x < kLanes; ++x)
    result += lanes[x];
  return result;
}

/// scores[j] = q . keysT[:, j] for the j < kKeyTile of a whole tile, in
/// vector accumulators kept in registers, summed over e in order as
/// partTileScores does.
template <typename T>
void fullTileScores(const T *q, const T *keysT, int64_t features, T *scores) {
  constexpr int64_t lanes = kVecLanes<T>, vectors = kKeyTile / lanes;
  Vec<T> acc[vectors] = {};
  for (int64_t e = 0; e < features; ++e) {
    Vec<T> qe = {};
    qe += q[e];
    const T *kRow = keysT + e * kKeyTile;
    for (int64_t x = 0; x < vectors; ++x) {
      Vec<T> k;
      loadVec(k, kRow + x * lanes);
      acc[x] += qe * k;
    }
  }
  for (int64_t x = 0; x < vectors; ++x)
    storeVec(scores + x * lanes, acc[x]);
}

/// scores[j] = q . keysT[:, j] for j < n (the last, partial tile).
template <typename T>
void partTileScores(const T *q, const T *keysT, int64_t features, int64_t n,
                    T *scores) {
  for (int64_t j = 0; j < n; ++j)
    scores[j] = 0;
  for (int64_t e = 0; e < features; ++e) {
    T qe = q[e];
    const T *kRow = keysT + e * kKeyTile;
    for (int64_t j = 0; j < n; ++j)
      scores[j] += qe * kRow[j];
  }
}

/// acc[e] += sum over j < n of weights[j] * values[j * stride + e], for a
/// value width E (a multiple of 16) known at compile time: acc stays in
/// vector registers over the keys (the same sums, in the same order, as the
/// loop for other widths).
template <int64_t E, typename T>
void accumulateValues(const T *weights, const T *values, int64_t stride,
                      int64_t n, T *acc) {
  constexpr int64_t lanes = kVecLanes<T>, vectors = E / lanes;
  static_assert(E % lanes == 0, "a whole number of vectors");
  Vec<T> local[vectors];
  for (int64_t x = 0; x < vectors; ++x)
    loadVec(local[x], acc + x * lanes);
  for (int64_t j = 0; j < n; ++j) {
    Vec<T> weight = {};
    weight += weights[j];
    const T *v = values + j * stride;
    for (int64_t x = 0; x < vectors; ++x) {
      Vec<T> value;
      loadVec(value, v + x * lanes);
      local[x] += weight * value;
    }
  }
  for (int64_t x = 0; x < vectors; ++x)
    storeVec(acc + x * lanes, local[x]);
}

/// The piece (b, kvHead, queries [first, first + count)).
template <typename T>
void computePiece(const Problem<T> &p, int64_t b, int64_t kvHead, int64_t first,
                  int64_t count) {
  const T minusInf = -std::numeric_limits<T>::infinity();
  const int64_t groups = p.heads / p.kvHeads;
  const int64_t numRows = groups * count;
  const int64_t features = p.features, valueFeatures = p.valueFeatures;
  Scratch<T> &s = threadScratch<T>();
  grow(s.queries, numRows * features);
  grow(s.acc, numRows * valueFeatures);
  grow(s.maxima, numRows);
  grow(s.sums, numRows);
  grow(s.scores, kKeyTile);
  grow(s.keysT, features * kKeyTile);
  grow(s.values, kKeyTile * valueFeatures);
  grow(s.limits, numRows);

  int64_t kvRow = p.rows ? p.rows[b] : b;
  bool hasKeys = kvRow >= 0 && kvRow < p.keyBatch;
  // Row r is query head kvHead * groups + r / count, query first + r % count.
  int64_t maxLimit = 0;
  for (int64_t r = 0; r < numRows; ++r) {
    int64_t head = kvHead * groups + r / count, query = first + r % count;
    int64_t limit = hasKeys ? p.keys : 0;
    if (p.causal) {
      int64_t position = (p.positions ? p.positions[b] : 0) + query;
      limit = std::clamp<int64_t>(position + 1, 0, limit);
    }
    s.limits[r] = limit;
    maxLimit = std::max(maxLimit, limit);
    const T *q = p.query + b * p.queryStrides[0] + head * p.queryStrides[1] +
                 query * p.queryStrides[2];
    T *packed = s.queries.data() + r * features;
    for (int64_t e = 0; e < features; ++e)
      packed[e] = q[e * p.queryStrides[3]] * p.scale;
    s.maxima[r] = minusInf;
    s.sums[r] = 0;
    T *acc = s.acc.data() + r * valueFeatures;
    std::fill_n(acc, valueFeatures, T(0));
    if (p.accumulate) {
      // The earlier keys' softmax state: maximum lse with sum 1 (their
      // exp-sum relative to it) and the output as the weighted values.
      T lse =
          p.logSumExp[b * p.logSumExpStrides[0] + head * p.logSumExpStrides[1] +
                      query * p.logSumExpStrides[2]];
      if (lse != minusInf) {
        s.maxima[r] = lse;
        s.sums[r] = 1;
        const T *out = p.out + b * p.outStrides[0] + head * p.outStrides[1] +
                       query * p.outStrides[2];
        for (int64_t e = 0; e < valueFeatures; ++e)
          acc[e] = out[e * p.outStrides[3]];
      }
    }
  }

  const T *keyBase = p.key + kvRow * p.keyStrides[0] + kvHead * p.keyStrides[1];
  const T *valueBase =
      p.value + kvRow * p.valueStrides[0] + kvHead * p.valueStrides[1];
  bool valuesDense = p.valueStrides[3] == 1 || valueFeatures <= 1;
  for (int64_t tile = 0; tile < maxLimit; tile += kKeyTile) {
    int64_t n = std::min(kKeyTile, maxLimit - tile);
    // Keys transposed, [E][n]: the score loop then runs over keys.
    T *keysT = s.keysT.data();
    for (int64_t j = 0; j < n; ++j) {
      const T *k = keyBase + (tile + j) * p.keyStrides[2];
      for (int64_t e = 0; e < features; ++e)
        keysT[e * kKeyTile + j] = k[e * p.keyStrides[3]];
    }
    // Values, dense in Ev.
    const T *values = valueBase + tile * p.valueStrides[2];
    int64_t valueRowStride = p.valueStrides[2];
    if (!valuesDense) {
      for (int64_t j = 0; j < n; ++j)
        for (int64_t e = 0; e < valueFeatures; ++e)
          s.values[j * valueFeatures + e] =
              values[j * p.valueStrides[2] + e * p.valueStrides[3]];
      values = s.values.data();
      valueRowStride = valueFeatures;
    }
    for (int64_t r = 0; r < numRows; ++r) {
      int64_t visible = std::min(n, s.limits[r] - tile);
      if (visible <= 0)
        continue;
      int64_t head = kvHead * groups + r / count, query = first + r % count;
      T *scores = s.scores.data();
      const T *q = s.queries.data() + r * features;
      if (n == kKeyTile)
        fullTileScores(q, keysT, features, scores);
      else
        partTileScores(q, keysT, features, visible, scores);
      if (p.mask) {
        const T *m = p.mask + b * p.maskStrides[0] + head * p.maskStrides[1] +
                     query * p.maskStrides[2] + tile * p.maskStrides[3];
        for (int64_t j = 0; j < visible; ++j)
          scores[j] += m[j * p.maskStrides[3]];
      }
      T tileMaximum = tileMax(scores, visible);
      T newMax = std::max(s.maxima[r], tileMaximum);
      if (newMax == minusInf)
        continue; // every key so far masked
      T rescale = expOf(s.maxima[r] - newMax);
      T tileSum = expAndSum(scores, visible, newMax);
      s.sums[r] = s.sums[r] * rescale + tileSum;
      s.maxima[r] = newMax;
      T *acc = s.acc.data() + r * valueFeatures;
      if (rescale != T(1))
        for (int64_t e = 0; e < valueFeatures; ++e)
          acc[e] *= rescale;
      switch (valueFeatures) {
      case 16:
        accumulateValues<16>(scores, values, valueRowStride, visible, acc);
        break;
      case 32:
        accumulateValues<32>(scores, values, valueRowStride, visible, acc);
        break;
      case 64:
        accumulateValues<64>(scores, values, valueRowStride, visible, acc);
        break;
      case 128:
        accumulateValues<128>(scores, values, valueRowStride, visible, acc);
        break;
      default:
        for (int64_t j = 0; j < visible; ++j) {
          T weight = scores[j];
          const T *v = values + j * valueRowStride;
          for (int64_t e = 0; e < valueFeatures; ++e)
            acc[e] += weight * v[e];
        }
      }
    }
  }

  for (int64_t r = 0; r < numRows; ++r) {
    int64_t head = kvHead * groups + r / count, query = first + r % count;
    T *out = p.out + b * p.outStrides[0] + head * p.outStrides[1] +
             query * p.outStrides[2];
    const T *acc = s.acc.data() + r * valueFeatures;
    T sum = s.sums[r];
    T inverse = sum > 0 ? T(1) / sum : T(0);
    for (int64_t e = 0; e < valueFeatures; ++e)
      out[e * p.outStrides[3]] = acc[e] * inverse;
    if (p.logSumExp)
      p.logSumExp[b * p.logSumExpStrides[0] + head * p.logSumExpStrides[1] +
                  query * p.logSumExpStrides[2]] =
          sum > 0 ? s.maxima[r] + std::log(sum) : minusInf;
  }
}

/// Pieces [begin, end) of `p`, piece i being (b, kv head, query block)
/// in row-major order, blocks of `blockSize` queries.
template <typename T>
void computePieces(const Problem<T> &p, int64_t blockSize, int64_t begin,
                   int64_t end) {
  int64_t blocks = (p.queries + blockSize - 1) / blockSize;
  for (int64_t piece = begin; piece < end; ++piece) {
    int64_t block = piece % blocks;
    int64_t kvHead = (piece / blocks) % p.kvHeads;
    int64_t b = piece / blocks / p.kvHeads;
    int64_t first = block * blockSize;
    computePiece(p, b, kvHead, first, std::min(blockSize, p.queries - first));
  }
}

} // namespace
} // namespace dtensor::rt::attention

#endif // DTENSOR_RUNTIME_ATTENTION_FUSEDATTENTIONKERNEL_H

//===- FusedAttentionKernel.h - The attention loops ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Included once per instruction set (FusedAttention{Generic,Avx2,Avx512}.cpp,
// compiled with their own target flags and -ffp-contract=off), so
// everything is in an anonymous namespace. Every multiply-add is fused
// explicitly and every reduction kept in vector lanes combined in a fixed
// order (AttentionVectors.h), so every build gives the same bits.
//
// One piece is (batch row b, key/value head, block of queries). Its query
// rows (every query head of that key/value head, for each query of the
// block) go over the keys in tiles of kKeyTile; per tile, with the keys
// packed transposed (E x kKeyTile) and the values packed (kKeyTile x Ev):
//   S = (Q * scale) K^T for all rows at once (a register-tiled product,
//   multiplyAccumulate), + mask, -inf past each row's causal limit;
//   per row, vectorised: m' = max(m, max(S)); P = exp(S - m');
//   sum = sum * exp(m - m') + sum(P); acc *= exp(m - m') when m' != m;
//   acc += P V for all rows at once (multiplyAccumulate)
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
void computePiecesAvx2(const Problem<double> &problem, int64_t blockSize,
                       int64_t begin, int64_t end);
void computePiecesAvx512(const Problem<float> &problem, int64_t blockSize,
                         int64_t begin, int64_t end);
void computePiecesAvx512(const Problem<double> &problem, int64_t blockSize,
                         int64_t begin, int64_t end);

namespace {

/// Keys per tile: the packed keys and values of a tile stay in the L2
/// cache, the scores of a piece's rows in the L1 cache.
constexpr int64_t kKeyTile = 64;

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

/// The maximum of row[0, kKeyTile), lane-wise then over the lanes in order.
template <typename T> T rowMax(const T *row) {
  constexpr int64_t lanes = kVecLanes<T>;
  Vec<T> maximum;
  loadVec(maximum, row);
  for (int64_t j = lanes; j < kKeyTile; j += lanes) {
    Vec<T> x;
    loadVec(x, row + j);
    maximum = maximum < x ? x : maximum;
  }
  T result = maximum[0];
  for (int64_t x = 1; x < lanes; ++x)
    result = result < maximum[x] ? maximum[x] : result;
  return result;
}

/// exp of each lane (Cephes' expf as expApprox, on whole vectors).
inline void expVec(Vec<float> &v) {
  typedef int32_t Ints __attribute__((vector_size(64)));
  Vec<float> x = v;
  Vec<float> lo, hi;
  broadcastVec(lo, -88.0f);
  broadcastVec(hi, 88.0f);
  Vec<float> clamped = x < hi ? x : hi;
  clamped = clamped > lo ? clamped : lo;
  Vec<float> n = clamped * 1.44269504088896341f;
  n = (n + 12582912.0f) - 12582912.0f;
  Vec<float> r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  Vec<float> z = r * r;
  Vec<float> y;
  broadcastVec(y, 1.9875691500e-4f);
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  Ints bits = (__builtin_convertvector(n, Ints) + 127) << 23;
  Vec<float> scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  Vec<float> zero = {};
  v = x < -87.0f ? zero : y * scale;
}

inline void expVec(Vec<double> &v) {
  for (int64_t x = 0; x < kVecLanes<double>; ++x)
    v[x] = std::exp(v[x]);
}

/// row[j] = exp(row[j] - shift) over the tile; returns their sum (lane-wise,
/// then over the lanes in order).
template <typename T> T rowExpSum(T *row, T shift) {
  constexpr int64_t lanes = kVecLanes<T>;
  Vec<T> sum = {};
  for (int64_t j = 0; j < kKeyTile; j += lanes) {
    Vec<T> x;
    loadVec(x, row + j);
    x -= shift;
    expVec(x);
    storeVec(row + j, x);
    sum += x;
  }
  T result = sum[0];
  for (int64_t x = 1; x < lanes; ++x)
    result += sum[x];
  return result;
}

/// The piece (b, kvHead, queries [first, first + count)).
template <typename T>
void computePiece(const Problem<T> &p, int64_t b, int64_t kvHead, int64_t first,
                  int64_t count) {
  const T minusInf = -std::numeric_limits<T>::infinity();
  const int64_t groups = p.heads / p.kvHeads;
  const int64_t numRows = groups * count;
  const int64_t features = p.features, valueFeatures = p.valueFeatures;
  const int64_t paddedValues = paddedToVectors<T>(valueFeatures);
  Scratch<T> &s = threadScratch<T>();
  grow(s.queries, numRows * features);
  grow(s.acc, numRows * paddedValues);
  grow(s.maxima, numRows);
  grow(s.sums, numRows);
  grow(s.scores, numRows * kKeyTile);
  grow(s.keysT, features * kKeyTile);
  grow(s.values, kKeyTile * paddedValues);
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
    T *acc = s.acc.data() + r * paddedValues;
    std::fill_n(acc, paddedValues, T(0));
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
  T *keysT = s.keysT.data(), *values = s.values.data(),
    *scores = s.scores.data(), *accs = s.acc.data();
  for (int64_t tile = 0; tile < maxLimit; tile += kKeyTile) {
    int64_t n = std::min(kKeyTile, maxLimit - tile);
    // Keys transposed, [E][kKeyTile], and values [kKeyTile][Ev padded],
    // zeros past n.
    if (n < kKeyTile) {
      std::fill_n(keysT, features * kKeyTile, T(0));
      std::fill_n(values, kKeyTile * paddedValues, T(0));
    }
    for (int64_t j = 0; j < n; ++j) {
      const T *k = keyBase + (tile + j) * p.keyStrides[2];
      for (int64_t e = 0; e < features; ++e)
        keysT[e * kKeyTile + j] = k[e * p.keyStrides[3]];
      const T *v = valueBase + (tile + j) * p.valueStrides[2];
      T *packed = values + j * paddedValues;
      for (int64_t e = 0; e < valueFeatures; ++e)
        packed[e] = v[e * p.valueStrides[3]];
      std::fill(packed + valueFeatures, packed + paddedValues, T(0));
    }
    // S = (Q * scale) K^T for every row.
    multiplyAccumulate(scores, kKeyTile, numRows, kKeyTile, s.queries.data(),
                       features, 1, features, keysT, kKeyTile,
                       /*fromZero=*/true);
    for (int64_t r = 0; r < numRows; ++r) {
      T *row = scores + r * kKeyTile;
      int64_t visible = std::clamp<int64_t>(s.limits[r] - tile, 0, n);
      if (visible > 0 && p.mask) {
        int64_t head = kvHead * groups + r / count, query = first + r % count;
        const T *m = p.mask + b * p.maskStrides[0] + head * p.maskStrides[1] +
                     query * p.maskStrides[2] + tile * p.maskStrides[3];
        for (int64_t j = 0; j < visible; ++j)
          row[j] += m[j * p.maskStrides[3]];
      }
      std::fill(row + visible, row + kKeyTile, minusInf);
      T newMax = visible > 0 ? std::max(s.maxima[r], rowMax(row)) : minusInf;
      if (newMax == minusInf) {
        // Every key so far masked: nothing to add.
        std::fill_n(row, kKeyTile, T(0));
        continue;
      }
      T rescale = expOf(s.maxima[r] - newMax);
      T tileSum = rowExpSum(row, newMax);
      s.sums[r] = s.sums[r] * rescale + tileSum;
      s.maxima[r] = newMax;
      if (rescale != T(1)) {
        T *acc = accs + r * paddedValues;
        for (int64_t e = 0; e < paddedValues; ++e)
          acc[e] *= rescale;
      }
    }
    // acc += P V for every row.
    multiplyAccumulate(accs, paddedValues, numRows, paddedValues, scores,
                       kKeyTile, 1, n, values, paddedValues);
  }

  for (int64_t r = 0; r < numRows; ++r) {
    int64_t head = kvHead * groups + r / count, query = first + r % count;
    T *out = p.out + b * p.outStrides[0] + head * p.outStrides[1] +
             query * p.outStrides[2];
    const T *acc = accs + r * paddedValues;
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

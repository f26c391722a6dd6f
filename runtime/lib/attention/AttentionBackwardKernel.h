//===- AttentionBackwardKernel.h - The backward attention loops -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Included once per instruction set (AttentionBackward{Generic,Avx2,
// Avx512}.cpp, compiled with their own target flags and -ffp-contract=off),
// so everything is in an anonymous namespace; every multiply-add is fused
// explicitly (AttentionVectors.h), so every build gives the same bits.
//
// One piece is (batch row b, key/value head, chunk of key blocks). For each
// block of kBackwardKeys keys it packs K^T, K and V^T, then for every query
// head of the key/value head and every block of kBackwardQueries queries
// that can see the block (causal blocks before a query's window skipped):
//   S = (Q * scale) K^T;  P = exp(S + mask - lse), 0 where masked;
//   dP = dO V^T;  dS = P * (dP - D);
//   dV_block += P^T dO;  dK_block += dS^T (Q * scale);  dQ_chunk += dS K
// as small matrix products on the packed blocks (multiplyAccumulate). dK and
// dV of the block are then written; dQ is summed into the chunk's own
// buffer, and the chunks' buffers are added up (and scaled) afterwards in a
// fixed order, so no two pieces write the same memory.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ATTENTION_ATTENTIONBACKWARDKERNEL_H
#define DTENSOR_RUNTIME_ATTENTION_ATTENTIONBACKWARDKERNEL_H

#include "AttentionBackward.h"
#include "AttentionVectors.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace dtensor::rt::attention {

/// How the pieces of a backward problem split its keys, and where their
/// partial query gradients go.
template <typename T> struct BackwardPlan {
  /// Chunks of key blocks per (batch row, key/value head).
  int64_t chunks = 1;
  int64_t keyBlocks = 0;
  /// The query features rounded up to whole vectors.
  int64_t paddedFeatures = 0;
  /// [chunks][B][H][L][paddedFeatures]: each chunk's sum of dS K.
  T *partials = nullptr;
};

/// Keys per block: the packed keys, values and their gradients of a block
/// stay in the L2 cache, its scores of a query block in the L1 cache.
constexpr int64_t kBackwardKeys = 64;
/// Query rows per block.
constexpr int64_t kBackwardQueries = 32;

/// Pieces [begin, end) of a problem (see backwardPieces below), one
/// function per build of these loops.
void backwardPiecesGeneric(const BackwardProblem<float> &problem,
                           const BackwardPlan<float> &plan, int64_t begin,
                           int64_t end);
void backwardPiecesGeneric(const BackwardProblem<double> &problem,
                           const BackwardPlan<double> &plan, int64_t begin,
                           int64_t end);
void backwardPiecesAvx2(const BackwardProblem<float> &problem,
                        const BackwardPlan<float> &plan, int64_t begin,
                        int64_t end);
void backwardPiecesAvx2(const BackwardProblem<double> &problem,
                        const BackwardPlan<double> &plan, int64_t begin,
                        int64_t end);
void backwardPiecesAvx512(const BackwardProblem<float> &problem,
                          const BackwardPlan<float> &plan, int64_t begin,
                          int64_t end);
void backwardPiecesAvx512(const BackwardProblem<double> &problem,
                          const BackwardPlan<double> &plan, int64_t begin,
                          int64_t end);

namespace {

/// Per-thread buffers of a piece, grown to the largest piece seen.
template <typename T> struct BackwardScratch {
  std::vector<T> keysT, keys, valuesT, dKeys, dValues, queries, dOuts,
      probabilities, dScores, rowD, rowLse;
};

template <typename T> BackwardScratch<T> &backwardScratch() {
  thread_local BackwardScratch<T> scratch;
  return scratch;
}

template <typename T> void growTo(std::vector<T> &buffer, int64_t size) {
  if (static_cast<int64_t>(buffer.size()) < size)
    buffer.resize(static_cast<size_t>(size));
}

/// The piece (b, kvHead, chunk of key blocks).
template <typename T>
void backwardPiece(const BackwardProblem<T> &p, const BackwardPlan<T> &plan,
                   int64_t b, int64_t kvHead, int64_t chunk) {
  constexpr int64_t N = kBackwardKeys, R = kBackwardQueries;
  const T minusInf = -std::numeric_limits<T>::infinity();
  const int64_t groups = p.heads / p.kvHeads;
  const int64_t L = p.queries, E = p.features, Ev = p.valueFeatures;
  const int64_t Ep = plan.paddedFeatures, Evp = paddedToVectors<T>(Ev);
  BackwardScratch<T> &s = backwardScratch<T>();
  growTo(s.keysT, E * N);
  growTo(s.keys, N * Ep);
  growTo(s.valuesT, Ev * N);
  growTo(s.dKeys, N * Ep);
  growTo(s.dValues, N * Evp);
  growTo(s.queries, R * Ep);
  growTo(s.dOuts, R * Evp);
  growTo(s.probabilities, R * N);
  growTo(s.dScores, R * N);
  growTo(s.rowD, groups * L);
  growTo(s.rowLse, groups * L);

  // D = rowsum(dO * O) and the log-sum-exp of every query row of the piece.
  for (int64_t g = 0; g < groups; ++g) {
    int64_t head = kvHead * groups + g;
    for (int64_t i = 0; i < L; ++i) {
      const T *o = p.out + b * p.outStrides[0] + head * p.outStrides[1] +
                   i * p.outStrides[2];
      const T *dO = p.dOut + b * p.dOutStrides[0] + head * p.dOutStrides[1] +
                    i * p.dOutStrides[2];
      T d = 0;
      for (int64_t e = 0; e < Ev; ++e)
        d += dO[e * p.dOutStrides[3]] * o[e * p.outStrides[3]];
      s.rowD[g * L + i] = d;
      s.rowLse[g * L + i] =
          p.logSumExp[b * p.logSumExpStrides[0] + head * p.logSumExpStrides[1] +
                      i * p.logSumExpStrides[2]];
    }
  }

  // This chunk's dS K for the piece's query heads (consecutive in H).
  T *partial = plan.partials +
               ((chunk * p.batch + b) * p.heads + kvHead * groups) * L * Ep;
  std::fill_n(partial, groups * L * Ep, T(0));

  const int64_t position = p.positions ? p.positions[b] : 0;
  const T *keyBase = p.key + b * p.keyStrides[0] + kvHead * p.keyStrides[1];
  const T *valueBase =
      p.value + b * p.valueStrides[0] + kvHead * p.valueStrides[1];
  int64_t firstBlock = plan.keyBlocks * chunk / plan.chunks;
  int64_t endBlock = plan.keyBlocks * (chunk + 1) / plan.chunks;
  for (int64_t block = firstBlock; block < endBlock; ++block) {
    const int64_t j0 = block * N, n = std::min(N, p.keys - j0);
    // K^T [E][N] and V^T [Ev][N] for the score products, K [N][Ep] for
    // dQ; keys past n are zeros.
    T *keysT = s.keysT.data(), *keys = s.keys.data(),
      *valuesT = s.valuesT.data();
    std::fill_n(keysT, E * N, T(0));
    std::fill_n(valuesT, Ev * N, T(0));
    std::fill_n(keys, N * Ep, T(0));
    for (int64_t j = 0; j < n; ++j) {
      const T *k = keyBase + (j0 + j) * p.keyStrides[2];
      const T *v = valueBase + (j0 + j) * p.valueStrides[2];
      for (int64_t e = 0; e < E; ++e) {
        T x = k[e * p.keyStrides[3]];
        keysT[e * N + j] = x;
        keys[j * Ep + e] = x;
      }
      for (int64_t e = 0; e < Ev; ++e)
        valuesT[e * N + j] = v[e * p.valueStrides[3]];
    }
    T *dKeys = s.dKeys.data(), *dValues = s.dValues.data();
    std::fill_n(dKeys, n * Ep, T(0));
    std::fill_n(dValues, n * Evp, T(0));

    // Causal: queries before firstQuery see none of these keys.
    int64_t firstQuery =
        p.causal ? std::clamp<int64_t>(j0 - position, 0, L) : 0;
    for (int64_t g = 0; g < groups; ++g) {
      int64_t head = kvHead * groups + g;
      for (int64_t i0 = firstQuery; i0 < L; i0 += R) {
        const int64_t rows = std::min(R, L - i0);
        T *queries = s.queries.data(), *dOuts = s.dOuts.data();
        for (int64_t r = 0; r < rows; ++r) {
          const T *q = p.query + b * p.queryStrides[0] +
                       head * p.queryStrides[1] + (i0 + r) * p.queryStrides[2];
          const T *dO = p.dOut + b * p.dOutStrides[0] +
                        head * p.dOutStrides[1] + (i0 + r) * p.dOutStrides[2];
          T *qRow = queries + r * Ep, *dORow = dOuts + r * Evp;
          for (int64_t e = 0; e < E; ++e)
            qRow[e] = q[e * p.queryStrides[3]] * p.scale;
          std::fill(qRow + E, qRow + Ep, T(0));
          for (int64_t e = 0; e < Ev; ++e)
            dORow[e] = dO[e * p.dOutStrides[3]];
          std::fill(dORow + Ev, dORow + Evp, T(0));
        }
        // S = (Q * scale) K^T, then P in place.
        T *probabilities = s.probabilities.data();
        multiplyAccumulate(probabilities, N, rows, N, queries, Ep, 1, E, keysT,
                           N, /*fromZero=*/true);
        for (int64_t r = 0; r < rows; ++r) {
          int64_t query = i0 + r;
          T lse = s.rowLse[g * L + query];
          int64_t visible = n;
          if (p.causal)
            visible = std::clamp<int64_t>(position + query + 1 - j0, 0, n);
          if (lse == minusInf)
            visible = 0; // a query that saw no key contributes nothing
          T *row = probabilities + r * N;
          if (p.mask) {
            const T *m = p.mask + b * p.maskStrides[0] +
                         head * p.maskStrides[1] + query * p.maskStrides[2] +
                         j0 * p.maskStrides[3];
            for (int64_t j = 0; j < visible; ++j)
              row[j] += m[j * p.maskStrides[3]];
          }
          for (int64_t j = 0; j < visible; ++j)
            row[j] = expOf(row[j] - lse);
          std::fill(row + visible, row + N, T(0));
        }
        // dP = dO V^T, then dS = P * (dP - D) in place.
        T *dScores = s.dScores.data();
        multiplyAccumulate(dScores, N, rows, N, dOuts, Evp, 1, Ev, valuesT, N,
                           /*fromZero=*/true);
        for (int64_t r = 0; r < rows; ++r) {
          T d = s.rowD[g * L + i0 + r];
          const T *pRow = probabilities + r * N;
          T *dRow = dScores + r * N;
          for (int64_t j = 0; j < N; ++j)
            dRow[j] = pRow[j] * (dRow[j] - d);
        }
        // dV += P^T dO; dK += dS^T (Q * scale); dQ += dS K.
        multiplyAccumulate(dValues, Evp, n, Evp, probabilities, 1, N, rows,
                           dOuts, Evp);
        multiplyAccumulate(dKeys, Ep, n, Ep, dScores, 1, N, rows, queries, Ep);
        multiplyAccumulate(partial + (g * L + i0) * Ep, Ep, rows, Ep, dScores,
                           N, 1, n, keys, Ep);
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      T *dK = p.dKey + b * p.dKeyStrides[0] + kvHead * p.dKeyStrides[1] +
              (j0 + j) * p.dKeyStrides[2];
      T *dV = p.dValue + b * p.dValueStrides[0] + kvHead * p.dValueStrides[1] +
              (j0 + j) * p.dValueStrides[2];
      for (int64_t e = 0; e < E; ++e)
        dK[e * p.dKeyStrides[3]] = dKeys[j * Ep + e];
      for (int64_t e = 0; e < Ev; ++e)
        dV[e * p.dValueStrides[3]] = dValues[j * Evp + e];
    }
  }
}

/// Pieces [begin, end) of `p`, piece i being (b, kv head, chunk) in
/// row-major order.
template <typename T>
void backwardPieces(const BackwardProblem<T> &p, const BackwardPlan<T> &plan,
                    int64_t begin, int64_t end) {
  for (int64_t piece = begin; piece < end; ++piece) {
    int64_t chunk = piece % plan.chunks;
    int64_t kvHead = (piece / plan.chunks) % p.kvHeads;
    int64_t b = piece / plan.chunks / p.kvHeads;
    backwardPiece(p, plan, b, kvHead, chunk);
  }
}

} // namespace
} // namespace dtensor::rt::attention

#endif // DTENSOR_RUNTIME_ATTENTION_ATTENTIONBACKWARDKERNEL_H

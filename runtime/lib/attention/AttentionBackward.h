//===- AttentionBackward.h - Gradients of the fused attention --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The gradients of out = softmax(Q K^T * scale + mask) V with respect to
// Q, K and V, given the forward's output and log-sum-exp, as
// FlashAttention-2 computes them: D = rowsum(dO * O), then over blocks of
// keys and of queries the probabilities are recomputed from the saved
// log-sum-exp, P = exp(S * scale + mask - lse), and
//   dV += P^T dO;  dP = dO V^T;  dS = P * (dP - D);
//   dQ += scale * dS K;  dK += scale * dS^T Q,
// so no [queries x keys] buffer exists. Grouped-query attention sums dK and
// dV over the query heads that read each key/value head.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ATTENTION_ATTENTIONBACKWARD_H
#define DTENSOR_RUNTIME_ATTENTION_ATTENTIONBACKWARD_H

#include "FusedAttention.h"

#include <cstdint>

namespace dtensor::rt::attention {

/// One backward attention, all strides in elements. Logical shapes: query
/// [B, H, L, E], key [B, Hkv, S, E], value [B, Hkv, S, Ev], out and dOut
/// [B, H, L, Ev], logSumExp [B, H, L], mask [B, H, L, S] (stride 0 on a
/// broadcast dim); the gradients have the shapes of query, key and value.
template <typename T> struct BackwardProblem {
  int64_t batch = 0, heads = 0, kvHeads = 0, queries = 0, keys = 0,
          features = 0, valueFeatures = 0;
  const T *query = nullptr;
  int64_t queryStrides[4] = {};
  const T *key = nullptr;
  int64_t keyStrides[4] = {};
  const T *value = nullptr;
  int64_t valueStrides[4] = {};
  /// The forward's result and the gradient flowing into it.
  const T *out = nullptr;
  int64_t outStrides[4] = {};
  const T *dOut = nullptr;
  int64_t dOutStrides[4] = {};
  /// The forward's log-sum-exp of each query (-inf: it saw no key).
  const T *logSumExp = nullptr;
  int64_t logSumExpStrides[3] = {};
  /// Optional additive mask.
  const T *mask = nullptr;
  int64_t maskStrides[4] = {};
  /// Causal: query i of row b sees key j iff j <= i, or, with `positions`
  /// ([B]), iff j <= positions[b] + i.
  bool causal = false;
  const int64_t *positions = nullptr;
  T scale = 1;
  /// Written whole.
  T *dQuery = nullptr;
  int64_t dQueryStrides[4] = {};
  T *dKey = nullptr;
  int64_t dKeyStrides[4] = {};
  T *dValue = nullptr;
  int64_t dValueStrides[4] = {};
};

/// Computes the gradients of `problem`, spreading (batch row, key/value
/// head, block of keys) pieces over `pool` (may be null). The result does
/// not depend on the number of threads. Requires heads % kvHeads == 0
/// (kvHeads > 0 unless heads is 0).
void runBackward(const BackwardProblem<float> &problem, WorkerPool *pool);
void runBackward(const BackwardProblem<double> &problem, WorkerPool *pool);

/// As runBackward, with the kernel of `isa` (which this CPU must support)
/// and no threads: for tests that compare the builds.
void runBackwardWith(Isa isa, const BackwardProblem<float> &problem);
void runBackwardWith(Isa isa, const BackwardProblem<double> &problem);

} // namespace dtensor::rt::attention

#endif // DTENSOR_RUNTIME_ATTENTION_ATTENTIONBACKWARD_H

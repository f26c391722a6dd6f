//===- FusedAttention.h - Attention tiled over keys ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// softmax(Q K^T * scale + mask) V for every (batch, head), computed over
// tiles of keys with a running maximum and sum (an online softmax), so that
// no [queries x keys] buffer exists. Keys and values are read in place
// through strides: a KV cache [slots, positions, kv heads, E] is passed as
// it is, a row of the batch picking its slot (`rows`) and its causal window
// (`positions`), so a decode step reads only the keys a row can see.
//
// Grouped-query attention: `heads` query heads over `kvHeads` key/value
// heads, query head h reading key/value head h / (heads / kvHeads), as
// PyTorch's enable_gqa; the query heads of one key/value head are computed
// together, so each key and value is read once for all of them.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_ATTENTION_FUSEDATTENTION_H
#define DTENSOR_RUNTIME_ATTENTION_FUSEDATTENTION_H

#include <cstdint>

namespace dtensor::rt {
class WorkerPool;
} // namespace dtensor::rt

namespace dtensor::rt::attention {

/// One attention, all strides in elements. Logical shapes: query
/// [B, H, L, E], key [Bk, Hkv, S, E], value [Bk, Hkv, S, Ev], mask
/// [B, H, L, S] (stride 0 on a broadcast dim), out [B, H, L, Ev],
/// logSumExp [B, H, L].
template <typename T> struct Problem {
  int64_t batch = 0, heads = 0, kvHeads = 0, queries = 0, keys = 0,
          features = 0, valueFeatures = 0;
  const T *query = nullptr;
  int64_t queryStrides[4] = {};
  /// Bk: rows of the key and value batch; without `rows`, Bk == B.
  int64_t keyBatch = 0;
  const T *key = nullptr;
  int64_t keyStrides[4] = {};
  const T *value = nullptr;
  int64_t valueStrides[4] = {};
  /// Optional additive mask.
  const T *mask = nullptr;
  int64_t maskStrides[4] = {};
  /// Optional [B]: row b attends over key/value batch rows[b]; a row
  /// outside [0, Bk) sees no key (a padding row of a KV-cache step).
  const int64_t *rows = nullptr;
  /// Causal: query i of row b sees key j iff j <= i, or, with `positions`
  /// ([B]), iff j <= positions[b] + i.
  bool causal = false;
  const int64_t *positions = nullptr;
  T scale = 1;
  T *out = nullptr;
  int64_t outStrides[4] = {};
  /// Optional: log(sum_j exp(score_j)) of each query, -inf where it sees
  /// no key (the merge of partial attentions over split keys needs it).
  T *logSumExp = nullptr;
  int64_t logSumExpStrides[3] = {};
  /// With logSumExp: `out` and `logSumExp` already hold the attention of
  /// these queries over other keys (a log-sum-exp of -inf: over none), and
  /// are overwritten with the attention over those keys and these together,
  /// as if the keys had been one sequence (a ring of key blocks).
  bool accumulate = false;
};

/// Computes `problem`; a query that sees no key gets an output of 0, as
/// PyTorch's scaled_dot_product_attention. Spreads (batch, kv head, query
/// block) pieces over `pool` (may be null) when the work is large enough.
/// Requires heads % kvHeads == 0 (kvHeads > 0 unless heads is 0).
void run(const Problem<float> &problem, WorkerPool *pool);
void run(const Problem<double> &problem, WorkerPool *pool);

/// The vector instruction sets the kernel is built for.
enum class Isa { Generic, Avx2, Avx512 };

/// The widest of them this CPU supports (the skinny GEMMs' detection); the
/// forward and backward kernels both dispatch on it.
Isa hostIsa();

/// As run, with the kernel of `isa` (which this CPU must support) and no
/// threads: for tests that compare the builds.
void runWith(Isa isa, const Problem<float> &problem);
void runWith(Isa isa, const Problem<double> &problem);

} // namespace dtensor::rt::attention

#endif // DTENSOR_RUNTIME_ATTENTION_FUSEDATTENTION_H

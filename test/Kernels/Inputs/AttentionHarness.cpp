//===- AttentionHarness.cpp - The CPU attention kernels for ctypes --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A test-only shared library over the runtime's attention kernels
// (attention/FusedAttention.h, attention/AttentionBackward.h) on row-major
// contiguous tensors, so that Python tests can compare them with PyTorch
// (test/Kernels/attention_backward_check.py).
//
//===----------------------------------------------------------------------===//

#include "AttentionBackward.h"
#include "FusedAttention.h"

#include <cstdint>

using namespace dtensor::rt::attention;

namespace {

/// Row-major strides of [d0, d1, d2, d3].
void rowMajor(int64_t d1, int64_t d2, int64_t d3, int64_t *strides) {
  strides[3] = 1;
  strides[2] = d3;
  strides[1] = d2 * d3;
  strides[0] = d1 * d2 * d3;
}

/// The shapes of one attention: query [B, H, L, E], key [B, Hkv, S, E],
/// value [B, Hkv, S, Ev], mask (optional) [B, H, L, S].
struct Shape {
  int64_t batch, heads, kvHeads, queries, keys, features, valueFeatures;
};

template <typename P> void setShape(P &p, const Shape &s) {
  p.batch = s.batch;
  p.heads = s.heads;
  p.kvHeads = s.kvHeads;
  p.queries = s.queries;
  p.keys = s.keys;
  p.features = s.features;
  p.valueFeatures = s.valueFeatures;
  rowMajor(s.heads, s.queries, s.features, p.queryStrides);
  rowMajor(s.kvHeads, s.keys, s.features, p.keyStrides);
  rowMajor(s.kvHeads, s.keys, s.valueFeatures, p.valueStrides);
  rowMajor(s.heads, s.queries, s.keys, p.maskStrides);
}

template <typename T>
void forward(const Shape &s, int32_t causal, const void *mask,
             const int64_t *positions, double scale, const void *q,
             const void *k, const void *v, void *out, void *lse) {
  Problem<T> p;
  setShape(p, s);
  p.keyBatch = s.batch;
  p.query = static_cast<const T *>(q);
  p.key = static_cast<const T *>(k);
  p.value = static_cast<const T *>(v);
  p.mask = static_cast<const T *>(mask);
  p.causal = causal != 0;
  p.positions = positions;
  p.scale = static_cast<T>(scale);
  p.out = static_cast<T *>(out);
  rowMajor(s.heads, s.queries, s.valueFeatures, p.outStrides);
  p.logSumExp = static_cast<T *>(lse);
  p.logSumExpStrides[0] = s.heads * s.queries;
  p.logSumExpStrides[1] = s.queries;
  p.logSumExpStrides[2] = 1;
  run(p, nullptr);
}

template <typename T>
void backward(const Shape &s, int32_t causal, const void *mask,
              const int64_t *positions, double scale, const void *q,
              const void *k, const void *v, const void *out, const void *dOut,
              const void *lse, void *dQ, void *dK, void *dV) {
  BackwardProblem<T> p;
  setShape(p, s);
  p.query = static_cast<const T *>(q);
  p.key = static_cast<const T *>(k);
  p.value = static_cast<const T *>(v);
  p.out = static_cast<const T *>(out);
  rowMajor(s.heads, s.queries, s.valueFeatures, p.outStrides);
  p.dOut = static_cast<const T *>(dOut);
  rowMajor(s.heads, s.queries, s.valueFeatures, p.dOutStrides);
  p.logSumExp = static_cast<const T *>(lse);
  p.logSumExpStrides[0] = s.heads * s.queries;
  p.logSumExpStrides[1] = s.queries;
  p.logSumExpStrides[2] = 1;
  p.mask = static_cast<const T *>(mask);
  p.causal = causal != 0;
  p.positions = positions;
  p.scale = static_cast<T>(scale);
  p.dQuery = static_cast<T *>(dQ);
  p.dKey = static_cast<T *>(dK);
  p.dValue = static_cast<T *>(dV);
  for (int dim = 0; dim < 4; ++dim) {
    p.dQueryStrides[dim] = p.queryStrides[dim];
    p.dKeyStrides[dim] = p.keyStrides[dim];
    p.dValueStrides[dim] = p.valueStrides[dim];
  }
  runBackward(p, nullptr);
}

} // namespace

/// `isDouble`: f64 tensors, else f32. mask and positions may be null.
extern "C" __attribute__((visibility("default"))) void
dtensor_test_attention_forward(int32_t isDouble, const int64_t *shape,
                               int32_t causal, const void *mask,
                               const int64_t *positions, double scale,
                               const void *q, const void *k, const void *v,
                               void *out, void *lse) {
  Shape s{shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6]};
  if (isDouble)
    forward<double>(s, causal, mask, positions, scale, q, k, v, out, lse);
  else
    forward<float>(s, causal, mask, positions, scale, q, k, v, out, lse);
}

extern "C" __attribute__((visibility("default"))) void
dtensor_test_attention_backward(int32_t isDouble, const int64_t *shape,
                                int32_t causal, const void *mask,
                                const int64_t *positions, double scale,
                                const void *q, const void *k, const void *v,
                                const void *out, const void *dOut,
                                const void *lse, void *dQ, void *dK, void *dV) {
  Shape s{shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6]};
  if (isDouble)
    backward<double>(s, causal, mask, positions, scale, q, k, v, out, dOut, lse,
                     dQ, dK, dV);
  else
    backward<float>(s, causal, mask, positions, scale, q, k, v, out, dOut, lse,
                    dQ, dK, dV);
}

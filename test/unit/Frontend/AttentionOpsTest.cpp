//===- AttentionOpsTest.cpp - rotary, scaled_dot_product_attention --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include <cmath>
#include <functional>

using namespace dtensor::frontend::test;

namespace {

using AttentionOpsTest = OpTest;

/// rotate_half RoPE of x[outer..., S, inner..., D] with the sequence at
/// `seqDim`: `seqStride` elements apart, `seqLen` positions.
std::vector<double> rotaryRef(const Tensor &x, int64_t seqDim, double theta,
                              int64_t offset) {
  int64_t d = x.shape.back(), half = d / 2;
  int64_t inner = 1;
  for (size_t dim = seqDim + 1; dim < x.shape.size(); ++dim)
    inner *= x.shape[dim];
  int64_t seqLen = x.shape[seqDim];
  std::vector<double> y(x.values.size());
  for (int64_t start = 0; start < x.size(); start += d) {
    int64_t s = (start / inner) % seqLen;
    for (int64_t i = 0; i < half; ++i) {
      double angle = (offset + s) * std::pow(theta, -2.0 * i / d);
      double x1 = x.values[start + i], x2 = x.values[start + half + i];
      y[start + i] = x1 * std::cos(angle) - x2 * std::sin(angle);
      y[start + half + i] = x2 * std::cos(angle) + x1 * std::sin(angle);
    }
  }
  return y;
}

TEST_F(AttentionOpsTest, Rotary) {
  Tensor x = noise(Dtype::F32, {2, 5, 3, 8});
  expectNear(runOne(R"({"op": "rotary", "inputs": ["x"], "output": "y"})", {x}),
             {2, 5, 3, 8}, rotaryRef(x, 1, 10000, 0), 1e-5);
}

TEST_F(AttentionOpsTest, RotaryOptions) {
  // [B, H, S, D] with the sequence at dim 2, another theta, an offset.
  Tensor x = noise(Dtype::F32, {1, 2, 4, 6}, 1, 3);
  expectNear(runOne(R"({"op": "rotary", "inputs": ["x"], "output": "y",
                        "seq_dim": 2, "theta": 500.0,
                        "position_offset": 7})",
                    {x}),
             {1, 2, 4, 6}, rotaryRef(x, 2, 500, 7), 1e-5);
  Tensor h = noise(Dtype::F16, {3, 4}, 1, 4);
  expectNear(runOne(R"({"op": "rotary", "inputs": ["x"], "output": "y",
                        "seq_dim": 0})",
                    {h}),
             {3, 4}, roundTo(Dtype::F16, rotaryRef(h, 0, 10000, 0)), 1e-3);
}

TEST_F(AttentionOpsTest, RotaryLongSequence) {
  // 4100 positions x 32 frequencies is over the constant tables' limit:
  // the tables are computed once per step. The angles are f32 (as Hugging
  // Face's rotary computes them): at positions near 4100 an angle is off by
  // up to ~2.5e-4 from the double reference, hence the tolerance.
  Tensor x = noise(Dtype::F32, {4100, 2, 64}, 1, 5);
  expectNear(runOne(R"({"op": "rotary", "inputs": ["x"], "output": "y",
                        "seq_dim": 0, "position_offset": 11})",
                    {x}),
             {4100, 2, 64}, rotaryRef(x, 0, 10000, 11), 1e-3);
}

TEST_F(AttentionOpsTest, RotaryErrors) {
  EXPECT_EQ(buildError(R"({"op": "rotary", "inputs": ["x"], "output": "y"})",
                       {noise(Dtype::F32, {2, 3, 5})}),
            "$.model.ops[0].inputs[0] (rotary): input 'x' has shape [2, 3, 5]; "
            "its last dim 5 must be even (it is rotated in two halves)");
  EXPECT_EQ(buildError(R"({"op": "rotary", "inputs": ["x"], "output": "y",
                           "seq_dim": -1})",
                       {noise(Dtype::F32, {2, 3, 4})}),
            "$.model.ops[0].seq_dim (rotary): seq_dim 2 is the last dim, which "
            "holds the rotated features");
  EXPECT_EQ(buildError(R"({"op": "rotary", "inputs": ["x"], "output": "y",
                           "seq_dim": 0})",
                       {noise(Dtype::F32, {4})}),
            "$.model.ops[0].inputs[0] (rotary): input 'x' has shape [4]; "
            "expected [..., S, H, D] (rank at least 2)");
  EXPECT_EQ(buildError(R"({"op": "rotary", "inputs": ["x"], "output": "y",
                           "theta": 0})",
                       {noise(Dtype::F32, {2, 3, 4})}),
            "$.model.ops[0].theta (rotary): theta 0 must be positive");
}

/// Attention over [batch, L, E] x [batch, S, E] x [batch, S, Ev] with the
/// batch dims flattened; the mask is [L, S] or [batch, L, S].
std::vector<double> attentionRef(const Tensor &q, const Tensor &k,
                                 const Tensor &v, const Tensor *mask,
                                 bool causal, double scale) {
  int64_t l = q.shape[q.shape.size() - 2], e = q.shape.back();
  int64_t s = k.shape[k.shape.size() - 2], ev = v.shape.back();
  int64_t batches = q.size() / (l * e);
  std::vector<double> out;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> logits(s);
      double max = -INFINITY;
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t f = 0; f < e; ++f)
          dot += q.values[(b * l + i) * e + f] * k.values[(b * s + j) * e + f];
        logits[j] = dot * scale;
        // A mask of [L, S] broadcast over the batch, or one per batch.
        if (mask)
          logits[j] +=
              mask->values[(mask->size() == batches * l * s ? b * l * s : 0) +
                           i * s + j];
        if (causal && j > i)
          logits[j] = -INFINITY;
        max = std::max(max, logits[j]);
      }
      double sum = 0;
      for (double &logit : logits)
        sum += (logit = std::exp(logit - max));
      for (int64_t f = 0; f < ev; ++f) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j)
          acc += logits[j] / sum * v.values[(b * s + j) * ev + f];
        out.push_back(acc);
      }
    }
  return out;
}

TEST_F(AttentionOpsTest, Sdpa) {
  Tensor q = noise(Dtype::F32, {2, 2, 3, 4}, 1, 1);
  Tensor k = noise(Dtype::F32, {2, 2, 5, 4}, 1, 2);
  Tensor v = noise(Dtype::F32, {2, 2, 5, 3}, 1, 3);
  expectNear(runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v"], "output": "y"})",
                    {q, k, v}),
             {2, 2, 3, 3}, attentionRef(q, k, v, nullptr, false, 0.5), 1e-5);
  // Both products are batched GEMMs over B x H.
  EXPECT_EQ(getMatmulCallCount(), 2);
}

TEST_F(AttentionOpsTest, SdpaCausalAndScale) {
  Tensor q = noise(Dtype::F32, {2, 4, 4}, 1, 1);
  Tensor k = noise(Dtype::F32, {2, 4, 4}, 1, 2);
  Tensor v = noise(Dtype::F32, {2, 4, 2}, 1, 3);
  expectNear(runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v"], "output": "y",
                        "is_causal": true, "scale": 2})",
                    {q, k, v}),
             {2, 4, 2}, attentionRef(q, k, v, nullptr, true, 2), 1e-5);
}

TEST_F(AttentionOpsTest, SdpaMaskAndHalf) {
  Tensor q = noise(Dtype::BF16, {2, 3, 4}, 1, 1);
  Tensor k = noise(Dtype::BF16, {2, 2, 4}, 1, 2);
  Tensor v = noise(Dtype::BF16, {2, 2, 4}, 1, 3);
  // Broadcast over the batch.
  Tensor mask = tensor(Dtype::BF16, {3, 2}, {0, -1, -INFINITY, 0, 0.5, 0});
  Tensor y = runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v", "m"], "output": "y"})",
                    {q, k, v, mask});
  EXPECT_EQ(y.dtype, Dtype::BF16);
  expectNear(y, {2, 3, 4},
             roundTo(Dtype::BF16, attentionRef(q, k, v, &mask, false, 0.5)),
             8e-3);
}

// Rank 5: the two middle batch dims are merged into the heads of the
// op's [B, H, L, E] view; a mask [3, 1, L, S] broadcasts over the first and
// the last of the merged dims, so it is materialised over them first.
TEST_F(AttentionOpsTest, SdpaRank5PartlyBroadcastMask) {
  Tensor q = noise(Dtype::F32, {2, 3, 2, 4, 4}, 1, 1);
  Tensor k = noise(Dtype::F32, {2, 3, 2, 5, 4}, 1, 2);
  Tensor v = noise(Dtype::F32, {2, 3, 2, 5, 3}, 1, 3);
  Tensor mask = noise(Dtype::F32, {3, 1, 4, 5}, 2, 4);
  Tensor full{Dtype::F32, {2, 3, 2, 4, 5}, {}};
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 5; ++j)
            full.values.push_back(mask.at({c, 0, i, j}));
  expectNear(runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v", "m"], "output": "y"})",
                    {q, k, v, mask}),
             {2, 3, 2, 4, 3}, attentionRef(q, k, v, &full, false, 0.5), 1e-5);
}

/// k or v [..., Hkv, S, E] with each head repeated `groups` times, as
/// torch.repeat_interleave(x, groups, dim=-3).
Tensor repeatInterleaveHeads(const Tensor &x, int64_t groups) {
  size_t rank = x.shape.size();
  int64_t heads = x.shape[rank - 3];
  int64_t block = x.shape[rank - 2] * x.shape[rank - 1];
  Tensor y = x;
  y.shape[rank - 3] *= groups;
  y.values.clear();
  for (int64_t start = 0; start < x.size(); start += heads * block)
    for (int64_t h = 0; h < heads * groups; ++h) {
      auto first = x.values.begin() + start + (h / groups) * block;
      y.values.insert(y.values.end(), first, first + block);
    }
  return y;
}

TEST_F(AttentionOpsTest, SdpaGroupedQuery) {
  // 6 query heads over 2 KV heads: query heads 0-2 read KV head 0, 3-5
  // KV head 1.
  Tensor q = noise(Dtype::F32, {2, 6, 3, 4}, 1, 1);
  Tensor k = noise(Dtype::F32, {2, 2, 5, 4}, 1, 2);
  Tensor v = noise(Dtype::F32, {2, 2, 5, 3}, 1, 3);
  expectNear(runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v"], "output": "y",
                        "is_causal": true, "enable_gqa": true})",
                    {q, k, v}),
             {2, 6, 3, 3},
             attentionRef(q, repeatInterleaveHeads(k, 3),
                          repeatInterleaveHeads(v, 3), nullptr, true, 0.5),
             1e-5);
  // Equal head counts: enable_gqa changes nothing.
  Tensor k6 = noise(Dtype::F32, {6, 5, 4}, 1, 4);
  Tensor v6 = noise(Dtype::F32, {6, 5, 4}, 1, 5);
  Tensor q6 = noise(Dtype::F32, {6, 3, 4}, 1, 6);
  expectNear(runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v"], "output": "y",
                        "enable_gqa": true})",
                    {q6, k6, v6}),
             {6, 3, 4}, attentionRef(q6, k6, v6, nullptr, false, 0.5), 1e-5);
}

TEST_F(AttentionOpsTest, SdpaGroupedQueryErrors) {
  Tensor q = noise(Dtype::F32, {2, 6, 3, 4}),
         k = noise(Dtype::F32, {2, 2, 5, 4});
  Tensor v = noise(Dtype::F32, {2, 2, 5, 3});
  // Fewer KV heads without enable_gqa: an error that names the attribute.
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y"})",
                       {q, k, v}),
            "$.model.ops[0].inputs[1] (scaled_dot_product_attention): key 'k' "
            "has shape [2, 2, 5, 4] but query 'q' has [2, 6, 3, 4]; their "
            "batch dims must be equal (fewer key/value heads need "
            "enable_gqa)");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y",
                           "enable_gqa": true})",
                       {q, noise(Dtype::F32, {2, 4, 5, 4}),
                        noise(Dtype::F32, {2, 4, 5, 3})}),
            "$.model.ops[0].inputs[1] (scaled_dot_product_attention): key 'k' "
            "has shape [2, 4, 5, 4] but query 'q' has [2, 6, 3, 4]; with "
            "enable_gqa the query heads (dim -3, 6) must be a multiple of the "
            "key/value heads (4)");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y",
                           "enable_gqa": true})",
                       {q, k, noise(Dtype::F32, {2, 3, 5, 3})}),
            "$.model.ops[0].inputs[2] (scaled_dot_product_attention): value "
            "'v' has shape [2, 3, 5, 3] but key 'k' has [2, 2, 5, 4]; they "
            "need the same number of heads (dim -3)");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y",
                           "enable_gqa": true})",
                       {q, noise(Dtype::F32, {3, 2, 5, 4}), v}),
            "$.model.ops[0].inputs[1] (scaled_dot_product_attention): key 'k' "
            "has shape [3, 2, 5, 4] but query 'q' has [2, 6, 3, 4]; their "
            "batch dims must be equal");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y",
                           "enable_gqa": true})",
                       {noise(Dtype::F32, {3, 4}), noise(Dtype::F32, {5, 4}),
                        noise(Dtype::F32, {5, 3})}),
            "$.model.ops[0].enable_gqa (scaled_dot_product_attention): "
            "enable_gqa needs a heads dim: query 'q' has shape [3, 4], "
            "expected [..., H, L, E] (rank 3 or more)");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y",
                           "enable_gqa": 1})",
                       {q, k, v}),
            "$.model.ops[0].enable_gqa: expected true or false, got a number");
}

TEST_F(AttentionOpsTest, SdpaErrors) {
  Tensor q = noise(Dtype::F32, {2, 3, 4}), k = noise(Dtype::F32, {2, 5, 4});
  Tensor v = noise(Dtype::F32, {2, 5, 6});
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y"})",
                       {q, noise(Dtype::F32, {2, 5, 3}), v}),
            "$.model.ops[0].inputs[1] (scaled_dot_product_attention): key 'k' "
            "has shape [2, 5, 3] but query 'q' has [2, 3, 4]; key and query "
            "need the same last dim E");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y"})",
                       {q, noise(Dtype::F32, {3, 5, 4}), v}),
            "$.model.ops[0].inputs[1] (scaled_dot_product_attention): key 'k' "
            "has shape [3, 5, 4] but query 'q' has [2, 3, 4]; their batch "
            "dims must be equal");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y"})",
                       {q, k, noise(Dtype::F32, {2, 4, 6})}),
            "$.model.ops[0].inputs[2] (scaled_dot_product_attention): value "
            "'v' has shape [2, 4, 6] but key 'k' has [2, 5, 4]; they need the "
            "same sequence length S");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v", "m"], "output": "y"})",
                       {q, k, v, noise(Dtype::F32, {3, 4})}),
            "$.model.ops[0].inputs[3] (scaled_dot_product_attention): mask 'm' "
            "has shape [3, 4], which does not broadcast to the scores "
            "[2, 3, 5] ([..., L, S])");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v", "m"], "output": "y",
                           "is_causal": true})",
                       {q, k, v, noise(Dtype::F32, {3, 5})}),
            "$.model.ops[0].is_causal (scaled_dot_product_attention): takes "
            "either a mask or is_causal, not both");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y"})",
                       {q, k, noise(Dtype::F32, {6})}),
            "$.model.ops[0].inputs[2] (scaled_dot_product_attention): input "
            "'v' has shape [6]; expected [..., S, Ev] (rank at least 2)");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y"})",
                       {q, k, noise(Dtype::F16, {2, 5, 6})}),
            "$.model.ops[0].inputs[2] (scaled_dot_product_attention): input "
            "'v' has dtype f16 but 'q' has f32; dtypes must be equal (there is "
            "no type promotion)");
}

/// rotate_half RoPE of x[..., D] where the vector starting at flat element
/// `start` is at position `positionOf(coordinates of that element)`.
std::vector<double> rotaryAt(
    const Tensor &x, double theta,
    const std::function<double(const std::vector<int64_t> &)> &positionOf) {
  int64_t d = x.shape.back(), half = d / 2;
  std::vector<double> y(x.values.size());
  for (int64_t start = 0; start < x.size(); start += d) {
    std::vector<int64_t> coords(x.shape.size());
    for (int64_t dim = x.shape.size() - 1, rest = start; dim >= 0; --dim) {
      coords[dim] = rest % x.shape[dim];
      rest /= x.shape[dim];
    }
    double position = positionOf(coords);
    for (int64_t i = 0; i < half; ++i) {
      double angle = position * std::pow(theta, -2.0 * i / d);
      double x1 = x.values[start + i], x2 = x.values[start + half + i];
      y[start + i] = x1 * std::cos(angle) - x2 * std::sin(angle);
      y[start + half + i] = x2 * std::cos(angle) + x1 * std::sin(angle);
    }
  }
  return y;
}

TEST_F(AttentionOpsTest, RotaryRowStarts) {
  // x[B, S, H, D] with row b's tokens at starts[b] + s.
  Tensor x = noise(Dtype::F32, {3, 4, 2, 6}, 1, 7);
  Tensor starts = tensor(Dtype::I64, {3}, {0, 9, -2});
  expectNear(runOne(R"({"op": "rotary", "inputs": ["x", "p"], "output": "y",
                        "theta": 100})",
                    {x, starts}),
             {3, 4, 2, 6},
             rotaryAt(x, 100,
                      [&](const std::vector<int64_t> &c) {
                        return starts.values[c[0]] + c[1];
                      }),
             1e-5);
}

TEST_F(AttentionOpsTest, RotaryTokenPositions) {
  // Each token's own position [B, S] (i32), then [B, 1, S] broadcast over
  // the heads of x[B, H, S, D], then [S] with the sequence first.
  Tensor x = noise(Dtype::F32, {2, 3, 2, 4}, 1, 8);
  Tensor positions = tensor(Dtype::I32, {2, 3}, {5, 1, 0, 7, 7, -3});
  expectNear(runOne(R"({"op": "rotary", "inputs": ["x", "p"], "output": "y"})",
                    {x, positions}),
             {2, 3, 2, 4},
             rotaryAt(x, 10000,
                      [&](const std::vector<int64_t> &c) {
                        return positions.values[c[0] * 3 + c[1]];
                      }),
             1e-5);
  Tensor xt = noise(Dtype::F32, {2, 2, 3, 4}, 1, 9);
  Tensor bcast = tensor(Dtype::I64, {2, 1, 3}, {4, 2, 0, 1, 3, 5});
  expectNear(runOne(R"({"op": "rotary", "inputs": ["x", "p"], "output": "y",
                        "seq_dim": 2})",
                    {xt, bcast}),
             {2, 2, 3, 4},
             rotaryAt(xt, 10000,
                      [&](const std::vector<int64_t> &c) {
                        return bcast.values[c[0] * 3 + c[2]];
                      }),
             1e-5);
  Tensor xs = noise(Dtype::F32, {3, 2, 4}, 1, 10);
  Tensor seq = tensor(Dtype::I64, {3}, {8, 0, 2});
  expectNear(
      runOne(R"({"op": "rotary", "inputs": ["x", "p"], "output": "y"})",
             {xs, seq}),
      {3, 2, 4},
      rotaryAt(xs, 10000,
               [&](const std::vector<int64_t> &c) { return seq.values[c[0]]; }),
      1e-5);
}

TEST_F(AttentionOpsTest, RotaryPositionsErrors) {
  Tensor x = noise(Dtype::F32, {2, 5, 4, 8});
  EXPECT_EQ(buildError(R"({"op": "rotary", "inputs": ["x", "p"], "output": "y",
                           "position_offset": 0})",
                       {x, tensor(Dtype::I64, {2}, {0, 1})}),
            "$.model.ops[0].position_offset (rotary): position_offset and a "
            "positions input together: the positions input holds absolute "
            "positions");
  EXPECT_EQ(
      buildError(R"({"op": "rotary", "inputs": ["x", "p"], "output": "y"})",
                 {x, noise(Dtype::F32, {2})}),
      "$.model.ops[0].inputs[1] (rotary): input 'p' has dtype f32; "
      "expected an integer tensor (i32 or i64)");
  EXPECT_EQ(
      buildError(R"({"op": "rotary", "inputs": ["x", "p"], "output": "y"})",
                 {x, tensor(Dtype::I64, {2, 4}, std::vector<double>(8))}),
      "$.model.ops[0].inputs[1] (rotary): positions 'p' has shape "
      "[2, 4]; expected [2] (the first position of each row of dim 0) "
      "or [2, 5] (the position of each token: input 'x' [2, 5, 4, 8] up "
      "to seq_dim 1, size-1 dims broadcast)");
}

/// Attention with query positions: q [B, Hq, L, E], k/v [B, Hkv, S, *];
/// query i of row b sees key j iff j <= positions[b] + i; a query that sees
/// none gives zeros.
std::vector<double> positionedAttentionRef(const Tensor &q, const Tensor &k,
                                           const Tensor &v,
                                           const std::vector<double> &positions,
                                           double scale) {
  int64_t batch = q.shape[0], heads = q.shape[1], l = q.shape[2];
  int64_t e = q.shape[3], kvHeads = k.shape[1], s = k.shape[2];
  int64_t ev = v.shape[3], groups = heads / kvHeads;
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < l; ++i) {
        int64_t kv = b * kvHeads + h / groups;
        std::vector<double> weights(s, 0);
        double max = -INFINITY;
        for (int64_t j = 0; j < s; ++j) {
          if (j > positions[b] + i) {
            weights[j] = -INFINITY;
            continue;
          }
          double dot = 0;
          for (int64_t f = 0; f < e; ++f)
            dot += q.values[((b * heads + h) * l + i) * e + f] *
                   k.values[(kv * s + j) * e + f];
          weights[j] = dot * scale;
          max = std::max(max, weights[j]);
        }
        double sum = 0;
        for (double &w : weights)
          sum += (w = std::isinf(w) ? 0 : std::exp(w - max));
        for (int64_t f = 0; f < ev; ++f) {
          double acc = 0;
          for (int64_t j = 0; j < s; ++j)
            if (sum > 0)
              acc += weights[j] / sum * v.values[(kv * s + j) * ev + f];
          out.push_back(acc);
        }
      }
  return out;
}

TEST_F(AttentionOpsTest, SdpaQueryPositions) {
  // 4 query heads over 2 KV heads, 3 new tokens over 6 cache positions:
  // row 0 from position 2 (keys past 4 stale), row 1 from 3, row 2 from -2
  // (its first two queries see no key: zeros), row 3 from -5 (padding).
  Tensor q = noise(Dtype::F32, {4, 4, 3, 4}, 1, 11);
  Tensor k = noise(Dtype::F32, {4, 2, 6, 4}, 1, 12);
  Tensor v = noise(Dtype::F32, {4, 2, 6, 3}, 1, 13);
  Tensor positions = tensor(Dtype::I64, {4}, {2, 3, -2, -5});
  Tensor y = runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v", "p"], "output": "y",
                        "is_causal": true, "enable_gqa": true,
                        "query_positions": true})",
                    {q, k, v, positions});
  expectNear(y, {4, 4, 3, 3},
             positionedAttentionRef(q, k, v, positions.values, 0.5), 1e-5);
  // Fully masked queries are exactly 0.
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t f = 0; f < 3; ++f) {
      EXPECT_EQ(y.at({2, h, 0, f}), 0.0);
      EXPECT_EQ(y.at({3, h, 2, f}), 0.0);
    }
  // Positions 0 give plain causal attention; i32 positions are widened.
  Tensor q2 = noise(Dtype::F32, {2, 2, 4, 4}, 1, 14);
  Tensor k2 = noise(Dtype::F32, {2, 2, 4, 4}, 1, 15);
  Tensor v2 = noise(Dtype::F32, {2, 2, 4, 4}, 1, 16);
  expectNear(runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v", "p"], "output": "y",
                        "is_causal": true, "query_positions": true,
                        "scale": 0.25})",
                    {q2, k2, v2, tensor(Dtype::I32, {2}, {0, 0})}),
             {2, 2, 4, 4}, attentionRef(q2, k2, v2, nullptr, true, 0.25), 1e-5);
}

TEST_F(AttentionOpsTest, SdpaFullyMaskedRowsAreZero) {
  // A mask row of -inf: PyTorch's scaled_dot_product_attention gives zeros
  // there (softmax alone would give NaN).
  Tensor q = noise(Dtype::F32, {1, 2, 4}, 1, 1);
  Tensor k = noise(Dtype::F32, {1, 3, 4}, 1, 2);
  Tensor v = noise(Dtype::F32, {1, 3, 2}, 1, 3);
  Tensor mask = tensor(Dtype::F32, {2, 3},
                       {-INFINITY, -INFINITY, -INFINITY, 0, -INFINITY, 1});
  Tensor y = runOne(R"({"op": "scaled_dot_product_attention",
                        "inputs": ["q", "k", "v", "m"], "output": "y"})",
                    {q, k, v, mask});
  std::vector<double> expected = attentionRef(q, k, v, &mask, false, 0.5);
  expected[0] = expected[1] = 0;
  expectNear(y, {1, 2, 2}, expected, 1e-5);
}

TEST_F(AttentionOpsTest, SdpaQueryPositionsErrors) {
  Tensor q = noise(Dtype::F32, {2, 4, 3, 4}),
         k = noise(Dtype::F32, {2, 4, 6, 4});
  Tensor v = noise(Dtype::F32, {2, 4, 6, 4});
  Tensor p = tensor(Dtype::I64, {2}, {0, 1});
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v", "p"], "output": "y",
                           "query_positions": true})",
                       {q, k, v, p}),
            "$.model.ops[0].query_positions (scaled_dot_product_attention): "
            "query_positions place the causal mask (query i of row b sees key "
            "j iff j <= positions[b] + i); it needs is_causal: true");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v"], "output": "y",
                           "is_causal": true, "query_positions": true})",
                       {q, k, v}),
            "$.model.ops[0].query_positions (scaled_dot_product_attention): "
            "query_positions takes the positions as a fourth input (q, k, v, "
            "positions[B]); got 3 inputs");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v", "p"], "output": "y",
                           "is_causal": true, "query_positions": true})",
                       {q, k, v, tensor(Dtype::I64, {4}, {0, 1, 2, 3})}),
            "$.model.ops[0].inputs[3] (scaled_dot_product_attention): query "
            "positions 'p' has shape [4]; expected [2], the position of the "
            "first query of each row of query 'q' [2, 4, 3, 4]");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v", "p"], "output": "y",
                           "is_causal": true, "query_positions": true})",
                       {q, k, v, noise(Dtype::F32, {2})}),
            "$.model.ops[0].inputs[3] (scaled_dot_product_attention): input "
            "'p' has dtype f32; expected an integer tensor (i32 or i64)");
  EXPECT_EQ(buildError(R"({"op": "scaled_dot_product_attention",
                           "inputs": ["q", "k", "v", "p"], "output": "y",
                           "is_causal": true, "query_positions": true})",
                       {noise(Dtype::F32, {3, 4}), noise(Dtype::F32, {6, 4}),
                        noise(Dtype::F32, {6, 4}), p}),
            "$.model.ops[0].query_positions (scaled_dot_product_attention): "
            "query_positions needs a batch dim: query 'q' has shape [3, 4], "
            "expected [B, ..., L, E] (rank 3 or more)");
}

} // namespace

//===- Sampling.cpp - Next-token sampling from logits ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each filter follows its `transformers` warper: top-k keeps every logit
// at least the k-th largest (ties kept), top-p drops the smallest tokens
// whose cumulative probability stays at most 1 - p (keeping one), min-p
// drops tokens below min_p times the largest probability.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/Sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace dtensor::tooling {

namespace {

const double kMinusInfinity = -std::numeric_limits<double>::infinity();

uint64_t splitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

} // namespace

bool SamplingParams::greedyArgmax() const {
  return temperature == 0 && repetitionPenalty == 1 && presencePenalty == 0 &&
         frequencyPenalty == 0 && logitBias.empty();
}

std::vector<double> processLogits(const float *logits, int64_t vocab,
                                  const SamplingParams &params,
                                  const std::vector<int64_t> &prompt,
                                  const std::vector<int64_t> &generated) {
  std::vector<double> scores(logits, logits + vocab);
  for (const auto &[id, bias] : params.logitBias)
    if (id >= 0 && id < vocab)
      scores[id] += bias;
  if (params.repetitionPenalty != 1) {
    std::vector<bool> seen(static_cast<size_t>(vocab), false);
    for (const std::vector<int64_t> *tokens : {&prompt, &generated})
      for (int64_t id : *tokens)
        if (id >= 0 && id < vocab && !seen[id]) {
          seen[id] = true;
          double &score = scores[id];
          score = score < 0 ? score * params.repetitionPenalty
                            : score / params.repetitionPenalty;
        }
  }
  if (params.presencePenalty != 0 || params.frequencyPenalty != 0) {
    std::unordered_map<int64_t, int64_t> counts;
    for (int64_t id : generated)
      if (id >= 0 && id < vocab)
        ++counts[id];
    for (const auto &[id, count] : counts)
      scores[id] -= params.frequencyPenalty * static_cast<double>(count) +
                    params.presencePenalty;
  }
  if (params.temperature == 0)
    return scores; // greedy: the filters keep the argmax anyway
  if (params.temperature != 1)
    for (double &score : scores)
      score /= params.temperature;

  if (params.topK > 0 && params.topK < vocab) {
    std::vector<double> sorted = scores;
    std::nth_element(sorted.begin(), sorted.begin() + (params.topK - 1),
                     sorted.end(), std::greater<double>());
    double kth = sorted[params.topK - 1];
    for (double &score : scores)
      if (score < kth)
        score = kMinusInfinity;
  }
  if (params.topP < 1) {
    std::vector<double> probabilities = softmax(scores);
    std::vector<int64_t> order(static_cast<size_t>(vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return scores[a] < scores[b];
    });
    double cumulative = 0;
    // Ascending: drop while the mass so far is at most 1 - p; the largest
    // token always stays.
    for (size_t i = 0; i + 1 < order.size(); ++i) {
      cumulative += probabilities[order[i]];
      if (cumulative <= 1 - params.topP)
        scores[order[i]] = kMinusInfinity;
    }
  }
  if (params.minP > 0) {
    std::vector<double> probabilities = softmax(scores);
    double top = *std::max_element(probabilities.begin(), probabilities.end());
    for (int64_t id = 0; id < vocab; ++id)
      if (probabilities[id] < params.minP * top)
        scores[id] = kMinusInfinity;
  }
  return scores;
}

std::vector<double> softmax(const std::vector<double> &logits) {
  double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> out(logits.size(), 0.0);
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i)
    if (logits[i] != kMinusInfinity)
      sum += out[i] = std::exp(logits[i] - top);
  for (double &value : out)
    value /= sum;
  return out;
}

std::vector<double> logSoftmax(const float *logits, int64_t vocab) {
  double top = *std::max_element(logits, logits + vocab);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp(static_cast<double>(logits[i]) - top);
  double logSum = top + std::log(sum);
  std::vector<double> out(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i)
    out[i] = static_cast<double>(logits[i]) - logSum;
  return out;
}

double counterUniform(uint64_t seed, uint64_t choice, uint64_t index) {
  uint64_t bits = splitMix64(seed ^ splitMix64(choice ^ splitMix64(index)));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

int64_t drawToken(const std::vector<double> &probabilities, double u) {
  double cumulative = 0;
  int64_t last = 0;
  for (size_t id = 0; id < probabilities.size(); ++id) {
    if (probabilities[id] <= 0)
      continue;
    cumulative += probabilities[id];
    last = static_cast<int64_t>(id);
    if (u < cumulative)
      return last;
  }
  // Rounding left the total a little under 1: the last possible token.
  return last;
}

int64_t sampleToken(const float *logits, int64_t vocab,
                    const SamplingParams &params,
                    const std::vector<int64_t> &prompt,
                    const std::vector<int64_t> &generated, uint64_t choice) {
  std::vector<double> scores =
      processLogits(logits, vocab, params, prompt, generated);
  if (params.temperature == 0)
    return std::max_element(scores.begin(), scores.end()) - scores.begin();
  return drawToken(softmax(scores),
                   counterUniform(params.seed, choice, generated.size()));
}

} // namespace dtensor::tooling

//===- TokenChoice.cpp - A job's next token from the step's output --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "TokenChoice.h"

#include <algorithm>

namespace dtensor::server {

namespace {

/// `token`'s log-probability under `logits` and the `count` most likely
/// tokens (ties in id order).
TokenLogprobs logprobsOf(const float *logits, int64_t vocab, int64_t token,
                         int count) {
  std::vector<double> logprobs = tooling::logSoftmax(logits, vocab);
  TokenLogprobs entry;
  entry.logprob = logprobs[token];
  std::vector<int64_t> order(static_cast<size_t>(vocab));
  for (int64_t id = 0; id < vocab; ++id)
    order[id] = id;
  size_t kept = std::min<size_t>(static_cast<size_t>(count), order.size());
  std::partial_sort(order.begin(), order.begin() + kept, order.end(),
                    [&](int64_t a, int64_t b) {
                      return logprobs[a] > logprobs[b] ||
                             (logprobs[a] == logprobs[b] && a < b);
                    });
  for (size_t i = 0; i < kept; ++i)
    entry.top.emplace_back(order[i], logprobs[order[i]]);
  return entry;
}

} // namespace

TokenChoice chooseToken(const Job &job, int64_t argmax, const float *logits,
                        int64_t vocab) {
  TokenChoice choice;
  choice.token = argmax;
  if (!logits || !job.needsLogits())
    return choice;
  if (job.sampling)
    choice.token = tooling::sampleToken(logits, vocab, *job.sampling,
                                        job.prompt, job.generated, job.choice);
  if (job.logprobs >= 0)
    choice.logprobs = logprobsOf(logits, vocab, choice.token, job.logprobs);
  return choice;
}

} // namespace dtensor::server

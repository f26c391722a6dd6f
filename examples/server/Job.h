//===- Job.h - One request on its way through the batches -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An HTTP thread creates a Job from a validated request, queues it and
// waits; the main thread runs it (one step for next_token, one per new
// token for generate) and finishes it. A failure may also finish it from
// the step watchdog's thread, so finishing happens once, under a lock.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_JOB_H
#define DTENSOR_EXAMPLES_SERVER_JOB_H

#include "dtensor/Tooling/Sampling.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dtensor::server {

/// NextToken: /v1/next_token; Generate: /v1/generate; Completion: the
/// OpenAI-style /v1/completions (stop tokens, streaming).
enum class JobKind { NextToken, Generate, Completion };

/// A generated token's log-probability and the most likely tokens at its
/// position (log-softmax of the model's logits, before any sampling
/// processor), as OpenAI's logprobs report them.
struct TokenLogprobs {
  double logprob = 0;
  std::vector<std::pair<int64_t, double>> top;
};

/// What the HTTP thread answers with.
struct JobResult {
  int status = 0;    // 200, or 503 when the ranks failed or shut down
  std::string error; // with 503
  std::vector<int64_t> generated; // generate: the new tokens
  std::vector<int64_t> argmax;    // next_token: argmax at every prompt position
  std::vector<float> logits;      // next_token with logits: the last position's
  /// completion: "length" (max tokens) or "stop" (a stop token, left out).
  std::string finishReason;
  /// completion with logprobs: one entry per generated token.
  std::vector<TokenLogprobs> logprobs;
};

class Job {
public:
  Job(JobKind kind, std::vector<int64_t> tokens, int64_t maxNewTokens,
      bool wantLogits)
      : kind(kind), prompt(tokens), maxNewTokens(maxNewTokens),
        wantLogits(wantLogits), sequence(std::move(tokens)) {}

  const JobKind kind;
  const std::vector<int64_t> prompt;
  const int64_t maxNewTokens; // 1 for next_token
  const bool wantLogits;
  /// Completion: generation ends at any of these tokens (not returned).
  std::vector<int64_t> stop;
  /// Completion: how tokens are drawn from the logits (unset: the model's
  /// argmax); `choice` keys the draws of the n choices of one request.
  std::optional<tooling::SamplingParams> sampling;
  uint64_t choice = 0;
  /// Completion: how many top log-probabilities to report per token (-1:
  /// no logprobs).
  int logprobs = -1;
  /// When the request was queued (time to first token).
  const std::chrono::steady_clock::time_point created =
      std::chrono::steady_clock::now();

  // Main thread only: the prompt and what has been generated so far.
  std::vector<int64_t> sequence;
  std::vector<int64_t> generated;
  std::vector<TokenLogprobs> generatedLogprobs;

  /// Whether the main thread must fetch the logits for this job.
  bool needsLogits() const {
    return wantLogits || (sampling && !sampling->greedyArgmax()) ||
           logprobs >= 0;
  }

  /// Records the answer unless one was recorded already; true if this call
  /// did.
  bool finish(JobResult result) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_)
      return false;
    result_ = std::move(result);
    done_ = true;
    ready_.notify_all();
    return true;
  }

  /// Blocks until finish().
  JobResult wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return done_; });
    return result_;
  }

  /// Main thread: a new token for a streaming reader.
  void publish(int64_t token, const TokenLogprobs *logprobs = nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    published_.push_back(token);
    if (logprobs)
      publishedLogprobs_.push_back(*logprobs);
    ready_.notify_all();
  }

  /// Streaming reader: waits up to `timeout` until tokens past the first
  /// `seen` are published or the job is finished; appends them to `tokens`.
  /// True when the job is finished (`result` set) and every token was read.
  /// With `logprobs`, their entries are appended too (jobs with logprobs).
  bool next(size_t &seen, std::vector<int64_t> &tokens, JobResult &result,
            std::chrono::milliseconds timeout,
            std::vector<TokenLogprobs> *logprobs = nullptr) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait_for(lock, timeout,
                    [&] { return done_ || published_.size() > seen; });
    tokens.insert(tokens.end(), published_.begin() + seen, published_.end());
    if (logprobs && publishedLogprobs_.size() == published_.size())
      logprobs->insert(logprobs->end(), publishedLogprobs_.begin() + seen,
                       publishedLogprobs_.end());
    seen = published_.size();
    if (done_)
      result = result_;
    return done_;
  }

  /// The client went away (a stream's connection closed): the main thread
  /// ends the job at its next step and frees its slot.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }

private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool done_ = false;
  JobResult result_;
  std::vector<int64_t> published_;
  std::vector<TokenLogprobs> publishedLogprobs_;
  std::atomic<bool> cancelled_{false};
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_JOB_H

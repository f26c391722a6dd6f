//===- Batcher.cpp - Rows of the compiled batch, step by step -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Batcher.h"

#include "TokenChoice.h"

#include <algorithm>
#include <cassert>

namespace dtensor::server {

void Batcher::admit(std::vector<JobPtr> jobs) {
  assert(jobs.size() <= freeRows() && "more jobs than free rows");
  for (JobPtr &job : jobs) {
    assert(!job->sequence.empty() &&
           static_cast<int64_t>(job->sequence.size()) <= seqLen_ &&
           "an unvalidated job");
    active_.push_back(std::move(job));
  }
}

std::vector<int64_t> Batcher::pack() const {
  std::vector<int64_t> tokens(static_cast<size_t>(rows_ * seqLen_), 0);
  for (size_t row = 0; row < active_.size(); ++row)
    std::copy(active_[row]->sequence.begin(), active_[row]->sequence.end(),
              tokens.begin() + row * seqLen_);
  return tokens;
}

bool Batcher::wantsLogits() const {
  for (const JobPtr &job : active_)
    if (job->needsLogits())
      return true;
  return false;
}

size_t Batcher::complete(const std::vector<int64_t> &next,
                         const std::vector<float> &logits) {
  std::vector<JobPtr> remaining;
  for (size_t row = 0; row < active_.size(); ++row) {
    Job &job = *active_[row];
    size_t length = job.sequence.size();
    const int64_t *rowNext = next.data() + row * seqLen_;
    int64_t token = rowNext[length - 1];
    if (job.kind == JobKind::NextToken) {
      JobResult result;
      result.status = 200;
      result.generated = {token};
      result.argmax.assign(rowNext, rowNext + length);
      if (job.wantLogits && !logits.empty()) {
        const float *at = logits.data() + (row * seqLen_ + length - 1) * vocab_;
        result.logits.assign(at, at + vocab_);
      }
      job.finish(std::move(result));
      continue;
    }
    // Sampling and logprobs read the logits at the job's last position.
    const float *at =
        logits.empty() ? nullptr
                       : logits.data() + (row * seqLen_ + length - 1) * vocab_;
    TokenChoice choice = chooseToken(job, token, at, vocab_);
    token = choice.token;
    const TokenLogprobs *tokenLogprobs =
        choice.logprobs ? &*choice.logprobs : nullptr;
    // A stop token ends a completion and is not returned.
    bool stopped = std::find(job.stop.begin(), job.stop.end(), token) !=
                   job.stop.end();
    if (!stopped) {
      job.generated.push_back(token);
      job.sequence.push_back(token);
      if (tokenLogprobs)
        job.generatedLogprobs.push_back(*tokenLogprobs);
      job.publish(token, tokenLogprobs);
    }
    if (stopped ||
        static_cast<int64_t>(job.generated.size()) >= job.maxNewTokens) {
      JobResult result;
      result.status = 200;
      result.generated = job.generated;
      result.logprobs = job.generatedLogprobs;
      result.finishReason = stopped ? "stop" : "length";
      job.finish(std::move(result));
      continue;
    }
    if (job.cancelled()) {
      JobResult result;
      result.status = 200;
      result.generated = job.generated;
      result.logprobs = job.generatedLogprobs;
      result.finishReason = "cancelled";
      job.finish(std::move(result));
      continue;
    }
    remaining.push_back(active_[row]);
  }
  size_t produced = active_.size();
  active_ = std::move(remaining);
  return produced;
}

void Batcher::failAll(int status, const std::string &message) {
  for (const JobPtr &job : active_) {
    JobResult result;
    result.status = status;
    result.error = message;
    job->finish(std::move(result));
  }
  active_.clear();
}

} // namespace dtensor::server

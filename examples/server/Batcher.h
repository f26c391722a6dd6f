//===- Batcher.h - Rows of the compiled batch, step by step -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Continuous batching without a KV cache: every step runs the whole
// [batch, seqLen] token tensor, each active job in one row (its prompt plus
// what it generated so far, zero-padded), and reads each job's next token
// at its last position. The model is causal, so the padding after that
// position does not change it. A next_token job leaves after one step; a
// generate job stays until it has all its tokens, and new jobs take the
// rows that free up.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_BATCHER_H
#define DTENSOR_EXAMPLES_SERVER_BATCHER_H

#include "Job.h"

#include <memory>
#include <string>
#include <vector>

namespace dtensor::server {

class Batcher {
public:
  using JobPtr = std::shared_ptr<Job>;

  Batcher(int64_t rows, int64_t seqLen, int64_t vocab)
      : rows_(rows), seqLen_(seqLen), vocab_(vocab) {}

  size_t freeRows() const {
    return static_cast<size_t>(rows_) - active_.size();
  }
  bool idle() const { return active_.empty(); }
  const std::vector<JobPtr> &active() const { return active_; }

  /// Gives each job a row; at most freeRows() of them.
  void admit(std::vector<JobPtr> jobs);

  /// The next step's tokens, rows * seqLen.
  std::vector<int64_t> pack() const;

  /// True when a job of this step asked for logits.
  bool wantsLogits() const;

  /// Takes a step's argmax (rows * seqLen) and, when fetched, its logits
  /// (rows * seqLen * vocab): advances every job, answers and removes those
  /// that are done. Returns the tokens produced.
  size_t complete(const std::vector<int64_t> &next,
                  const std::vector<float> &logits);

  /// Answers every active job `status` with `message` and empties the rows.
  void failAll(int status, const std::string &message);

private:
  int64_t rows_;
  int64_t seqLen_;
  int64_t vocab_;
  std::vector<JobPtr> active_;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_BATCHER_H

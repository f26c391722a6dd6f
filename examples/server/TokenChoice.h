//===- TokenChoice.h - A job's next token from a step's output -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The recompute batcher and the KV-cache scheduler take a job's next token
// the same way: the model's argmax, or for a job that samples a draw from
// the logits of its position (runtime/tooling/Sampling.h), and with
// logprobs the log-softmax of those logits. Sharing it is what makes a
// seeded request draw the same tokens on both kinds of artifact.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_TOKENCHOICE_H
#define DTENSOR_EXAMPLES_SERVER_TOKENCHOICE_H

#include "Job.h"

#include <cstdint>
#include <optional>

namespace dtensor::server {

struct TokenChoice {
  int64_t token = 0;
  /// Set for a job with logprobs.
  std::optional<TokenLogprobs> logprobs;
};

/// `job`'s next token: `argmax` unless the job needs logits and `logits`
/// (its position's `vocab` values) is given; then sampled with the job's
/// parameters over its prompt and generated tokens, the draw keyed by its
/// choice and the number of tokens it has generated.
TokenChoice chooseToken(const Job &job, int64_t argmax, const float *logits,
                        int64_t vocab);

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_TOKENCHOICE_H

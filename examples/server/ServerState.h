//===- ServerState.h - What rank 0's threads share --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Owned by main() on rank 0: the HTTP threads read and push, the main
// thread steps, the signal thread and the step watchdog shut down or fail.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_SERVERSTATE_H
#define DTENSOR_EXAMPLES_SERVER_SERVERSTATE_H

#include "Health.h"
#include "Metrics.h"
#include "Protocol.h"
#include "RequestQueue.h"

#include "dtensor/Tooling/ChatTemplate.h"
#include "dtensor/Tooling/Tokenizer.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dtensor::server {

struct ServerState {
  RequestQueue queue;
  Health health;
  std::unique_ptr<Metrics> metrics;
  std::atomic<size_t> activeRows{0};
  Limits limits;
  int64_t batch = 0;
  int ranks = 1;
  /// The name /v1/models and completions report.
  std::string modelName;
  /// --tokenizer's (null without) and the tokens that end a sequence,
  /// which end every completion.
  std::unique_ptr<tooling::Tokenizer> tokenizer;
  std::vector<int64_t> endOfSequence;
  /// Its folder's chat template (null without one) and the texts of its
  /// BOS and EOS tokens, the template's bos_token and eos_token.
  std::unique_ptr<tooling::ChatTemplate> chatTemplate;
  std::string bosToken, eosToken;
  /// Numbers the completions ("cmpl-<n>").
  std::atomic<int64_t> completions{0};
  /// Starts a graceful shutdown (SIGTERM, POST /admin/shutdown).
  std::function<void(const std::string &reason)> requestShutdown;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_SERVERSTATE_H

//===- CompletionText.h - The text of a completion as it comes --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Turns a completion's tokens into text for the client, streamed or not,
// and ends it at the first stop string: text that might be the start of a
// stop string is held back until the next tokens tell, so a client never
// sees part of a stop string, and half characters are never sent
// (tooling::StreamingDetokenizer). Special tokens are left out of the text,
// as OpenAI's and vLLM's servers do.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_COMPLETIONTEXT_H
#define DTENSOR_EXAMPLES_SERVER_COMPLETIONTEXT_H

#include "dtensor/Tooling/StreamingDetokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::server {

class CompletionText {
public:
  CompletionText(const tooling::Tokenizer &tokenizer,
                 std::vector<std::string> stopStrings)
      : stream_(tokenizer, /*skipSpecialTokens=*/true),
        stopStrings_(std::move(stopStrings)) {}

  /// The text that may be sent now that `token` came ("" after a stop).
  std::string add(int64_t token);

  /// The text still held back, at the end of the completion.
  std::string finish();

  /// A stop string was reached: the completion ends before it.
  bool stopped() const { return stopped_; }

  /// The tokens added until the stop string was complete (all of them
  /// without a stop): what the completion counts.
  size_t tokens() const { return tokens_; }

private:
  /// Moves what is safe to send from pending_ to the answer.
  std::string release(bool atEnd);

  tooling::StreamingDetokenizer stream_;
  std::vector<std::string> stopStrings_;
  std::string pending_;
  bool stopped_ = false;
  size_t tokens_ = 0;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_COMPLETIONTEXT_H

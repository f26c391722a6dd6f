//===- ServerRequestFuzzer.cpp - Fuzzing the server's request parser ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/server/Protocol.cpp: the bodies of POST /v1/next_token,
// /v1/generate and /v1/completions. The first byte of the input picks the
// endpoint and the model's limits (sequence length, vocabulary, logits, KV
// cache), the rest is the body. A refused request must carry a 4xx status
// and a message, which is then rendered as the server would ({"error": ..},
// or a stream's error event); an accepted one must hold what the limits
// allow, and its answer is rendered from a result made of its own tokens.
// Anything else is reported as a crash.
//
//===----------------------------------------------------------------------===//

#include "Protocol.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace dtensor::server;

namespace {
[[noreturn]] void broken(const char *what) {
  std::fprintf(stderr, "server request fuzzer: %s\n", what);
  std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const uint8_t choice = data[0];
  const JobKind kind = static_cast<JobKind>(choice % 3);
  Limits limits;
  limits.seqLen = (choice & 0x08) ? 8 : 64;
  limits.vocab = (choice & 0x10) ? 50 : 32000;
  limits.hasLogits = choice & 0x20;
  limits.cache = choice & 0x40;
  const std::string body(reinterpret_cast<const char *>(data) + 1, size - 1);

  Request request;
  RequestError error;
  bool accepted = kind == JobKind::Completion
                      ? parseCompletion(body, limits, request, error)
                      : parseRequest(kind, body, limits, request, error);
  if (!accepted) {
    if (error.status < 400 || error.status > 499 || error.message.empty())
      broken("a refused request without a 4xx status and a message");
    (void)errorBody(error.message);
    (void)streamErrorEvent(error.status, error.message);
    return 0;
  }
  if (request.tokens.empty() ||
      static_cast<int64_t>(request.tokens.size()) > limits.seqLen ||
      request.maxNewTokens < 1 ||
      (kind != JobKind::NextToken &&
       static_cast<int64_t>(request.tokens.size()) + request.maxNewTokens >
           limits.seqLen))
    broken("an accepted request outside the sequence length");
  for (int64_t token : request.tokens)
    if (token < 0 || token >= limits.vocab)
      broken("an accepted token outside the vocabulary");
  for (int64_t token : request.stop)
    if (token < 0 || token >= limits.vocab)
      broken("an accepted stop token outside the vocabulary");
  if (request.logits && !limits.hasLogits)
    broken("logits accepted from a model without them");

  JobResult result;
  result.status = 200;
  result.generated = request.tokens;
  result.argmax = request.tokens;
  result.logits.assign(request.tokens.size(), 0.5f);
  result.finishReason = "length";
  if (kind == JobKind::Completion) {
    CompletionMeta meta{"cmpl-1", 0, request.model};
    (void)completionBody(request, result, meta);
    (void)completionEvent(meta, request.tokens, "");
  } else {
    (void)answerBody(request, result);
  }
  return 0;
}

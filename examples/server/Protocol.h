//===- Protocol.h - JSON requests and answers -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Validation happens on the HTTP thread, before a request is queued: a bad
// request is answered 4xx here and never reaches the ranks.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_PROTOCOL_H
#define DTENSOR_EXAMPLES_SERVER_PROTOCOL_H

#include "Job.h"

#include "dtensor/Tooling/ChatTemplate.h"
#include "dtensor/Tooling/Tokenizer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::server {

/// What a request may ask of this model.
struct Limits {
  int64_t seqLen = 0;
  int64_t vocab = 0;
  bool hasLogits = false;
  /// A KV-cache artifact: seqLen is the positions of a slot.
  bool cache = false;
};

/// A validated request.
struct Request {
  JobKind kind = JobKind::NextToken;
  std::vector<int64_t> tokens;
  int64_t maxNewTokens = 1;
  bool logits = false;
  /// Completion: stream tokens as server-sent events; stop token ids; the
  /// model name the client gave ("" if none).
  bool stream = false;
  std::vector<int64_t> stop;
  std::string model;
  /// With a tokenizer: stop strings (the text ends before the first), and
  /// `echo`: the answer's text starts with the prompt's, `promptText`.
  std::vector<std::string> stopStrings;
  bool echo = false;
  std::string promptText;
  /// Sampling (unset: greedy, the model's argmax); `n` choices; top
  /// `logprobs` per token (-1: none).
  std::optional<tooling::SamplingParams> sampling;
  int64_t n = 1;
  int logprobs = -1;
  /// /v1/chat/completions: answered as chat completions.
  bool chat = false;
};

/// The most choices (n) and top logprobs a request may ask for.
constexpr int64_t kMaxChoices = 16;
constexpr int64_t kMaxLogprobs = 20;

/// One choice of a completion: the job's result and its text.
struct ChoiceOutput {
  const JobResult *result = nullptr;
  std::string text;
};

/// What a completion answer says besides its tokens.
struct CompletionMeta {
  std::string id;      // "cmpl-<n>"
  int64_t created = 0; // Unix seconds
  std::string model;
};

/// A request the server refuses: an HTTP status (4xx) and why.
struct RequestError {
  int status = 0;
  std::string message;
};

/// Parses and checks the body of POST /v1/next_token (`kind` NextToken) or
/// /v1/generate (Generate). False with `error` set when it is refused.
bool parseRequest(JobKind kind, const std::string &body, const Limits &limits,
                  Request &request, RequestError &error);

/// Parses and checks the body of POST /v1/completions (OpenAI's
/// completions API). Without a `tokenizer` the prompt and the stop
/// sequences are token ids only; with one they may be text too.
bool parseCompletion(const std::string &body, const Limits &limits,
                     Request &request, RequestError &error,
                     const tooling::Tokenizer *tokenizer = nullptr);

/// The 200 answer of a completion that did not stream; `text` its text
/// ("" without a tokenizer; with echo, the prompt's text is put first).
std::string completionBody(const Request &request, const JobResult &result,
                           const CompletionMeta &meta,
                           const std::string &text = "");

/// The same with one choice per entry of `choices` (n > 1); the
/// `tokenizer` names the tokens of logprobs (their ids without one).
std::string completionBody(const Request &request,
                           const std::vector<ChoiceOutput> &choices,
                           const CompletionMeta &meta,
                           const tooling::Tokenizer *tokenizer);

/// One server-sent event of a streamed completion: `tokens` new tokens and
/// their `text`, and with a `finishReason` the last chunk;
/// "data: {...}\n\n".
std::string completionEvent(const CompletionMeta &meta,
                            const std::vector<int64_t> &tokens,
                            const std::string &finishReason,
                            const std::string &text = "",
                            const std::vector<TokenLogprobs> *logprobs = nullptr,
                            const tooling::Tokenizer *tokenizer = nullptr);

/// What /v1/chat/completions renders its messages with.
struct ChatSetup {
  const tooling::Tokenizer *tokenizer = nullptr;
  const tooling::ChatTemplate *chatTemplate = nullptr;
  std::string bosToken, eosToken;
};

/// Parses and checks the body of POST /v1/chat/completions: the messages
/// rendered by the chat template (add_generation_prompt true) and encoded
/// without added special tokens (the template writes them), as
/// transformers' apply_chat_template; the other fields as
/// /v1/completions' ("logprobs": true with "top_logprobs": k for logprobs,
/// max_completion_tokens for max_tokens).
bool parseChat(const std::string &body, const Limits &limits,
               const ChatSetup &setup, Request &request, RequestError &error);

/// The 200 answer of a chat completion that did not stream.
std::string chatBody(const Request &request,
                     const std::vector<ChoiceOutput> &choices,
                     const CompletionMeta &meta,
                     const tooling::Tokenizer *tokenizer);

/// One server-sent event of a streamed chat completion: the assistant's
/// role (`first`), then `text` as each token comes (with its logprobs),
/// then an empty delta with `finishReason`.
std::string chatEvent(const CompletionMeta &meta, bool first,
                      const std::vector<int64_t> &tokens,
                      const std::string &text, const std::string &finishReason,
                      const std::vector<TokenLogprobs> *logprobs,
                      const tooling::Tokenizer *tokenizer);

/// Parses POST /tokenize ({"prompt": text, "add_special_tokens": bool}) and
/// answers {"tokens": [...], "count": n, "max_model_len": seqLen}; false
/// with `error` set when it is refused.
bool tokenizeAnswer(const std::string &body, const Limits &limits,
                    const tooling::Tokenizer &tokenizer, std::string &answer,
                    RequestError &error);

/// Parses POST /detokenize ({"tokens": [...]}) and answers {"prompt":
/// text}.
bool detokenizeAnswer(const std::string &body, const Limits &limits,
                      const tooling::Tokenizer &tokenizer, std::string &answer,
                      RequestError &error);

/// The event that ends a stream whose job failed:
/// "data: {"error": {"message": ..., "type": "server_error", "code": status}}".
std::string streamErrorEvent(int status, const std::string &message);

/// The 200 answer for `request` given the job's result.
std::string answerBody(const Request &request, const JobResult &result);

/// {"error": message}.
std::string errorBody(const std::string &message);

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_PROTOCOL_H

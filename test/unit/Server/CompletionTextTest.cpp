//===- CompletionTextTest.cpp - Tests of text completions -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The text of a completion (stop strings across tokens, held-back prefixes
// of a stop string, half characters) and the requests with a tokenizer
// (text prompts, stop strings, echo, /tokenize, /detokenize), on a
// byte-level tokenizer of one token per byte (no merges) and a special
// token "<eos>".
//
//===----------------------------------------------------------------------===//

#include "CompletionText.h"
#include "Protocol.h"

#include "dtensor/Tooling/ByteLevelBpe.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace dtensor::server;
using dtensor::tooling::ByteLevelBpe;
using nlohmann::json;

namespace {

/// Byte b is token b in GPT-2's alphabet; "<eos>" is 256.
std::unique_ptr<ByteLevelBpe> byteTokenizer() {
  json vocab = json::object();
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
                     (b >= 0xAE && b <= 0xFF);
    uint32_t point = printable ? b : next++;
    std::string text;
    if (point < 0x80) {
      text += static_cast<char>(point);
    } else {
      text += static_cast<char>(0xC0 | (point >> 6));
      text += static_cast<char>(0x80 | (point & 0x3F));
    }
    vocab[text] = b;
  }
  json document = {
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"use_regex", true}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}},
      {"added_tokens",
       json::array({{{"id", 256}, {"content", "<eos>"}, {"special", true}}})},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}}};
  std::string error;
  auto tokenizer = ByteLevelBpe::fromJson(document, error);
  EXPECT_TRUE(tokenizer) << error;
  return tokenizer;
}

std::vector<int64_t> bytes(const std::string &text) {
  return std::vector<int64_t>(
      reinterpret_cast<const unsigned char *>(text.data()),
      reinterpret_cast<const unsigned char *>(text.data()) + text.size());
}

/// What `completion` sends for `ids`, one piece per token, then finish().
std::vector<std::string> feed(CompletionText &completion,
                              const std::vector<int64_t> &ids) {
  std::vector<std::string> pieces;
  for (int64_t id : ids)
    pieces.push_back(completion.add(id));
  pieces.push_back(completion.finish());
  return pieces;
}

TEST(CompletionTextTest, EndsBeforeAStopStringAcrossTokens) {
  auto tokenizer = byteTokenizer();
  CompletionText completion(*tokenizer, {"lo w", "zzz"});
  std::vector<std::string> pieces = feed(completion, bytes("hello world"));
  std::string text;
  for (const std::string &piece : pieces)
    text += piece;
  EXPECT_EQ(text, "hel");
  EXPECT_TRUE(completion.stopped());
  EXPECT_EQ(completion.tokens(), 7u); // "hello w" completes it
  // The first "l" might begin the stop string: held back until the second
  // "l" shows it does not; the second is held, then dropped with "o w".
  EXPECT_EQ(pieces[2], "");
  EXPECT_EQ(pieces[3], "l");
  EXPECT_EQ(pieces[4], "");
}

TEST(CompletionTextTest, ReleasesAHeldPrefixThatIsNotAStop) {
  auto tokenizer = byteTokenizer();
  CompletionText completion(*tokenizer, {"ab!"});
  std::vector<std::string> pieces = feed(completion, bytes("xabab"));
  EXPECT_EQ(pieces, (std::vector<std::string>{"x", "", "", "ab", "", "ab"}));
  EXPECT_FALSE(completion.stopped());
  EXPECT_EQ(completion.tokens(), 5u);
}

TEST(CompletionTextTest, SendsWholeCharactersAndNoSpecialTokens) {
  auto tokenizer = byteTokenizer();
  CompletionText completion(*tokenizer, {});
  std::vector<int64_t> ids = bytes("a\xE4\xB8\xAD");
  ids.push_back(256);
  std::vector<std::string> pieces = feed(completion, ids);
  EXPECT_EQ(pieces,
            (std::vector<std::string>{"a", "", "", "\xE4\xB8\xAD", "", ""}));
}

const Limits kLimits{/*seqLen=*/32, /*vocab=*/257, /*hasLogits=*/false,
                     /*cache=*/true};

TEST(TextRequestTest, TextPromptsStopStringsAndEcho) {
  auto tokenizer = byteTokenizer();
  Request request;
  RequestError error;
  ASSERT_TRUE(parseCompletion(
      R"({"prompt": "hi<eos>", "stop": ["\n", 7], "echo": true})", kLimits,
      request, error, tokenizer.get()))
      << error.message;
  EXPECT_EQ(request.tokens, (std::vector<int64_t>{'h', 'i', 256}));
  EXPECT_EQ(request.stopStrings, (std::vector<std::string>{"\n"}));
  EXPECT_EQ(request.stop, (std::vector<int64_t>{7}));
  EXPECT_TRUE(request.echo);
  EXPECT_EQ(request.promptText, "hi<eos>");
  ASSERT_TRUE(parseCompletion(R"({"prompt": ["ab"]})", kLimits, request, error,
                              tokenizer.get()));
  EXPECT_EQ(request.tokens, (std::vector<int64_t>{'a', 'b'}));
  // Ids echo as their text without special tokens.
  ASSERT_TRUE(parseCompletion(R"({"prompt": [104, 256], "echo": true})",
                              kLimits, request, error, tokenizer.get()));
  EXPECT_EQ(request.promptText, "h");

  JobResult result;
  result.generated = {'!', '!'};
  result.finishReason = "length";
  json body = json::parse(completionBody(request, result, {}, "!!"));
  EXPECT_EQ(body["choices"][0]["text"], "h!!");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 2);
  EXPECT_EQ(body["usage"]["completion_tokens"], 2);

  EXPECT_FALSE(parseCompletion(R"({"prompt": "", "max_tokens": 1})", kLimits,
                               request, error, tokenizer.get()));
  EXPECT_EQ(error.message, "'prompt' is empty: give at least one token id");
  EXPECT_FALSE(parseCompletion(R"({"prompt": "a", "stop": [""]})", kLimits,
                               request, error, tokenizer.get()));
  EXPECT_EQ(error.message, "stop[0] is an empty string");
  EXPECT_FALSE(parseCompletion(R"({"prompt": [1], "echo": true})", kLimits,
                               request, error));
  EXPECT_NE(error.message.find("'echo' needs a tokenizer"), std::string::npos);
  EXPECT_FALSE(parseCompletion(R"({"prompt": "a"})", kLimits, request, error));
  EXPECT_EQ(error.status, 422);
  EXPECT_NE(error.message.find("no tokenizer"), std::string::npos);
}

TEST(TextRequestTest, TokenizeAndDetokenize) {
  auto tokenizer = byteTokenizer();
  std::string answer;
  RequestError error;
  ASSERT_TRUE(tokenizeAnswer(R"({"prompt": "ab"})", kLimits, *tokenizer, answer,
                             error));
  EXPECT_EQ(json::parse(answer),
            (json{{"tokens", {97, 98}}, {"count", 2}, {"max_model_len", 32}}));
  ASSERT_TRUE(detokenizeAnswer(R"({"tokens": [97, 256, 98]})", kLimits,
                               *tokenizer, answer, error));
  EXPECT_EQ(json::parse(answer), (json{{"prompt", "a<eos>b"}}));
  EXPECT_FALSE(detokenizeAnswer(R"({"tokens": [300]})", kLimits, *tokenizer,
                                answer, error));
  EXPECT_EQ(error.message,
            "tokens[0] = 300 is outside the vocabulary [0, 257)");
  EXPECT_FALSE(
      tokenizeAnswer(R"({"text": "a"})", kLimits, *tokenizer, answer, error));
  EXPECT_EQ(error.message,
            "unknown field 'text' (expected: add_special_tokens, model, "
            "prompt)");
}

TEST(TextRequestTest, ChatRendersItsTemplate) {
  auto tokenizer = byteTokenizer();
  std::string error;
  auto chat = dtensor::tooling::ChatTemplate::parse(
      "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }};"
      "{% endfor %}{% if add_generation_prompt %}a:{% endif %}",
      error);
  ASSERT_TRUE(chat) << error;
  ChatSetup setup{tokenizer.get(), chat.get(), "<eos>", "<eos>"};
  // Logprobs need a logits output.
  const Limits withLogits{/*seqLen=*/32, /*vocab=*/257, /*hasLogits=*/true,
                          /*cache=*/false};
  Request request;
  RequestError refused;
  ASSERT_TRUE(parseChat(R"({"messages": [{"role": "user", "content": "hi"}],
                           "max_tokens": 2, "logprobs": true,
                           "top_logprobs": 3})",
                        withLogits, setup, request, refused))
      << refused.message;
  std::vector<int64_t> want = {256};
  for (char c : std::string("user:hi;a:"))
    want.push_back(c);
  EXPECT_EQ(request.tokens, want);
  EXPECT_TRUE(request.chat);
  EXPECT_EQ(request.logprobs, 3);

  JobResult result;
  result.generated = {'o', 'k'};
  result.finishReason = "length";
  json body = json::parse(chatBody(request, {{&result, "ok"}}, {}, nullptr));
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"],
            (json{{"role", "assistant"}, {"content", "ok"}}));

  EXPECT_FALSE(
      parseChat(R"({"messages": []})", kLimits, setup, request, refused));
  EXPECT_EQ(refused.status, 422);
  EXPECT_FALSE(parseChat(R"({"messages": [{"role": "user", "content": "x"}],
                            "prompt": "x"})",
                         kLimits, setup, request, refused));
  EXPECT_NE(refused.message.find("unknown field 'prompt'"), std::string::npos);
  EXPECT_EQ(refused.status, 400); // OpenAI's status for an unknown field
  ChatSetup noTemplate{tokenizer.get(), nullptr, "", ""};
  EXPECT_FALSE(parseChat(R"({"messages": [{"role": "user", "content": "x"}]})",
                         kLimits, noTemplate, request, refused));
  EXPECT_EQ(refused.status, 404);
}

} // namespace

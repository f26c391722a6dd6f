//===- SamplingRequestTest.cpp - Tests of sampling requests ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sampling fields of /v1/completions: what they set, their ranges, the
// temperature's default (OpenAI's 1 where the artifact can sample, greedy
// where it cannot), and their refusal where the artifact gives no logits (a
// KV cache without them, or no logits output); the logprobs of an answer as
// OpenAI lays them out.
//
//===----------------------------------------------------------------------===//

#include "Protocol.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace dtensor::server;
using nlohmann::json;

namespace {

const Limits kLogits{/*seqLen=*/16, /*vocab=*/100, /*hasLogits=*/true,
                     /*cache=*/false};
const Limits kCache{/*seqLen=*/16, /*vocab=*/100, /*hasLogits=*/false,
                    /*cache=*/true};
const Limits kCacheLogits{/*seqLen=*/16, /*vocab=*/100, /*hasLogits=*/true,
                          /*cache=*/true};

TEST(SamplingRequestTest, SetsTheParameters) {
  Request request;
  RequestError error;
  ASSERT_TRUE(parseCompletion(
      R"({"prompt": [1], "max_tokens": 2, "temperature": 0.5, "top_k": 5,
          "top_p": 0.9, "min_p": 0.1, "seed": 7, "n": 3, "logprobs": 2,
          "presence_penalty": 0.5, "frequency_penalty": -0.5,
          "repetition_penalty": 1.2, "logit_bias": {"4": -100}})",
      kLogits, request, error))
      << error.message;
  ASSERT_TRUE(request.sampling);
  EXPECT_EQ(request.sampling->temperature, 0.5);
  EXPECT_EQ(request.sampling->topK, 5);
  EXPECT_EQ(request.sampling->topP, 0.9);
  EXPECT_EQ(request.sampling->minP, 0.1);
  EXPECT_EQ(request.sampling->seed, 7u);
  EXPECT_EQ(request.sampling->repetitionPenalty, 1.2);
  EXPECT_EQ(request.sampling->logitBias.at(4), -100);
  EXPECT_EQ(request.n, 3);
  EXPECT_EQ(request.logprobs, 2);
  // No sampling field: OpenAI's temperature 1, nothing filtered.
  ASSERT_TRUE(parseCompletion(R"({"prompt": [1], "max_tokens": 2})", kLogits,
                              request, error));
  ASSERT_TRUE(request.sampling);
  EXPECT_EQ(request.sampling->temperature, 1.0);
  EXPECT_EQ(request.sampling->topK, 0);
  EXPECT_EQ(request.sampling->topP, 1.0);
  EXPECT_EQ(request.logprobs, -1);
  // Temperature 0: greedy, the model's own argmax.
  ASSERT_TRUE(
      parseCompletion(R"({"prompt": [1], "max_tokens": 2, "temperature": 0})",
                      kLogits, request, error));
  EXPECT_FALSE(request.sampling);
  // An argmax-only artifact decodes a request without a temperature
  // greedily.
  ASSERT_TRUE(parseCompletion(R"({"prompt": [1], "max_tokens": 2})", kCache,
                              request, error));
  EXPECT_FALSE(request.sampling);
}

TEST(SamplingRequestTest, KVCacheWithLogitsSamples) {
  Request request;
  RequestError error;
  ASSERT_TRUE(parseCompletion(
      R"({"prompt": [1], "max_tokens": 2, "temperature": 0.7, "n": 2,
          "logprobs": 1, "repetition_penalty": 1.1, "seed": 3})",
      kCacheLogits, request, error))
      << error.message;
  ASSERT_TRUE(request.sampling);
  EXPECT_EQ(request.sampling->temperature, 0.7);
  EXPECT_EQ(request.n, 2);
  EXPECT_EQ(request.logprobs, 1);
  ASSERT_TRUE(parseCompletion(R"({"prompt": [1], "max_tokens": 2})",
                              kCacheLogits, request, error));
  ASSERT_TRUE(request.sampling);
  EXPECT_EQ(request.sampling->temperature, 1.0);
}

TEST(SamplingRequestTest, RefusesOutOfRange) {
  Request request;
  RequestError error;
  auto refused = [&](const std::string &body) {
    EXPECT_FALSE(parseCompletion(body, kLogits, request, error)) << body;
    return std::to_string(error.status) + " " + error.message;
  };
  EXPECT_EQ(refused(R"({"prompt": [1], "max_tokens": 1, "temperature": 3})"),
            "400 'temperature' must be a number in [0, 2], not 3");
  EXPECT_EQ(refused(R"({"prompt": [1], "max_tokens": 1, "top_p": 0})"),
            "400 'top_p' must be a number in (0, 1], not 0");
  EXPECT_EQ(refused(R"({"prompt": [1], "max_tokens": 1, "n": 17})"),
            "400 'n' must be an integer in [1, 16], not 17");
  EXPECT_EQ(
      refused(R"({"prompt": [1], "max_tokens": 1, "logit_bias": {"x": 1}})"),
      "400 'logit_bias' key 'x' is not a token id in [0, 100)");
  EXPECT_EQ(
      refused(R"({"prompt": [1], "max_tokens": 1, "n": 2, "stream": true})"),
      "422 'n' > 1 is served without streaming only: set 'stream' to "
      "false");
}

TEST(SamplingRequestTest, NeedsLogits) {
  Request request;
  RequestError error;
  EXPECT_FALSE(
      parseCompletion(R"({"prompt": [1], "max_tokens": 1, "logprobs": 1})",
                      kCache, request, error));
  EXPECT_EQ(error.message, "penalties, logit_bias and logprobs need the "
                           "logits: the KV-cache steps of this artifact "
                           "return their argmax only; compile a plan of "
                           "gen_model_plan --kv-cache --logits-output");
  EXPECT_FALSE(
      parseCompletion(R"({"prompt": [1], "max_tokens": 1, "temperature": 0.5})",
                      kCache, request, error));
  EXPECT_EQ(error.status, 422);
  EXPECT_EQ(error.message.rfind("only greedy decoding is served: "
                                "'temperature' must be 0",
                                0),
            0u)
      << error.message;
  // Greedy with a filter that cannot change the argmax is served.
  EXPECT_TRUE(parseCompletion(
      R"({"prompt": [1], "max_tokens": 1, "temperature": 0, "top_p": 0.5})",
      kCache, request, error));
}

TEST(SamplingRequestTest, LogprobsAsOpenAILaysThemOut) {
  Request request;
  RequestError error;
  ASSERT_TRUE(
      parseCompletion(R"({"prompt": [1], "max_tokens": 2, "logprobs": 1})",
                      kLogits, request, error));
  JobResult result;
  result.generated = {4, 9};
  result.logprobs = {{-0.5, {{4, -0.5}}}, {-2.0, {{3, -0.1}}}};
  result.finishReason = "length";
  json body =
      json::parse(completionBody(request, {{&result, ""}}, {}, nullptr));
  json logprobs = body["choices"][0]["logprobs"];
  EXPECT_EQ(logprobs["tokens"], json({"4", "9"}));
  EXPECT_EQ(logprobs["token_logprobs"], json({-0.5, -2.0}));
  EXPECT_EQ(logprobs["top_logprobs"], json({{{"4", -0.5}}, {{"3", -0.1}}}));
}

} // namespace

//===- CacheServerLogicTest.cpp - KV-cache serving without MPI or HTTP ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Protocol.h"
#include "SlotScheduler.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>

using namespace dtensor::server;

namespace {

const Limits kCache{/*seqLen=*/16, /*vocab=*/100, /*hasLogits=*/false,
                    /*cache=*/true};

std::shared_ptr<Job> completion(std::vector<int64_t> prompt, int64_t count,
                                std::vector<int64_t> stop = {}) {
  auto job = std::make_shared<Job>(JobKind::Completion, std::move(prompt),
                                   count, false);
  job->stop = std::move(stop);
  return job;
}

TEST(SlotScheduler, PrefillThenDecodeUntilLength) {
  SlotScheduler scheduler(2);
  auto a = completion({1, 2, 3}, 3);
  std::vector<int64_t> slots = scheduler.admit({a});
  ASSERT_EQ(slots, std::vector<int64_t>{0});
  EXPECT_EQ(scheduler.freeSlots(), 1u);
  // Nothing to decode before the prefill.
  EXPECT_TRUE(scheduler.decodeRows().empty());
  EXPECT_EQ(scheduler.prefilled(0, {7, 8, 9}), 1u);
  auto rows = scheduler.decodeRows();
  ASSERT_EQ(rows.size(), 1u);
  // The first new token (9) goes to position 3 of slot 0.
  EXPECT_EQ(rows[0].slot, 0);
  EXPECT_EQ(rows[0].token, 9);
  EXPECT_EQ(rows[0].position, 3);
  scheduler.decoded(rows, {11});
  rows = scheduler.decodeRows();
  EXPECT_EQ(rows[0].token, 11);
  EXPECT_EQ(rows[0].position, 4);
  scheduler.decoded(rows, {12});
  JobResult result = a->wait();
  EXPECT_EQ(result.generated, (std::vector<int64_t>{9, 11, 12}));
  EXPECT_EQ(result.finishReason, "length");
  EXPECT_TRUE(scheduler.idle());
  EXPECT_EQ(scheduler.firstTokenSeconds.size(), 1u);
  EXPECT_EQ(scheduler.interTokenSeconds.size(), 2u);
}

TEST(SlotScheduler, StopTokensEndWithoutTheToken) {
  SlotScheduler scheduler(1);
  auto a = completion({1}, 10, {5});
  scheduler.admit({a});
  scheduler.prefilled(0, {4});
  scheduler.decoded(scheduler.decodeRows(), {5});
  JobResult result = a->wait();
  EXPECT_EQ(result.generated, std::vector<int64_t>{4});
  EXPECT_EQ(result.finishReason, "stop");
  EXPECT_EQ(scheduler.freeSlots(), 1u);
}

TEST(SlotScheduler, JobsJoinAndLeaveBetweenSteps) {
  SlotScheduler scheduler(2);
  auto a = completion({1}, 2), b = completion({2, 3}, 5);
  scheduler.admit({a, b});
  scheduler.prefilled(0, {10});
  scheduler.prefilled(1, {20, 21});
  scheduler.decoded(scheduler.decodeRows(), {11, 22});
  // a is done: its slot takes c while b goes on.
  EXPECT_EQ(a->wait().generated, (std::vector<int64_t>{10, 11}));
  auto c = completion({4}, 1);
  EXPECT_EQ(scheduler.admit({c}), std::vector<int64_t>{0});
  // Only b decodes until c is prefilled; a one-token job ends at prefill.
  EXPECT_EQ(scheduler.decodeRows().size(), 1u);
  scheduler.prefilled(0, {30});
  EXPECT_EQ(c->wait().generated, std::vector<int64_t>{30});
  auto rows = scheduler.decodeRows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].slot, 1);
  EXPECT_EQ(rows[0].position, 3);
}

TEST(SlotScheduler, NextTokenJobsEndAtPrefillWithEveryArgmax) {
  SlotScheduler scheduler(1);
  auto job = std::make_shared<Job>(JobKind::NextToken,
                                   std::vector<int64_t>{1, 2}, 1, false);
  scheduler.admit({job});
  scheduler.prefilled(0, {5, 6});
  JobResult result = job->wait();
  EXPECT_EQ(result.argmax, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(result.generated, std::vector<int64_t>{6});
  EXPECT_TRUE(scheduler.idle());
}

TEST(SlotScheduler, CancelledAndFailedJobsFreeTheirSlots) {
  SlotScheduler scheduler(2);
  auto a = completion({1}, 9), b = completion({2}, 9);
  scheduler.admit({a, b});
  scheduler.prefilled(0, {3});
  a->cancel();
  EXPECT_EQ(scheduler.dropCancelled(), 1u);
  EXPECT_EQ(a->wait().finishReason, "cancelled");
  EXPECT_EQ(scheduler.freeSlots(), 1u);
  scheduler.failAll(503, "step 4 failed");
  JobResult result = b->wait();
  EXPECT_EQ(result.status, 503);
  EXPECT_EQ(result.error, "step 4 failed");
  EXPECT_TRUE(scheduler.idle());
}

TEST(SlotScheduler, StreamsSeeEachTokenAsItComes) {
  SlotScheduler scheduler(1);
  auto a = completion({1}, 2);
  scheduler.admit({a});
  scheduler.prefilled(0, {7});
  size_t seen = 0;
  std::vector<int64_t> tokens;
  JobResult result;
  EXPECT_FALSE(a->next(seen, tokens, result, std::chrono::milliseconds(0)));
  EXPECT_EQ(tokens, std::vector<int64_t>{7});
  scheduler.decoded(scheduler.decodeRows(), {8});
  EXPECT_TRUE(a->next(seen, tokens, result, std::chrono::milliseconds(0)));
  EXPECT_EQ(tokens, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(result.finishReason, "length");
}

/// A job that samples with `seed` (temperature 0.8, top-k 3, repetition
/// penalty) and reports 2 logprobs.
std::shared_ptr<Job> sampling(std::vector<int64_t> prompt, int64_t count,
                              uint64_t seed) {
  auto job = completion(std::move(prompt), count);
  dtensor::tooling::SamplingParams params;
  params.temperature = 0.8;
  params.topK = 3;
  params.repetitionPenalty = 1.3;
  params.seed = seed;
  job->sampling = params;
  job->logprobs = 2;
  return job;
}

TEST(SlotScheduler, SamplingJobsDrawFromTheirRowsLogits) {
  const int64_t vocab = 6;
  // Two positions' logits per row: the prefill's, then the decode's.
  const std::vector<float> first = {0.1f, 2.0f, 1.9f, -1.0f, 1.8f, 0.0f};
  const std::vector<float> second = {1.0f, 0.5f, 1.2f, 1.1f, -2.0f, 0.9f};
  auto expected = [&](const Job &job) {
    std::vector<int64_t> generated;
    generated.push_back(dtensor::tooling::sampleToken(
        first.data(), vocab, *job.sampling, job.prompt, generated, 0));
    generated.push_back(dtensor::tooling::sampleToken(
        second.data(), vocab, *job.sampling, job.prompt, generated, 0));
    return generated;
  };
  // Alone in slot 0.
  SlotScheduler alone(2, vocab);
  auto a = sampling({1, 2}, 2, 42);
  alone.admit({a});
  EXPECT_TRUE(alone.wantsLogits(0));
  alone.prefilled(0, {5, 5}, first);
  auto rows = alone.decodeRows();
  EXPECT_TRUE(alone.wantsLogits(rows));
  alone.decoded(rows, {5}, second);
  JobResult result = a->wait();
  EXPECT_EQ(result.generated, expected(*a));
  ASSERT_EQ(result.logprobs.size(), 2u);
  EXPECT_NEAR(
      result.logprobs[0].logprob,
      dtensor::tooling::logSoftmax(first.data(), vocab)[result.generated[0]],
      1e-12);
  EXPECT_EQ(result.logprobs[0].top.size(), 2u);
  EXPECT_EQ(result.logprobs[0].top[0].first, 1); // the largest logit
  // Batched in slot 1 behind a greedy job, which needs no logits and takes
  // the argmax given.
  SlotScheduler batched(2, vocab);
  auto greedy = completion({3}, 2);
  auto b = sampling({1, 2}, 2, 42);
  batched.admit({greedy, b});
  EXPECT_FALSE(batched.wantsLogits(0));
  EXPECT_TRUE(batched.wantsLogits(1));
  batched.prefilled(0, {4});
  batched.prefilled(1, {5, 5}, first);
  rows = batched.decodeRows();
  ASSERT_EQ(rows.size(), 2u);
  std::vector<float> both(second.size() * 2, 0.0f);
  std::copy(second.begin(), second.end(), both.begin() + vocab);
  batched.decoded(rows, {4, 5}, both);
  EXPECT_EQ(greedy->wait().generated, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(b->wait().generated, result.generated);
}

TEST(SlotScheduler, NextTokenWithLogitsGetsThoseAfterTheLastPromptToken) {
  SlotScheduler scheduler(1, 3);
  auto job = std::make_shared<Job>(JobKind::NextToken,
                                   std::vector<int64_t>{1, 2}, 1, true);
  scheduler.admit({job});
  EXPECT_TRUE(scheduler.wantsLogits(0));
  scheduler.prefilled(0, {5, 6}, {0.5f, -1.0f, 2.0f});
  JobResult result = job->wait();
  EXPECT_EQ(result.generated, std::vector<int64_t>{6});
  EXPECT_EQ(result.logits, (std::vector<float>{0.5f, -1.0f, 2.0f}));
}

TEST(SlotScheduler, AnArtifactWithoutLogitsFetchesNone) {
  SlotScheduler scheduler(1);
  auto a = sampling({1}, 1, 1);
  scheduler.admit({a});
  EXPECT_FALSE(scheduler.wantsLogits(0));
}

Request parsed(const std::string &body) {
  Request request;
  RequestError error;
  EXPECT_TRUE(parseCompletion(body, kCache, request, error)) << error.message;
  return request;
}

std::string refusedCompletion(const std::string &body) {
  Request request;
  RequestError error;
  EXPECT_FALSE(parseCompletion(body, kCache, request, error)) << body;
  return std::to_string(error.status) + " " + error.message;
}

TEST(Completions, AcceptsTheOpenAIForms) {
  Request request = parsed(R"({"prompt": [1, 2], "max_tokens": 3})");
  EXPECT_EQ(request.tokens, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(request.maxNewTokens, 3);
  EXPECT_FALSE(request.stream);
  request = parsed(R"({"model": "m", "prompt": [[4]], "stream": true,
                       "max_tokens": 15, "stop": 7, "temperature": 0, "n": 1,
                       "user": "u"})");
  EXPECT_EQ(request.tokens, std::vector<int64_t>{4});
  EXPECT_EQ(request.maxNewTokens, 15);
  EXPECT_TRUE(request.stream);
  EXPECT_EQ(request.stop, std::vector<int64_t>{7});
  EXPECT_EQ(request.model, "m");
}

TEST(Completions, RefusesWhatItCannotServe) {
  EXPECT_EQ(refusedCompletion(R"({"prompt": "hi"})"),
            "422 this model has no tokenizer: give 'prompt' as an array of "
            "token ids");
  EXPECT_EQ(refusedCompletion(R"({"prompt": [1], "max_tokens": 16})"),
            "422 the prompt (1 tokens) + 'max_tokens' (16) exceeds the 16 "
            "positions of a cache slot");
  EXPECT_EQ(
      refusedCompletion(R"({"prompt": [1], "max_tokens": 2, "stop": ["x"]})"),
            "422 stop strings need a tokenizer, which this model has not: "
            "give 'stop' as token ids");
  // OpenAI's default of 16 new tokens does not fit with a prompt.
  EXPECT_EQ(refusedCompletion(R"({"prompt": [1]})"),
            "422 the prompt (1 tokens) + 'max_tokens' (16, the default) "
            "exceeds the 16 positions of a cache slot");
  EXPECT_EQ(refusedCompletion(R"({"max_tokens": 1})"),
            "422 missing field 'prompt' (an array of token ids)");
}

TEST(Completions, AnswersAndEvents) {
  Request request = parsed(R"({"prompt": [1, 2], "max_tokens": 2})");
  JobResult result;
  result.status = 200;
  result.generated = {5, 6};
  result.finishReason = "length";
  CompletionMeta meta{"cmpl-3", 1700000000, "llama"};
  auto body = nlohmann::json::parse(completionBody(request, result, meta));
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["id"], "cmpl-3");
  EXPECT_EQ(body["choices"][0]["token_ids"], (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(body["choices"][0]["text"], "");
  EXPECT_EQ(body["usage"]["total_tokens"], 4);
  std::string event = completionEvent(meta, {9}, "");
  ASSERT_EQ(event.rfind("data: ", 0), 0u);
  ASSERT_EQ(event.substr(event.size() - 2), "\n\n");
  auto chunk = nlohmann::json::parse(event.substr(6));
  EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(chunk["choices"][0]["token_ids"], std::vector<int64_t>{9});
  auto error = nlohmann::json::parse(
      streamErrorEvent(503, "step 2 failed").substr(6));
  EXPECT_EQ(error["error"]["message"], "step 2 failed");
  EXPECT_EQ(error["error"]["code"], 503);
}

} // namespace

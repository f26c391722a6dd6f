//===- ServerLogicTest.cpp - dtensor-server without MPI or HTTP -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Batcher.h"
#include "Metrics.h"
#include "Protocol.h"
#include "RequestQueue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

using namespace dtensor::server;

namespace {

const Limits kLimits{/*seqLen=*/8, /*vocab=*/100, /*hasLogits=*/false};

RequestError refused(JobKind kind, const std::string &body,
                     const Limits &limits = kLimits) {
  Request request;
  RequestError error;
  EXPECT_FALSE(parseRequest(kind, body, limits, request, error)) << body;
  return error;
}

Request accepted(JobKind kind, const std::string &body,
                 const Limits &limits = kLimits) {
  Request request;
  RequestError error;
  EXPECT_TRUE(parseRequest(kind, body, limits, request, error))
      << body << ": " << error.message;
  return request;
}

std::shared_ptr<Job> job(JobKind kind, std::vector<int64_t> tokens,
                         int64_t newTokens = 1, bool logits = false) {
  return std::make_shared<Job>(kind, std::move(tokens), newTokens, logits);
}

} // namespace

TEST(Protocol, AcceptsNextTokenAndGenerate) {
  Request next = accepted(JobKind::NextToken, R"({"tokens": [0, 5, 99]})");
  EXPECT_EQ(next.tokens, (std::vector<int64_t>{0, 5, 99}));
  EXPECT_EQ(next.maxNewTokens, 1);
  EXPECT_FALSE(next.logits);
  // The whole sequence, and a prompt that leaves exactly N positions.
  accepted(JobKind::NextToken, R"({"tokens": [1, 1, 1, 1, 1, 1, 1, 1]})");
  Request generate = accepted(JobKind::Generate,
                              R"({"tokens": [1, 2, 3], "max_new_tokens": 5})");
  EXPECT_EQ(generate.maxNewTokens, 5);
  Limits withLogits = kLimits;
  withLogits.hasLogits = true;
  EXPECT_TRUE(accepted(JobKind::NextToken, R"({"tokens": [1], "logits": true})",
                       withLogits)
                  .logits);
}

TEST(Protocol, RefusesWithStatusAndMessage) {
  struct Case {
    JobKind kind;
    const char *body;
    int status;
    const char *message;
  } cases[] = {
      {JobKind::NextToken, "{\"tokens\": [1,", 400,
       "malformed JSON (byte 15): parse error at line 1, column 15"},
      {JobKind::NextToken, "", 400, "malformed JSON"},
      // Found by fuzz/ServerRequestFuzzer.cpp: a number beyond a double
      // threw out of the parser (fuzz/regressions/server-request/).
      {JobKind::NextToken, "1e999mpt\": [1], \"stop\": 3}", 400,
       "malformed JSON: number overflow parsing '1e999'"},
      {JobKind::Generate, R"({"tokens": [1], "max_new_tokens": -1e400})", 400,
       "malformed JSON: number overflow parsing '-1e400'"},
      {JobKind::NextToken, "7", 400, "must be a JSON object, not the number 7"},
      {JobKind::NextToken, "{}", 422, "missing field 'tokens'"},
      {JobKind::NextToken, R"({"tokens": {}})", 422,
       "'tokens' must be an array of token ids, not an object"},
      {JobKind::NextToken, R"({"tokens": [true]})", 422,
       "tokens[0] must be an integer token id, not a boolean"},
      {JobKind::NextToken, R"({"tokens": [1, null]})", 422,
       "tokens[1] must be an integer token id, not null"},
      {JobKind::NextToken, R"({"tokens": [1.0]})", 422,
       "tokens[0] must be an integer token id, not the number 1.0"},
      {JobKind::NextToken, R"({"tokens": []})", 422, "'tokens' is empty"},
      {JobKind::NextToken, R"({"tokens": [1,1,1,1,1,1,1,1,1]})", 422,
       "'tokens' has 9 ids; this model takes at most 8"},
      {JobKind::NextToken, R"({"tokens": [100]})", 422,
       "tokens[0] = 100 is outside the vocabulary [0, 100)"},
      {JobKind::NextToken, R"({"tokens": [-5]})", 422,
       "tokens[0] = -5 is outside the vocabulary [0, 100)"},
      // Larger than any int64: still a range error, not a wrap-around.
      {JobKind::NextToken, R"({"tokens": [18446744073709551615]})", 422,
       "tokens[0] = 18446744073709551615 is outside the vocabulary"},
      {JobKind::NextToken, R"({"tokens": [1], "max_new_tokens": 2})", 422,
       "unknown field 'max_new_tokens' (expected: tokens)"},
      {JobKind::NextToken, R"({"tokens": [1], "logits": true})", 422,
       "unknown field 'logits': this model has no logits output"},
      {JobKind::Generate, R"({"tokens": [1]})", 422,
       "missing field 'max_new_tokens'"},
      {JobKind::Generate, R"({"tokens": [1], "max_new_tokens": "2"})", 422,
       "'max_new_tokens' must be an integer, not a string"},
      {JobKind::Generate, R"({"tokens": [1], "max_new_tokens": -1})", 422,
       "'max_new_tokens' must be at least 1, not -1"},
      {JobKind::Generate, R"({"tokens": [1], "max_new_tokens": 0})", 422,
       "'max_new_tokens' must be at least 1, not 0"},
      {JobKind::Generate, R"({"tokens": [1, 2, 3], "max_new_tokens": 6})", 422,
       "'tokens' (3) + 'max_new_tokens' (6) exceeds the sequence length 8"},
      // No overflow in L + N.
      {JobKind::Generate,
       R"({"tokens": [1], "max_new_tokens": 18446744073709551615})", 422,
       "exceeds the sequence length 8"},
      {JobKind::Generate,
       R"({"tokens": [1], "max_new_tokens": 1, "logits": true})", 422,
       "logits are served by /v1/next_token only"},
  };
  for (const Case &c : cases) {
    RequestError error = refused(c.kind, c.body);
    EXPECT_EQ(error.status, c.status) << c.body;
    EXPECT_NE(error.message.find(c.message), std::string::npos)
        << c.body << " -> " << error.message;
  }
}

TEST(Protocol, AnswersAndErrorsAreJson) {
  Request next = accepted(JobKind::NextToken, R"({"tokens": [4, 5]})");
  JobResult result;
  result.status = 200;
  result.generated = {7};
  result.argmax = {6, 7};
  EXPECT_EQ(answerBody(next, result), R"({"argmax":[6,7],"next_token":7})");
  Request generate =
      accepted(JobKind::Generate, R"({"tokens": [4, 5], "max_new_tokens": 2})");
  result.generated = {7, 8};
  EXPECT_EQ(answerBody(generate, result),
            R"({"generated":[7,8],"tokens":[4,5,7,8]})");
  EXPECT_EQ(errorBody("a \"quoted\" \xff byte"),
            "{\"error\":\"a \\\"quoted\\\" \xEF\xBF\xBD byte\"}");
}

TEST(Batcher, NextTokenLeavesAfterOneStep) {
  Batcher batcher(/*rows=*/2, /*seqLen=*/4, /*vocab=*/3);
  auto a = job(JobKind::NextToken, {1, 2});
  auto b = job(JobKind::NextToken, {3}, 1, /*logits=*/true);
  batcher.admit({a, b});
  EXPECT_EQ(batcher.freeRows(), 0u);
  EXPECT_TRUE(batcher.wantsLogits());
  EXPECT_EQ(batcher.pack(), (std::vector<int64_t>{1, 2, 0, 0, 3, 0, 0, 0}));
  std::vector<int64_t> next = {10, 11, 12, 13, 20, 21, 22, 23};
  std::vector<float> logits(2 * 4 * 3);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>(i);
  EXPECT_EQ(batcher.complete(next, logits), 2u);
  EXPECT_TRUE(batcher.idle());
  JobResult ra = a->wait(), rb = b->wait();
  EXPECT_EQ(ra.status, 200);
  EXPECT_EQ(ra.generated, (std::vector<int64_t>{11}));
  EXPECT_EQ(ra.argmax, (std::vector<int64_t>{10, 11}));
  EXPECT_TRUE(ra.logits.empty());
  EXPECT_EQ(rb.generated, (std::vector<int64_t>{20}));
  // Row 1, position 0: logits[(1 * 4 + 0) * 3 ...].
  EXPECT_EQ(rb.logits, (std::vector<float>{12, 13, 14}));
}

TEST(Batcher, GenerationStaysAndRowsFreeUp) {
  Batcher batcher(2, 4, 8);
  auto gen = job(JobKind::Generate, {5}, /*newTokens=*/3);
  auto once = job(JobKind::NextToken, {6, 7});
  batcher.admit({gen, once});
  // Step 1: the generation appends its argmax at position 0.
  batcher.complete({1, 0, 0, 0, 0, 2, 0, 0}, {});
  EXPECT_EQ(batcher.active().size(), 1u);
  EXPECT_EQ(batcher.freeRows(), 1u);
  EXPECT_EQ(once->wait().generated, (std::vector<int64_t>{2}));
  // A newcomer takes the free row; the generation moved to row 0.
  auto late = job(JobKind::NextToken, {3});
  batcher.admit({late});
  EXPECT_EQ(batcher.pack(), (std::vector<int64_t>{5, 1, 0, 0, 3, 0, 0, 0}));
  batcher.complete({0, 4, 0, 0, 9, 0, 0, 0}, {});
  EXPECT_EQ(late->wait().generated, (std::vector<int64_t>{9}));
  EXPECT_EQ(batcher.pack(), (std::vector<int64_t>{5, 1, 4, 0, 0, 0, 0, 0}));
  batcher.complete({0, 0, 6, 0, 0, 0, 0, 0}, {});
  EXPECT_TRUE(batcher.idle());
  JobResult result = gen->wait();
  EXPECT_EQ(result.status, 200);
  EXPECT_EQ(result.generated, (std::vector<int64_t>{1, 4, 6}));
}

TEST(Batcher, FailAllAnswersOnce) {
  Batcher batcher(2, 4, 8);
  auto a = job(JobKind::Generate, {1}, 2);
  batcher.admit({a});
  batcher.failAll(503, "step 0 failed: boom");
  EXPECT_TRUE(batcher.idle());
  // A later answer (the watchdog's, say) does not replace the first.
  JobResult late;
  late.status = 200;
  EXPECT_FALSE(a->finish(late));
  JobResult result = a->wait();
  EXPECT_EQ(result.status, 503);
  EXPECT_EQ(result.error, "step 0 failed: boom");
}

TEST(RequestQueue, TakesUpToMaxAndWaitsForCompany) {
  RequestQueue queue;
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(queue.push(job(JobKind::NextToken, {i})));
  EXPECT_EQ(queue.take(2, std::chrono::milliseconds(0), false).size(), 2u);
  EXPECT_EQ(queue.depth(), 1u);
  // One queued, room for two: a blocking take waits for a second one.
  std::thread pusher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    queue.push(job(JobKind::NextToken, {9}));
  });
  auto taken = queue.take(2, std::chrono::seconds(10), true);
  pusher.join();
  EXPECT_EQ(taken.size(), 2u);
  // Nobody comes: the wait ends at the deadline with what is there.
  queue.push(job(JobKind::NextToken, {1}));
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(queue.take(2, std::chrono::milliseconds(30), true).size(), 1u);
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(30));
}

TEST(RequestQueue, CloseRefusesPushesAndWakesTake) {
  RequestQueue queue;
  EXPECT_TRUE(queue.push(job(JobKind::NextToken, {1})));
  queue.close();
  EXPECT_FALSE(queue.push(job(JobKind::NextToken, {2})));
  // What was queued can still be taken (a drain serves it), then nothing.
  EXPECT_EQ(queue.take(4, std::chrono::seconds(10), true).size(), 1u);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(queue.take(4, std::chrono::seconds(10), true).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Metrics, RendersCountersAndHistograms) {
  Metrics metrics(/*batch=*/2, /*seqLen=*/16, /*ranks=*/2);
  metrics.countRequest("/v1/next_token", 200);
  metrics.countRequest("/v1/next_token", 200);
  metrics.countRequest("/v1/generate", 422);
  metrics.countStep(2, 0.002, 2);
  metrics.countStep(1, 0.02, 1);
  std::string text = metrics.render(3, 1, true);
  for (const char *line : {
           "dtensor_server_requests_total{endpoint=\"/v1/next_token\","
           "code=\"200\"} 2\n",
           "dtensor_server_requests_total{endpoint=\"/v1/generate\","
           "code=\"422\"} 1\n",
           "dtensor_server_queue_depth 3\n",
           "dtensor_server_active_rows 1\n",
           "dtensor_server_steps_total 2\n",
           "dtensor_server_tokens_total 3\n",
           "dtensor_server_batch_rows_bucket{le=\"1\"} 1\n",
           "dtensor_server_batch_rows_bucket{le=\"2\"} 2\n",
           "dtensor_server_batch_rows_sum 3\n",
           "dtensor_server_step_seconds_bucket{le=\"0.0025\"} 1\n",
           "dtensor_server_step_seconds_bucket{le=\"0.025\"} 2\n",
           "dtensor_server_step_seconds_count 2\n",
           "dtensor_server_healthy 1\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << line << "in\n" << text;
}

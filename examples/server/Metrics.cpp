//===- Metrics.cpp - Counters for GET /metrics ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Metrics.h"

#include <algorithm>
#include <cstdio>

namespace dtensor::server {

namespace {

// Step latency buckets in seconds (upper bounds; +Inf is implied).
const double kLatencyBounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                 0.025,  0.05,  0.1,    0.25,  0.5,
                                 1,      2.5,   5,      10};
constexpr size_t kLatencyBuckets =
    sizeof(kLatencyBounds) / sizeof(kLatencyBounds[0]);

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

void header(std::string &out, const char *name, const char *type,
            const char *help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " +
         type + "\n";
}

/// tokens/s is measured over this many seconds of steps.
constexpr double kRateWindow = 10.0;

} // namespace

void Metrics::Histogram::add(double seconds) {
  if (buckets.empty())
    buckets.assign(kLatencyBuckets, 0);
  for (size_t i = 0; i < kLatencyBuckets; ++i)
    if (seconds <= kLatencyBounds[i])
      ++buckets[i];
  ++count;
  sum += seconds;
}

void Metrics::Histogram::render(std::string &out, const char *name) const {
  for (size_t i = 0; i < kLatencyBuckets; ++i)
    out += std::string(name) + "_bucket{le=\"" + number(kLatencyBounds[i]) +
           "\"} " + std::to_string(buckets.empty() ? 0 : buckets[i]) + "\n";
  out += std::string(name) + "_bucket{le=\"+Inf\"} " + std::to_string(count) +
         "\n";
  out += std::string(name) + "_sum " + number(sum) + "\n";
  out += std::string(name) + "_count " + std::to_string(count) + "\n";
}

Metrics::Metrics(int64_t batch, int64_t seqLen, int ranks)
    : batch_(batch), seqLen_(seqLen), ranks_(ranks),
      rowsCount_(static_cast<size_t>(batch), 0) {}

void Metrics::countRequest(const std::string &endpoint, int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{endpoint, status}];
}

void Metrics::countStep(size_t rows, double seconds, size_t tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++steps_;
  tokens_ += tokens;
  if (rows >= 1 && rows <= rowsCount_.size())
    ++rowsCount_[rows - 1];
  rowsSum_ += rows;
  stepLatency_.add(seconds);
  auto now = std::chrono::steady_clock::now();
  recent_.emplace_back(now, tokens);
  while (!recent_.empty() &&
         std::chrono::duration<double>(now - recent_.front().first).count() >
             kRateWindow)
    recent_.pop_front();
}

void Metrics::countTokenTimes(const std::vector<double> &firstToken,
                              const std::vector<double> &interToken) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (double seconds : firstToken)
    firstToken_.add(seconds);
  for (double seconds : interToken)
    interToken_.add(seconds);
}

void Metrics::countStepFailure() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stepFailures_;
}

std::string Metrics::render(size_t queueDepth, size_t activeRows,
                            bool healthy) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  header(out, "dtensor_server_requests_total", "counter",
         "HTTP requests answered, by endpoint and status code.");
  for (const auto &[key, count] : requests_)
    out += "dtensor_server_requests_total{endpoint=\"" + key.first +
           "\",code=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(count) + "\n";

  header(out, "dtensor_server_queue_depth", "gauge",
         "Requests waiting for a row of the batch.");
  out += "dtensor_server_queue_depth " + std::to_string(queueDepth) + "\n";
  header(out, "dtensor_server_active_rows", "gauge",
         "Rows of the batch held by requests in progress.");
  out += "dtensor_server_active_rows " + std::to_string(activeRows) + "\n";

  header(out, "dtensor_server_steps_total", "counter",
         "Steps run on every rank.");
  out += "dtensor_server_steps_total " + std::to_string(steps_) + "\n";
  header(out, "dtensor_server_step_failures_total", "counter",
         "Steps that failed on some rank.");
  out += "dtensor_server_step_failures_total " + std::to_string(stepFailures_) +
         "\n";
  header(out, "dtensor_server_tokens_total", "counter",
         "Tokens produced (one per busy row and step).");
  out += "dtensor_server_tokens_total " + std::to_string(tokens_) + "\n";

  header(out, "dtensor_server_batch_rows", "histogram",
         "Busy rows per step (the compiled batch is the largest bucket).");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < rowsCount_.size(); ++i) {
    cumulative += rowsCount_[i];
    out += "dtensor_server_batch_rows_bucket{le=\"" + std::to_string(i + 1) +
           "\"} " + std::to_string(cumulative) + "\n";
  }
  out += "dtensor_server_batch_rows_bucket{le=\"+Inf\"} " +
         std::to_string(steps_) + "\n";
  out += "dtensor_server_batch_rows_sum " + std::to_string(rowsSum_) + "\n";
  out += "dtensor_server_batch_rows_count " + std::to_string(steps_) + "\n";

  header(out, "dtensor_server_step_seconds", "histogram",
         "Wall time of a step on rank 0: broadcast, set, run, get.");
  stepLatency_.render(out, "dtensor_server_step_seconds");
  header(out, "dtensor_server_time_to_first_token_seconds", "histogram",
         "From a request's arrival to its first token.");
  firstToken_.render(out, "dtensor_server_time_to_first_token_seconds");
  header(out, "dtensor_server_inter_token_seconds", "histogram",
         "Between two tokens of one request.");
  interToken_.render(out, "dtensor_server_inter_token_seconds");
  header(out, "dtensor_server_tokens_per_second", "gauge",
         "Tokens produced per second over the last 10 s of steps.");
  size_t windowTokens = 0;
  for (const auto &entry : recent_)
    windowTokens += entry.second;
  double window = 0;
  if (!recent_.empty())
    window = std::max(
        std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                      recent_.front().first)
            .count(),
        1e-3);
  out += "dtensor_server_tokens_per_second " +
         number(window > 0 ? windowTokens / window : 0.0) + "\n";
  header(out, "dtensor_server_slot_occupancy", "gauge",
         "Rows (KV-cache slots) held by requests, over the compiled batch.");
  out += "dtensor_server_slot_occupancy " +
         number(batch_ > 0 ? static_cast<double>(activeRows) / batch_ : 0.0) +
         "\n";

  header(out, "dtensor_server_info", "gauge",
         "The compiled shape and the ranks (value 1).");
  out += "dtensor_server_info{batch=\"" + std::to_string(batch_) +
         "\",seq_len=\"" + std::to_string(seqLen_) + "\",ranks=\"" +
         std::to_string(ranks_) + "\"} 1\n";
  header(out, "dtensor_server_healthy", "gauge",
         "1 while serving, 0 once failed or shutting down.");
  out += std::string("dtensor_server_healthy ") + (healthy ? "1" : "0") + "\n";
  return out;
}

} // namespace dtensor::server

//===- Metrics.h - Counters for GET /metrics --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prometheus text exposition (version 0.0.4): requests by endpoint and
// status code, steps, rows per step, step latency; with a KV cache also
// time to first token, inter-token latency, tokens/s and slot occupancy. Updated from the HTTP
// threads and the main thread, hence one lock.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_METRICS_H
#define DTENSOR_EXAMPLES_SERVER_METRICS_H

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace dtensor::server {

class Metrics {
public:
  /// `batch` is the compiled batch size (the rows histogram's buckets).
  Metrics(int64_t batch, int64_t seqLen, int ranks);

  void countRequest(const std::string &endpoint, int status);
  /// A step of `rows` busy rows that took `seconds` and produced `tokens`.
  void countStep(size_t rows, double seconds, size_t tokens);
  void countStepFailure();
  /// Times to first token (queued to first token) and gaps between tokens
  /// of one request, in seconds.
  void countTokenTimes(const std::vector<double> &firstToken,
                       const std::vector<double> &interToken);

  /// The exposition; gauges are passed in (they live elsewhere).
  std::string render(size_t queueDepth, size_t activeRows, bool healthy) const;

private:
  mutable std::mutex mutex_;
  int64_t batch_;
  int64_t seqLen_;
  int ranks_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  uint64_t steps_ = 0;
  uint64_t stepFailures_ = 0;
  uint64_t tokens_ = 0;
  std::vector<uint64_t> rowsCount_; // index r: steps with r + 1 rows
  uint64_t rowsSum_ = 0;
  /// A histogram over the latency buckets.
  struct Histogram {
    std::vector<uint64_t> buckets;
    uint64_t count = 0;
    double sum = 0;
    void add(double seconds);
    void render(std::string &out, const char *name) const;
  };
  Histogram stepLatency_, firstToken_, interToken_;
  /// (when, tokens) of the steps of the last kRateWindow seconds.
  std::deque<std::pair<std::chrono::steady_clock::time_point, size_t>>
      recent_;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_METRICS_H

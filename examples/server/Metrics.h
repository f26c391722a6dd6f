//===- Metrics.h - Counters for GET /metrics --------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Prometheus text exposition (version 0.0.4): requests by endpoint and
// status code, steps, rows per step, step latency. Updated from the HTTP
// threads and the main thread, hence one lock.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_METRICS_H
#define DTENSOR_EXAMPLES_SERVER_METRICS_H

#include <cstdint>
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
  std::vector<uint64_t> latencyBuckets_;
  double latencySum_ = 0;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_METRICS_H

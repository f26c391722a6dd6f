//===- StepWatchdog.h - A bound on each step's wall time --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A stuck rank leaves rank 0's main thread blocked inside MPI, where nothing
// on that thread can notice. This thread does: past the timeout it calls
// the handler with the step's jobs (which answers them and aborts the job).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_STEPWATCHDOG_H
#define DTENSOR_EXAMPLES_SERVER_STEPWATCHDOG_H

#include "Job.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dtensor::server {

class StepWatchdog {
public:
  using Jobs = std::vector<std::shared_ptr<Job>>;
  using Handler = std::function<void(int64_t step, const Jobs &jobs)>;

  /// `timeoutS` 0 never fires (and starts no thread).
  StepWatchdog(double timeoutS, Handler onTimeout);
  ~StepWatchdog();
  StepWatchdog(const StepWatchdog &) = delete;
  StepWatchdog &operator=(const StepWatchdog &) = delete;

  /// Step `step` on `jobs` starts now.
  void arm(int64_t step, const Jobs &jobs);
  /// It ended.
  void disarm();

private:
  void watch();

  std::chrono::duration<double> timeout_;
  Handler onTimeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool stopping_ = false;
  int64_t step_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  Jobs jobs_;
  std::thread thread_;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_STEPWATCHDOG_H

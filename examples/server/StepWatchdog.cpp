//===- StepWatchdog.cpp - A bound on each step's wall time ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "StepWatchdog.h"

namespace dtensor::server {

StepWatchdog::StepWatchdog(double timeoutS, Handler onTimeout)
    : timeout_(timeoutS), onTimeout_(std::move(onTimeout)) {
  if (timeoutS > 0)
    thread_ = std::thread([this] { watch(); });
}

StepWatchdog::~StepWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void StepWatchdog::arm(int64_t step, const Jobs &jobs) {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = true;
  step_ = step;
  jobs_ = jobs;
  deadline_ =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout_);
  changed_.notify_all();
}

void StepWatchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
  jobs_.clear();
}

void StepWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < deadline_) {
      changed_.wait_until(lock, deadline_);
      continue;
    }
    // Timed out. The handler does not return when it aborts the job; run it
    // unlocked all the same so that arm/disarm never wait on it.
    int64_t step = step_;
    Jobs jobs = std::move(jobs_);
    armed_ = false;
    lock.unlock();
    onTimeout_(step, jobs);
    lock.lock();
  }
}

} // namespace dtensor::server

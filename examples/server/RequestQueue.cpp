//===- RequestQueue.cpp - Jobs waiting for a row of the batch -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "RequestQueue.h"

namespace dtensor::server {

bool RequestQueue::push(JobPtr job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_)
      return false;
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
  return true;
}

std::vector<RequestQueue::JobPtr>
RequestQueue::take(size_t max, std::chrono::milliseconds batchWait,
                   bool block) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (block) {
    changed_.wait(lock, [&] { return !jobs_.empty() || closed_; });
    // One request is here: give others a moment to share the step, unless
    // the batch is full already or no more can come.
    auto deadline = std::chrono::steady_clock::now() + batchWait;
    changed_.wait_until(lock, deadline,
                        [&] { return jobs_.size() >= max || closed_; });
  }
  std::vector<JobPtr> taken;
  while (!jobs_.empty() && taken.size() < max) {
    taken.push_back(std::move(jobs_.front()));
    jobs_.pop_front();
  }
  return taken;
}

void RequestQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

bool RequestQueue::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::vector<RequestQueue::JobPtr> RequestQueue::drain() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<JobPtr> all(std::make_move_iterator(jobs_.begin()),
                          std::make_move_iterator(jobs_.end()));
  jobs_.clear();
  return all;
}

size_t RequestQueue::depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

} // namespace dtensor::server

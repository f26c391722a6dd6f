//===- RequestQueue.h - Jobs waiting for a row of the batch -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// HTTP threads push; the main thread takes up to the free rows of the next
// step. Closing stops new pushes (shutdown, failure) while what is queued
// can still be taken or failed.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_REQUESTQUEUE_H
#define DTENSOR_EXAMPLES_SERVER_REQUESTQUEUE_H

#include "Job.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace dtensor::server {

class RequestQueue {
public:
  using JobPtr = std::shared_ptr<Job>;

  /// False once the queue is closed: the caller answers 503 itself.
  bool push(JobPtr job);

  /// Up to `max` jobs. With `block`, waits until one is queued or the queue
  /// is closed, then up to `batchWait` more for the rest of `max`; without,
  /// takes what is there.
  std::vector<JobPtr> take(size_t max, std::chrono::milliseconds batchWait,
                           bool block);

  /// No more pushes; wakes a blocked take().
  void close();
  bool closed() const;

  /// Removes and returns everything queued.
  std::vector<JobPtr> drain();

  size_t depth() const;

private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<JobPtr> jobs_;
  bool closed_ = false;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_REQUESTQUEUE_H

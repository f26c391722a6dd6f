//===- Health.h - Serving, draining or failed -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Read by the HTTP threads (GET /health, new requests), changed by the main
// thread, the signal thread and the step watchdog.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_HEALTH_H
#define DTENSOR_EXAMPLES_SERVER_HEALTH_H

#include <mutex>
#include <string>

namespace dtensor::server {

class Health {
public:
  enum class State { Serving, Draining, Failed };

  /// Shutting down: queued requests finish, new ones are refused. A failed
  /// server stays failed.
  void drain(const std::string &reason) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ == State::Serving) {
      state_ = State::Draining;
      message_ = reason;
    }
  }

  void fail(const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != State::Failed) {
      state_ = State::Failed;
      message_ = message;
    }
  }

  State state() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return state_;
  }

  /// Why the server is not serving ("" while it is).
  std::string message() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return message_;
  }

private:
  mutable std::mutex mutex_;
  State state_ = State::Serving;
  std::string message_;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_HEALTH_H

//===- SignalWatcher.h - SIGINT and SIGTERM on a thread ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// blockShutdownSignals() must run before MPI_Init and before any thread
// starts, so that every thread inherits the mask; the watcher then takes
// the signals synchronously with sigtimedwait, where any code may run
// (a handler could only set a flag).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_EXAMPLES_SERVER_SIGNALWATCHER_H
#define DTENSOR_EXAMPLES_SERVER_SIGNALWATCHER_H

#include <atomic>
#include <functional>
#include <thread>

namespace dtensor::server {

/// Blocks SIGINT and SIGTERM in the calling thread (and those it starts)
/// and ignores SIGPIPE (a client that hangs up must not kill the server).
void blockShutdownSignals();

/// Gives SIGINT and SIGTERM their default action again in the calling
/// thread (the ranks other than 0, which mpirun may terminate).
void unblockShutdownSignals();

class SignalWatcher {
public:
  explicit SignalWatcher(std::function<void(int signal)> onSignal);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher &) = delete;
  SignalWatcher &operator=(const SignalWatcher &) = delete;

private:
  std::function<void(int)> onSignal_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_SIGNALWATCHER_H

//===- SignalWatcher.cpp - SIGINT and SIGTERM on a thread -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "SignalWatcher.h"

#include <csignal>
#include <ctime>
#include <pthread.h>

namespace dtensor::server {

namespace {

sigset_t shutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

} // namespace

void blockShutdownSignals() {
  sigset_t set = shutdownSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

void unblockShutdownSignals() {
  sigset_t set = shutdownSignals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

SignalWatcher::SignalWatcher(std::function<void(int)> onSignal)
    : onSignal_(std::move(onSignal)) {
  thread_ = std::thread([this] {
    sigset_t set = shutdownSignals();
    // Wake up now and then to notice the destructor.
    timespec interval{0, 100 * 1000 * 1000};
    while (!stopping_) {
      int signal = sigtimedwait(&set, nullptr, &interval);
      if (signal > 0)
        onSignal_(signal);
    }
  });
}

SignalWatcher::~SignalWatcher() {
  stopping_ = true;
  thread_.join();
}

} // namespace dtensor::server

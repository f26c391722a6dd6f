//===- FaultInjection.cpp - DTENSOR_TEST_FAULT ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "FaultInjection.h"

#include "Context.h"
#include "Program.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <unistd.h>

namespace dtensor::rt {

namespace {

struct Loaded {
  FaultSetting setting;
  Status status;
};

const Loaded &loaded() {
  static const Loaded once = [] {
    Loaded result;
    result.status = parseFaultSetting(std::getenv(kFaultVariable), result.setting);
    if (!result.status.ok())
      result.setting.armed = false;
    return result;
  }();
  return once;
}

/// The index of the step being run (-1 before the first).
std::atomic<int64_t> currentStep{-1};

} // namespace

Status loadFaultSetting() { return loaded().status; }

void countFaultStep() { currentStep.fetch_add(1); }

void faultPoint(dtensor_program &program, FaultPoint point, const char *op) {
  const FaultSetting &setting = loaded().setting;
  if (!setting.armed || setting.point != point ||
      currentStep.load() != setting.step ||
      program.context->world->rank() != setting.rank)
    return;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  char line[256];
  int length = std::snprintf(
      line, sizeof(line),
      "dtensor: %s: rank %d kills itself (SIGKILL) at step %lld in %s (%s) "
      "at monotonic %lld.%06ld s\n",
      kFaultVariable, setting.rank, static_cast<long long>(setting.step), op,
      point == FaultPoint::Collective ? "collective" : "compute",
      static_cast<long long>(now.tv_sec), now.tv_nsec / 1000);
  if (length > 0) {
    ssize_t ignored = ::write(STDERR_FILENO, line, static_cast<size_t>(length));
    (void)ignored;
  }
  ::kill(::getpid(), SIGKILL);
}

} // namespace dtensor::rt

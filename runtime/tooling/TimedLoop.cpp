//===- TimedLoop.cpp - A run session's warmup and timed steps -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/TimedLoop.h"

#include "dtensor/Tooling/RunRanks.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace dtensor::tooling {

dtensor_status runTimedLoop(dtensor_program *program, int warmup, int iters,
                            bool trace, RunRanks &ranks,
                            std::vector<double> &timesMs) {
  for (int i = 0; i < warmup; ++i)
    if (dtensor_status status = dtensor_program_run(program))
      return status;
  if (trace) {
    ranks.barrier();
    dtensor_program_set_tracing(program, 1);
  }
  for (int i = 0; i < iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (dtensor_status status = dtensor_program_run(program))
      return status;
    timesMs.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  return DTENSOR_OK;
}

TimeSummary summarizeTimes(std::vector<double> timesMs) {
  if (timesMs.empty())
    return {};
  std::sort(timesMs.begin(), timesMs.end());
  return {timesMs[timesMs.size() / 2], timesMs.front()};
}

std::string describeStepTimes(int steps, int worldSize,
                              const TimeSummary &times) {
  auto print = [&](char *buffer, size_t size) {
    return std::snprintf(
        buffer, size, "ran %d step%s on %d rank%s: median %.3f ms, min %.3f ms",
        steps, steps == 1 ? "" : "s", worldSize, worldSize == 1 ? "" : "s",
        times.median, times.min);
  };
  std::string line(static_cast<size_t>(print(nullptr, 0)) + 1, '\0');
  print(line.data(), line.size());
  line.pop_back();
  return line;
}

} // namespace dtensor::tooling

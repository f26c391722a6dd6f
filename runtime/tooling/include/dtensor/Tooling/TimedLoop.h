//===- TimedLoop.h - A run session's warmup and timed steps -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The steps a run session runs: untimed warmup steps, then the timed ones,
// each timed on its own (wall clock, in milliseconds), optionally traced
// from one start for all ranks; and the line that sums up their times.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_TIMEDLOOP_H
#define DTENSOR_TOOLING_TIMEDLOOP_H

#include "dtensor/runtime.h"

#include <string>
#include <vector>

namespace dtensor::tooling {

class RunRanks;

/// COLLECTIVE. Runs `warmup` steps, then `iters` steps, appending the time
/// of each of the latter to `timesMs`. With `trace`, the runtime traces the
/// timed steps, which start after a barrier so that the ranks' timelines
/// line up (within a barrier's skew). The status of the first step that
/// failed (not reported).
dtensor_status runTimedLoop(dtensor_program *program, int warmup, int iters,
                            bool trace, RunRanks &ranks,
                            std::vector<double> &timesMs);

/// The median (the upper one of an even count) and the least of some
/// times; 0 for none.
struct TimeSummary {
  double median = 0;
  double min = 0;
};
TimeSummary summarizeTimes(std::vector<double> timesMs);

/// "ran 3 steps on 2 ranks: median 1.234 ms, min 1.200 ms".
std::string describeStepTimes(int steps, int worldSize,
                              const TimeSummary &times);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_TIMEDLOOP_H

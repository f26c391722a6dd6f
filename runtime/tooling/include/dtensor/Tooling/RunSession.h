//===- RunSession.h - Running an artifact on this rank ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The work of `dtensor-run` on each rank, for the tools that run artifacts:
// read the input files (RunInputs.h), load the artifact and select its
// entry, check the names the user gave (RunTensors.h), give the inputs and
// weights their values, then either generate (RunGeneration.h) or run the
// warmup and timed steps (TimedLoop.h), write the outputs (RunOutputs.h)
// and check them against the reference (RunCheck.h). The tool parses its
// command line and starts the ranks; every step here goes through the
// runtime's C API and the tool's RunRanks.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNSESSION_H
#define DTENSOR_TOOLING_RUNSESSION_H

#include "dtensor/Tooling/RunOptions.h"

#include "dtensor/runtime.h"

#include <functional>

namespace dtensor::tooling {

class RunRanks;

/// What a tool adds to the timed steps: a trace of them, and its reports
/// of that trace.
struct RunTracing {
  /// Trace the timed steps (from one start for all ranks).
  bool enabled = false;
  /// Called on every rank after the timed steps when enabled (it may be
  /// collective). False when a report cannot be written (after a message):
  /// the run goes on with its outputs and then exits 1.
  std::function<bool(dtensor_program *)> writeReports;
};

/// Runs the whole job on this rank; returns the exit status, the same on
/// every rank except where a runtime call failed (the runtime makes the
/// others fail too).
int runSession(const RunOptions &options, RunRanks &ranks,
               const RunTracing &tracing = {});

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNSESSION_H

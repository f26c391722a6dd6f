//===- StepProgress.h - A line and a log record per step --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The progress of a run of per-step steps (dtensor-run --data, --log): after
// each step rank 0 prints a line (with --data, unless --quiet) and appends
// one JSON object to the --log file (JSON lines), each with the step, its
// batch, its time, the tokens per second of a --data batch, and the value
// of every scalar float output of the entry (a train_step's loss,
// grad_norm and lr); with --plot the loss is drawn at the end.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_STEPPROGRESS_H
#define DTENSOR_TOOLING_STEPPROGRESS_H

#include "dtensor/Tooling/RunData.h"
#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunRanks.h"
#include "dtensor/Tooling/RunTensors.h"

#include "dtensor/runtime.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace dtensor::tooling {

class StepProgress {
public:
  /// Rank `rank` 0 creates the --log file (truncating it). "" or the error.
  std::string open(const std::vector<RunTensor> &tensors,
                   const RunOptions &options, const RunData *data, int rank);

  /// COLLECTIVE when it reports. After step `step` took `ms`: fetches the
  /// scalar outputs, then rank 0 prints and logs. A failed fetch returns
  /// its status.
  dtensor_status report(dtensor_program *program, const RunRanks &ranks,
                        int step, double ms);

  /// Rank 0: after step `step`, the evaluation's mean loss: a line (with
  /// --data, unless --quiet), a log record {"step", "eval_loss"} and a
  /// point of the picture's eval series.
  void reportEvaluation(int step, double loss, const RunRanks &ranks);

  /// Rank 0: draws the --plot picture of the steps reported ("" or the
  /// error; nothing without --plot).
  std::string writePlot(const RunOptions &options) const;

  /// Rank 0: whether writing the log failed (reported when it did).
  bool failed() const { return logFailed; }

  /// One step's record as a JSON object on one line (no newline).
  static std::string
  record(int step, uint64_t batch, double ms, double tokensPerSecond,
         const std::vector<std::pair<std::string, double>> &scalars);

private:
  /// Appends one record and its newline to the log; a failure is reported
  /// once and ends the log.
  void appendLog(const std::string &line, const RunRanks &ranks);

  std::vector<const RunTensor *> scalars;
  /// Rank 0, with --plot: the plotted scalar's index and its values.
  int plotted = -1;
  std::vector<std::pair<double, double>> curve, evalCurve;
  const RunData *data = nullptr;
  /// Whether the steps report (the same on every rank); whether this rank
  /// prints.
  bool active = false, print = false;
  bool logFailed = false;
  int steps = 0;
  uint64_t firstBatch = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> log{nullptr, &std::fclose};
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_STEPPROGRESS_H

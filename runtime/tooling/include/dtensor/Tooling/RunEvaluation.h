//===- RunEvaluation.h - Evaluation between training steps ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run --eval-data: every --eval-every steps of a run (and after its
// last), the mean of the evaluation entry's loss (--eval-entry, default
// eval_step: the forward and the loss on the trained parameters) over the
// first --eval-batches batches of the evaluation files, the same batches
// each time, each rank feeding its shard as --data does. The evaluation
// leaves the run as it was: its entry selected again, and the random ops'
// step counter restored, so the training steps draw what they would draw
// without it.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNEVALUATION_H
#define DTENSOR_TOOLING_RUNEVALUATION_H

#include "dtensor/Tooling/RunData.h"
#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunRanks.h"
#include "dtensor/Tooling/RunTensors.h"

#include "dtensor/runtime.h"

#include <string>

namespace dtensor::tooling {

struct RunEvaluation {
  /// The evaluation batches (opened by the caller before any collective).
  RunData data;

  /// Selects the evaluation entry, binds the batches to it and finds its
  /// loss (its scalar float output named loss, else its only scalar float
  /// output), then selects the run's entry again. The same on every rank:
  /// "" or the error.
  std::string bind(dtensor_program *program, const RunOptions &options);

  /// COLLECTIVE. Runs the evaluation; rank 0 gets the mean loss in `mean`.
  /// A failed runtime call returns its status (not reported).
  dtensor_status evaluate(dtensor_program *program, const RunOptions &options,
                          const RunRanks &ranks, double &mean);

private:
  RunTensor loss;
  std::string runEntry;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNEVALUATION_H

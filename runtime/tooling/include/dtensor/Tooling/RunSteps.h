//===- RunSteps.h - Steps that each read their own inputs -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run --per-step: a run of several steps that feeds each step its
// own inputs and keeps each step's outputs, as a training loop feeds each
// train_step its batch and records its loss. Every --input file holds one
// value per step, stacked on a new leading dim of --warmup + --iters; every
// --output file gets one value per step, stacked likewise.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNSTEPS_H
#define DTENSOR_TOOLING_RUNSTEPS_H

#include "dtensor/Tooling/RunData.h"
#include "dtensor/Tooling/RunEvaluation.h"
#include "dtensor/Tooling/RunInputs.h"
#include "dtensor/Tooling/RunOutputs.h"
#include "dtensor/Tooling/RunTensors.h"
#include "dtensor/Tooling/StepProgress.h"

#include "dtensor/runtime.h"

#include <string>
#include <vector>

namespace dtensor::tooling {

/// Slice `step` of `array` along its leading dim.
NpyArray stepSlice(const NpyArray &array, int64_t step);

/// Checks that each global input file of `files` has a leading dim of
/// `steps` and holds `tensors`' shape after it, and gives `first` the
/// values of step 0. "" or the message naming the first file that does not.
std::string firstStepInputs(const std::vector<RunTensor> &tensors,
                            const InputFiles &files, int steps,
                            InputFiles &first);

/// COLLECTIVE. Runs `steps` steps of the selected entry, step s reading
/// slice s of each --input file and, with `data`, this rank's shards of its
/// batch s (step 0's values are already set), with `evaluation` evaluates
/// every --eval-every steps and after the last, and on rank 0 keeps the
/// value of each tensor --output names after every step, stacked in
/// `stacked`, and reports each step's progress (StepProgress.h). `timesMs`
/// gets each step's time. A failed runtime call returns its status (not
/// reported).
dtensor_status runPerStep(dtensor_program *program,
                          const std::vector<RunTensor> &tensors,
                          const RunOptions &options, const InputFiles &files,
                          const RunData *data, RunEvaluation *evaluation,
                          StepProgress &progress, const RunRanks &ranks,
                          GlobalValues &stacked, std::vector<double> &timesMs);

/// Rank 0: writes each --output file of `stacked` with the leading steps
/// dim. False after a message when a file cannot be written.
bool writeStackedOutputs(const std::vector<RunTensor> &tensors,
                         const RunOptions &options, const RunRanks &ranks,
                         const GlobalValues &stacked, int steps);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNSTEPS_H

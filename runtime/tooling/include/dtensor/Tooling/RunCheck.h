//===- RunCheck.h - A run session's check against the reference -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --check: rank 0 runs the artifact's single-device reference program, in a
// context of its own rank alone, from the inputs, weights and initial state
// the ranks ran from, and compares its outputs and final state with those
// the ranks computed (Compare.h), one line per tensor.
//
// With state, the reference runs as many steps as the ranks ran (warmup and
// timed); without, the last step alone, with the random ops' seed of that
// step.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNCHECK_H
#define DTENSOR_TOOLING_RUNCHECK_H

#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunOutputs.h"
#include "dtensor/Tooling/RunTensors.h"

#include "dtensor/runtime.h"

#include <vector>

namespace dtensor::tooling {

class RunRanks;

/// Rank 0 alone: a context on this rank's own communicator and the
/// artifact's single-device reference program in it. The caller destroys
/// both, also after a failure.
dtensor_status loadReference(const RunOptions &options, RunRanks &ranks,
                             dtensor_context **single,
                             dtensor_program **reference);

/// COLLECTIVE. With --check, the global values on rank 0 of the state
/// before the first step, which the reference starts from. False after a
/// message when a runtime call fails.
bool captureInitialState(dtensor_program *program,
                         const std::vector<RunTensor> &tensors,
                         const RunOptions &options, const RunRanks &ranks,
                         GlobalValues &initialState);

/// Rank 0: runs the reference from `initialState` and the inputs and
/// weights of `globals`, and prints the comparison of each output and
/// state with `globals`. False when one differs or the reference fails
/// (after a message).
bool checkAgainstReference(const std::vector<RunTensor> &tensors,
                           const RunOptions &options, RunRanks &ranks,
                           const GlobalValues &initialState,
                           const GlobalValues &globals);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNCHECK_H

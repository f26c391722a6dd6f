//===- RunGeneration.h - A run session's greedy generation ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --generate: instead of steps, greedy generation (Generation.h) after each
// prompt on the ranks, printed by rank 0; with --check also on the
// single-device reference program (on rank 0, with the ranks' weights),
// compared token for token.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNGENERATION_H
#define DTENSOR_TOOLING_RUNGENERATION_H

#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunTensors.h"

#include "dtensor/runtime.h"

#include <cstdint>
#include <vector>

namespace dtensor::tooling {

class RunRanks;

/// COLLECTIVE. Generates options.generate tokens after each of `prompts`
/// with `program`, whose weights are set; returns the exit status, the same
/// on every rank.
int runGeneration(dtensor_program *program, const RunOptions &options,
                  RunRanks &ranks,
                  const std::vector<std::vector<int64_t>> &prompts,
                  const std::vector<RunTensor> &tensors);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNGENERATION_H

//===- RunOutputs.h - A run session's outputs -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a run session does with the values after its steps: each rank's
// shard of the outputs --output-local names, the global values gathered on
// rank 0 (the outputs, and for --check the inputs and weights too), and on
// rank 0 the --output files, or a line summing up each output not written.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNOUTPUTS_H
#define DTENSOR_TOOLING_RUNOUTPUTS_H

#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunTensors.h"

#include "dtensor/runtime.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dtensor::tooling {

class RunRanks;

/// Global values by tensor name, on rank 0.
using GlobalValues = std::map<std::string, std::vector<uint8_t>>;

/// Writes this rank's shard of each output --output-local names (Partial
/// values unreduced). False after a message when a runtime call fails;
/// a file it cannot write sets `writeFailed` after a message and the others
/// are still written.
bool writeLocalOutputs(dtensor_program *program,
                       const std::vector<RunTensor> &tensors,
                       const RunOptions &options, const RunRanks &ranks,
                       bool &writeFailed);

/// COLLECTIVE. The global values on rank 0 of the outputs, of the state
/// --output names, and with --check of every tensor (the reference
/// program's inputs and weights). False after a message when a runtime
/// call fails.
bool fetchGlobalValues(dtensor_program *program,
                       const std::vector<RunTensor> &tensors,
                       const RunOptions &options, const RunRanks &ranks,
                       GlobalValues &globals);

/// "output y: f32[2x3] min -1 max 2.5 mean 0.25" (0s for no elements).
std::string describeOutput(const RunTensor &tensor, const uint8_t *data);

/// Rank 0: writes the --output files of the outputs and the state named,
/// and prints describeOutput for the other outputs unless quiet. False
/// when a file cannot be written (after a message).
bool writeGlobalOutputs(const std::vector<RunTensor> &tensors,
                        const RunOptions &options, const RunRanks &ranks,
                        const GlobalValues &globals);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNOUTPUTS_H

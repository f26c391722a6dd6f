//===- RunInputs.h - A run session's inputs and weights ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where a run session's inputs, weights and initial state come from: files
// (--input, --input-local, --weights), the weights' initializers, random
// values (--random-inputs), else an error naming the flags that give one.
// The files are read first, before any collective call, so that a rank
// that cannot read its file does not leave the others waiting in the
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNINPUTS_H
#define DTENSOR_TOOLING_RUNINPUTS_H

#include "dtensor/Tooling/Npy.h"
#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunTensors.h"

#include "dtensor/runtime.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dtensor::tooling {

class RunRanks;

/// `pattern` with every "{rank}" replaced by `rankNumber`.
std::string rankPath(const std::string &pattern, int rankNumber);

/// The files of this rank's inputs, read.
struct InputFiles {
  /// --input: global values.
  std::map<std::string, NpyArray> global;
  /// --input-local: this rank's shards.
  std::map<std::string, NpyArray> local;
  /// --prompt: token ids.
  std::vector<std::vector<int64_t>> prompts;
};

/// Reads this rank's input and prompt files into `files`; false after a
/// message for each that it cannot read (this rank only: the caller agrees
/// with the others).
bool readInputFiles(const RunOptions &options, const RunRanks &ranks,
                    InputFiles &files);

/// The message of a tensor that no file, initializer or --random-inputs
/// gives a value: which flags would.
std::string missingValueMessage(const RunTensor &tensor);

/// Gives every input, weight and state of `tensors` its value: the
/// initializers and the random ops' seed (--seed), the weights file, then
/// the files read, else random values (--random-inputs) or an error.
/// Initializers go first so that the weights file overrides them; it may
/// leave out weights that have one. State starts at zero unless a file
/// gives it; with --generate only the weights are set (generation sets
/// each step's inputs, the cache starts at zero). False after a message.
bool populateInputs(dtensor_program *program,
                    const std::vector<RunTensor> &tensors,
                    const RunOptions &options, const InputFiles &files,
                    const RunRanks &ranks);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNINPUTS_H

//===- RunOptions.h - What a run session is asked to do ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The settings of a run session (RunSession.h): the artifact, where its
// inputs and weights come from, the steps to run and time, the outputs to
// write and whether to check them against the single-device reference. A
// tool fills them from its command line (dtensor-run's flags are named
// next to each field); the session never parses.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNOPTIONS_H
#define DTENSOR_TOOLING_RUNOPTIONS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::tooling {

struct RunOptions {
  /// The artifact directory.
  std::string artifact;
  /// --input: NAME -> the .npy file of its global value.
  std::map<std::string, std::string> inputs;
  /// --random-inputs: the seed of the values of the inputs and weights
  /// given no file or initializer (none: such a tensor is an error).
  std::optional<uint64_t> randomSeed;
  /// --weights: a safetensors file of global weights ("": none).
  std::string weights;
  /// --seed: of the weights' initializers and the program's random ops.
  uint64_t seed = 0;
  /// --output: NAME -> the .npy file of its global value.
  std::map<std::string, std::string> outputs;
  /// --input-local, --output-local: NAME -> a path pattern holding
  /// "{rank}" (rankPath), one file per rank.
  std::map<std::string, std::string> localInputs;
  std::map<std::string, std::string> localOutputs;
  /// --check: compare with the single-device reference program.
  bool check = false;
  /// --entry: the entry point to run ("": the artifact's default).
  std::string entry;
  /// --tolerance: the largest relative error --check accepts (none: the
  /// element type's default).
  std::optional<double> tolerance;
  /// --iters, --warmup: timed steps, and untimed steps before them.
  int iters = 1;
  int warmup = 0;
  /// --per-step: each --input file holds one value per step and each
  /// --output file gets one (RunSteps.h).
  bool perStep = false;
  /// --data: token files (.npy, llm.c .bin) read as one stream into the
  /// batches of the entry's --data-tokens and --data-targets inputs, batch
  /// --data-start + s at step s, shuffled by --data-seed when given
  /// (RunData.h); implies per-step steps.
  std::vector<std::string> data;
  std::string dataTokens = "tokens", dataTargets = "targets";
  std::optional<uint64_t> dataSeed;
  uint64_t dataStart = 0;
  /// --eval-data: token files of the evaluation batches, fed to the
  /// --eval-entry's token and target inputs (the same names as --data's);
  /// every --eval-every steps (and after the last) the run evaluates the
  /// mean loss of the first --eval-batches batches (RunEvaluation.h).
  std::vector<std::string> evalData;
  std::string evalEntry = "eval_step";
  int evalEvery = 0;
  int evalBatches = 1;
  /// --log: rank 0 appends one JSON line per step (the step, its batch,
  /// its time, tokens per second, and each scalar output: loss, grad_norm,
  /// lr of a train_step) to this file ("": none).
  std::string log;
  /// --plot: after the steps rank 0 draws the loss (the scalar output named
  /// loss, else the first scalar output) against the step as an SVG file
  /// ("": none; LossCurve.h).
  std::string plot;
  /// --save-weights: after the steps, write the weights and trained
  /// parameters to this safetensors file ("": none).
  std::string saveWeights;
  /// --threads: BLAS threads per rank (0: the runtime's default).
  int threads = 0;
  /// --quiet: print errors only; --verbose: also the CPU kernels in use.
  bool quiet = false;
  bool verbose = false;
  /// --generate: new tokens per prompt (0: run steps instead), after each
  /// of the --prompt files.
  int generate = 0;
  std::vector<std::string> prompts;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNOPTIONS_H

//===- RunSession.cpp - Running an artifact on this rank ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunSession.h"

#include "dtensor/Tooling/RunCheck.h"
#include "dtensor/Tooling/RunData.h"
#include "dtensor/Tooling/RunEvaluation.h"
#include "dtensor/Tooling/RunGeneration.h"
#include "dtensor/Tooling/RunInputs.h"
#include "dtensor/Tooling/RunOutputs.h"
#include "dtensor/Tooling/RunRanks.h"
#include "dtensor/Tooling/RunSteps.h"
#include "dtensor/Tooling/RunTensors.h"
#include "dtensor/Tooling/TimedLoop.h"

#include <cstdio>

namespace dtensor::tooling {

int runSession(const RunOptions &options, RunRanks &ranks,
               const RunTracing &tracing) {
  int rank = ranks.rank();
  auto fail = [&](dtensor_status status) {
    ranks.report(dtensor_last_error(), status);
    return 1;
  };

  // Files first, before any collective call: a rank that cannot read its
  // input must not leave the others waiting in the runtime.
  InputFiles files;
  bool readOk = readInputFiles(options, ranks, files);
  RunData data;
  if (!options.data.empty())
    if (std::string error = data.open({"--data", options.data, options.dataSeed,
                                       options.dataStart, options.entry});
        !error.empty()) {
      ranks.report("--data: " + error);
      readOk = false;
    }
  RunEvaluation evaluation;
  if (!options.evalData.empty())
    if (std::string error =
            evaluation.data.open({"--eval-data", options.evalData, std::nullopt,
                                  0, options.evalEntry});
        !error.empty()) {
      ranks.report("--eval-data: " + error);
      readOk = false;
    }
  if (ranks.anyFailed(!readOk))
    return 1;

  dtensor_context_options contextOptions{sizeof(dtensor_context_options),
                                         nullptr, options.threads};
  dtensor_context *context = nullptr;
  if (dtensor_status status = dtensor_context_create(&contextOptions, &context))
    return fail(status);
  dtensor_program *program = nullptr;
  if (dtensor_status status = dtensor_program_load(
          context, options.artifact.c_str(), nullptr, &program)) {
    dtensor_context_destroy(context);
    return fail(status);
  }
  if (rank == 0 && options.verbose)
    std::printf("kernels: %s\n", dtensor_cpu_kernels());
  auto finish = [&](int code) {
    dtensor_program_destroy(program);
    dtensor_context_destroy(context);
    return code;
  };

  // Every rank checks the same name against the same manifest: rank 0 says
  // what is wrong.
  if (!options.entry.empty())
    if (dtensor_status status =
            dtensor_program_select_entry(program, options.entry.c_str())) {
      if (rank == 0)
        ranks.report(dtensor_last_error(), status);
      return finish(1);
    }
  std::vector<RunTensor> tensors = listRunTensors(program);
  // Names the user gave must exist (every rank sees the same manifest);
  // state may be set (--input) and read (--output) too.
  struct GivenNames {
    const char *flag;
    const std::map<std::string, std::string> &names;
    bool outputs;
  };
  for (const GivenNames &given :
       {GivenNames{"--input", options.inputs, false},
        GivenNames{"--input-local", options.localInputs, false},
        GivenNames{"--output", options.outputs, true},
        GivenNames{"--output-local", options.localOutputs, true}}) {
    std::string error =
        unknownTensorError(tensors, given.flag, given.names, given.outputs);
    if (!error.empty()) {
      ranks.report(error);
      return finish(1);
    }
  }

  // --per-step: the files hold every step's values; step 0's first.
  InputFiles firstStep;
  const InputFiles *initial = &files;
  int steps = options.warmup + options.iters;
  if (options.perStep) {
    std::string error = firstStepInputs(tensors, files, steps, firstStep);
    if (!error.empty()) {
      if (rank == 0)
        ranks.report(error);
      return finish(1);
    }
    initial = &firstStep;
  }
  // --data: the same files and manifest on every rank, so the same verdict;
  // this rank's shards of batch 0 are its first inputs.
  if (!options.data.empty()) {
    std::string error = data.bind(program, tensors, options);
    if (!error.empty()) {
      if (rank == 0)
        ranks.report(error);
      return finish(1);
    }
    for (auto &[name, shard] : data.shards(0))
      firstStep.local[name] = std::move(shard);
  }
  // --eval-data: bound with its entry selected, then the run's again.
  if (!options.evalData.empty()) {
    std::string error = evaluation.bind(program, options);
    if (!error.empty()) {
      if (rank == 0)
        ranks.report(error);
      return finish(1);
    }
  }
  StepProgress progress;
  {
    std::string error = progress.open(
        tensors, options, options.data.empty() ? nullptr : &data, rank);
    if (!error.empty())
      ranks.report(error);
    if (ranks.anyFailed(!error.empty()))
      return finish(1);
  }
  if (!populateInputs(program, tensors, options, *initial, ranks))
    return finish(1);
  auto saveWeights = [&]() {
    if (options.saveWeights.empty())
      return true;
    if (dtensor_status status = dtensor_program_save_weights(
            program, options.saveWeights.c_str())) {
      if (rank == 0)
        ranks.report(dtensor_last_error(), status);
      return false;
    }
    return true;
  };

  if (options.perStep) {
    GlobalValues stacked;
    std::vector<double> times;
    if (dtensor_status status =
            runPerStep(program, tensors, options, files,
                       options.data.empty() ? nullptr : &data,
                       options.evalData.empty() ? nullptr : &evaluation,
                       progress, ranks, stacked, times))
      return finish(fail(status));
    if (rank == 0 && !options.quiet)
      std::printf("%s\n", describeStepTimes(steps, ranks.worldSize(),
                                            summarizeTimes(times))
                              .c_str());
    bool writeFailed = rank == 0 && !writeStackedOutputs(tensors, options,
                                                         ranks, stacked, steps);
    writeFailed |= progress.failed();
    if (rank == 0)
      if (std::string error = progress.writePlot(options); !error.empty()) {
        ranks.report(error);
        writeFailed = true;
      }
    writeFailed |= !saveWeights();
    return finish(ranks.anyFailed(writeFailed) ? 1 : 0);
  }

  if (options.generate)
    return finish(
        runGeneration(program, options, ranks, files.prompts, tensors));

  // --check replays the steps on the reference from the same state.
  GlobalValues initialState;
  if (!captureInitialState(program, tensors, options, ranks, initialState))
    return finish(1);

  std::vector<double> times;
  if (dtensor_status status =
          runTimedLoop(program, options.warmup, options.iters, tracing.enabled,
                       ranks, times))
    return finish(fail(status));
  if (rank == 0 && !options.quiet)
    std::printf("%s\n", describeStepTimes(options.iters, ranks.worldSize(),
                                          summarizeTimes(times))
                            .c_str());

  bool writeFailed = false;
  if (tracing.enabled && tracing.writeReports)
    writeFailed |= !tracing.writeReports(program);

  if (!writeLocalOutputs(program, tensors, options, ranks, writeFailed))
    return finish(1);

  // Global values on rank 0: the outputs, and for --check also the inputs
  // and weights the reference program needs.
  GlobalValues globals;
  if (!fetchGlobalValues(program, tensors, options, ranks, globals))
    return finish(1);
  if (rank == 0 && !writeGlobalOutputs(tensors, options, ranks, globals))
    writeFailed = true;
  if (!saveWeights())
    writeFailed = true;

  bool checkFailed = false;
  if (options.check && rank == 0)
    checkFailed =
        !checkAgainstReference(tensors, options, ranks, initialState, globals);
  return finish(ranks.anyFailed(writeFailed || checkFailed) ? 1 : 0);
}

} // namespace dtensor::tooling

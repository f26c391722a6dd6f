//===- RunGeneration.cpp - A run session's greedy generation --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunGeneration.h"

#include "dtensor/Tooling/Generation.h"
#include "dtensor/Tooling/RunCheck.h"
#include "dtensor/Tooling/RunRanks.h"
#include "dtensor/Tooling/TimedLoop.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

namespace dtensor::tooling {

int runGeneration(dtensor_program *program, const RunOptions &options,
                  RunRanks &ranks,
                  const std::vector<std::vector<int64_t>> &prompts,
                  const std::vector<RunTensor> &tensors) {
  int rank = ranks.rank(), worldSize = ranks.worldSize();
  // Every rank sees the same manifest and prompts: the same verdicts, and
  // a runtime failure is agreed by the runtime. Rank 0 speaks.
  std::string error;
  std::unique_ptr<Generator> generator = Generator::create(program, error);
  std::vector<std::vector<int64_t>> generated;
  Generator::Times times;
  if (generator &&
      !generator->generate(prompts, options.generate, generated, error, &times))
    generator.reset();
  if (!generator) {
    if (rank == 0)
      ranks.report("--generate: " + error);
    return 1;
  }
  if (rank == 0) {
    for (size_t i = 0; i < generated.size(); ++i) {
      std::string line = "generated " + std::to_string(i) + ":";
      for (int64_t id : generated[i])
        line += " " + std::to_string(id);
      std::printf("%s\n", line.c_str());
    }
    if (!options.quiet)
      std::printf("generated %d token%s after %zu prompt%s on %d rank%s: "
                  "prefill %.3f ms, decode step median %.3f ms\n",
                  options.generate, options.generate == 1 ? "" : "s",
                  prompts.size(), prompts.size() == 1 ? "" : "s", worldSize,
                  worldSize == 1 ? "" : "s", times.prefill,
                  summarizeTimes(times.decode).median);
  }
  if (!options.check)
    return 0;

  // The weights, whole, on rank 0 (every rank takes part).
  std::map<std::string, std::vector<uint8_t>> weights;
  for (const RunTensor &tensor : tensors) {
    if (!tensor.isWeight())
      continue;
    if (dtensor_status status =
            fetchGlobal(program, ranks, tensor, weights[tensor.name])) {
      ranks.report(dtensor_last_error(), status);
      return 1;
    }
  }
  bool checkFailed = false;
  if (rank == 0) {
    dtensor_context *single = nullptr;
    dtensor_program *reference = nullptr;
    dtensor_status status = loadReference(options, ranks, &single, &reference);
    for (const RunTensor &tensor : tensors) {
      if (status || !tensor.isWeight())
        continue;
      const std::vector<uint8_t> &data = weights[tensor.name];
      status = dtensor_program_set(
          reference, tensor.name.c_str(), DTENSOR_GLOBAL, tensor.dtype,
          static_cast<int32_t>(tensor.shape.size()), tensor.shape.data(),
          data.data(), data.size());
    }
    if (!status)
      status = dtensor_program_set_random_state(reference, options.seed, 0);
    std::vector<std::vector<int64_t>> expected;
    std::unique_ptr<Generator> check;
    if (status)
      error = dtensor_last_error();
    else
      check = Generator::create(reference, error);
    if (!check ||
        !check->generate(prompts, options.generate, expected, error)) {
      ranks.report("--check: " + error);
      checkFailed = true;
    }
    for (size_t i = 0; i < expected.size() && !checkFailed; ++i) {
      auto [want, got] = std::mismatch(expected[i].begin(), expected[i].end(),
                                       generated[i].begin());
      if (want == expected[i].end())
        continue;
      size_t at = want - expected[i].begin();
      std::printf("check generate: prompt %zu differs at token %zu: the "
                  "reference has %lld, the ranks %lld: MISMATCH\n",
                  i, at, static_cast<long long>(*want),
                  static_cast<long long>(*got));
      checkFailed = true;
    }
    if (!checkFailed)
      std::printf("check generate: %zu prompt%s x %d tokens equal the "
                  "single-device reference: ok\n",
                  prompts.size(), prompts.size() == 1 ? "" : "s",
                  options.generate);
    dtensor_program_destroy(reference);
    dtensor_context_destroy(single);
  }
  return ranks.anyFailed(checkFailed) ? 1 : 0;
}

} // namespace dtensor::tooling

//===- RunCheck.cpp - A run session's check against the reference ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunCheck.h"

#include "dtensor/Tooling/Compare.h"
#include "dtensor/Tooling/RunRanks.h"

#include <algorithm>
#include <cstdio>

namespace dtensor::tooling {

dtensor_status loadReference(const RunOptions &options, RunRanks &ranks,
                             dtensor_context **single,
                             dtensor_program **reference) {
  dtensor_context_options selfOptions{sizeof(dtensor_context_options),
                                      ranks.selfCommunicator(),
                                      options.threads};
  dtensor_load_options loadOptions{sizeof(dtensor_load_options), 1};
  dtensor_status status = dtensor_context_create(&selfOptions, single);
  if (!status)
    status = dtensor_program_load(*single, options.artifact.c_str(),
                                  &loadOptions, reference);
  return status;
}

bool captureInitialState(dtensor_program *program,
                         const std::vector<RunTensor> &tensors,
                         const RunOptions &options, const RunRanks &ranks,
                         GlobalValues &initialState) {
  for (const RunTensor &tensor : tensors) {
    if (!options.check || !tensor.isUpdated())
      continue;
    if (dtensor_status status =
            fetchGlobal(program, ranks, tensor, initialState[tensor.name])) {
      ranks.report(dtensor_last_error(), status);
      return false;
    }
  }
  return true;
}

bool checkAgainstReference(const std::vector<RunTensor> &tensors,
                           const RunOptions &options, RunRanks &ranks,
                           const GlobalValues &initialState,
                           const GlobalValues &globals) {
  bool hasState = std::any_of(tensors.begin(), tensors.end(),
                              [](const RunTensor &t) { return t.isUpdated(); });
  bool checkFailed = false;
  dtensor_context *single = nullptr;
  dtensor_program *reference = nullptr;
  dtensor_status status = loadReference(options, ranks, &single, &reference);
  if (!status && !options.entry.empty())
    status = dtensor_program_select_entry(reference, options.entry.c_str());
  for (const RunTensor &tensor : tensors) {
    if (status || tensor.role == DTENSOR_OUTPUT)
      continue;
    const std::vector<uint8_t> &data = tensor.isUpdated()
                                           ? initialState.at(tensor.name)
                                           : globals.at(tensor.name);
    status = dtensor_program_set(reference, tensor.name.c_str(), DTENSOR_GLOBAL,
                                 tensor.dtype,
                                 static_cast<int32_t>(tensor.shape.size()),
                                 tensor.shape.data(), data.data(), data.size());
  }
  int ranSteps = options.warmup + options.iters;
  int steps = hasState ? ranSteps : 1;
  if (!status)
    status = dtensor_program_set_random_state(
        reference, options.seed, static_cast<uint64_t>(ranSteps - steps));
  for (int i = 0; i < steps && !status; ++i)
    status = dtensor_program_run(reference);
  for (const RunTensor &tensor : tensors) {
    if (status || (tensor.role != DTENSOR_OUTPUT && !tensor.isUpdated()))
      continue;
    std::vector<uint8_t> expected(tensor.bytes());
    status = dtensor_program_get(reference, tensor.name.c_str(), DTENSOR_GLOBAL,
                                 -1, expected.data(), expected.size());
    if (status)
      break;
    Comparison comparison = compareWithReference(
        tensor.dtype, expected.data(), globals.at(tensor.name).data(),
        tensor.numElements(), options.tolerance);
    std::printf("%s\n", describeComparison(tensor.name, comparison).c_str());
    checkFailed |= !comparison.ok;
  }
  if (status) {
    ranks.report(std::string("--check: ") + dtensor_last_error());
    checkFailed = true;
  }
  dtensor_program_destroy(reference);
  dtensor_context_destroy(single);
  return !checkFailed;
}

} // namespace dtensor::tooling

//===- RunEvaluation.cpp - Evaluation between training steps --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunEvaluation.h"

#include "dtensor/Tooling/ElementTypes.h"

namespace dtensor::tooling {

std::string RunEvaluation::bind(dtensor_program *program,
                                const RunOptions &options) {
  const char *selected = nullptr;
  if (dtensor_program_selected_entry(program, &selected))
    return std::string("--eval-data: ") + dtensor_last_error();
  runEntry = selected;
  if (dtensor_program_select_entry(program, options.evalEntry.c_str()))
    return "--eval-entry: " + std::string(dtensor_last_error());
  std::vector<RunTensor> tensors = listRunTensors(program);
  std::string error = data.bind(program, tensors, options);
  const RunTensor *found = nullptr;
  int scalars = 0;
  for (const RunTensor &tensor : tensors)
    if (tensor.role == DTENSOR_OUTPUT && isFloatingPoint(tensor.dtype) &&
        tensor.numElements() == 1) {
      ++scalars;
      if (!found || tensor.name == "loss")
        found = &tensor;
    }
  if (error.empty() && (!found || (scalars > 1 && found->name != "loss")))
    error = "--eval-entry: entry '" + options.evalEntry + "' has " +
            (found ? "several scalar float outputs and none named loss"
                   : "no scalar float output (its loss)");
  if (found)
    loss = *found;
  dtensor_program_select_entry(program, runEntry.c_str());
  return error;
}

dtensor_status RunEvaluation::evaluate(dtensor_program *program,
                                       const RunOptions &options,
                                       const RunRanks &ranks, double &mean) {
  uint64_t seed = 0, step = 0;
  if (dtensor_status status =
          dtensor_program_random_state(program, &seed, &step))
    return status;
  if (dtensor_status status =
          dtensor_program_select_entry(program, options.evalEntry.c_str()))
    return status;
  double sum = 0;
  for (int batch = 0; batch < options.evalBatches; ++batch) {
    if (dtensor_status status = data.setShards(program, batch))
      return status;
    if (dtensor_status status = dtensor_program_run(program))
      return status;
    std::vector<uint8_t> value;
    if (dtensor_status status = fetchGlobal(program, ranks, loss, value))
      return status;
    if (ranks.rank() == 0)
      sum += elementAsDouble(value.data(), loss.dtype, 0);
  }
  mean = sum / options.evalBatches;
  if (dtensor_status status =
          dtensor_program_select_entry(program, runEntry.c_str()))
    return status;
  return dtensor_program_set_random_state(program, seed, step);
}

} // namespace dtensor::tooling

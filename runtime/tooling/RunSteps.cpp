//===- RunSteps.cpp - Steps that read new inputs each (--per-step) --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunSteps.h"

#include "dtensor/Tooling/ElementTypes.h"
#include "dtensor/Tooling/Npy.h"
#include "dtensor/Tooling/RunRanks.h"
#include "dtensor/Tooling/StepProgress.h"

#include <algorithm>
#include <chrono>

namespace dtensor::tooling {

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text + "]";
}

const RunTensor *findTensor(const std::vector<RunTensor> &tensors,
                            const std::string &name) {
  auto it = std::find_if(tensors.begin(), tensors.end(),
                         [&](const RunTensor &t) { return t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

} // namespace

NpyArray stepSlice(const NpyArray &array, int64_t step) {
  NpyArray slice;
  slice.dtype = array.dtype;
  slice.shape.assign(array.shape.begin() + 1, array.shape.end());
  size_t bytes =
      array.shape.front() ? array.data.size() / array.shape.front() : 0;
  slice.data.assign(array.data.begin() + step * bytes,
                    array.data.begin() + (step + 1) * bytes);
  return slice;
}

std::string firstStepInputs(const std::vector<RunTensor> &tensors,
                            const InputFiles &files, int steps,
                            InputFiles &first) {
  first.prompts = files.prompts;
  for (const auto &[name, array] : files.global) {
    const RunTensor *tensor = findTensor(tensors, name);
    std::vector<int64_t> expected{steps};
    if (tensor)
      expected.insert(expected.end(), tensor->shape.begin(),
                      tensor->shape.end());
    if (array.shape.empty() || array.shape.front() != steps ||
        (tensor && array.shape != expected))
      return "--input " + name + ": with --per-step the file holds one " +
             "value per step, " + shapeText(expected) + " for " +
             std::to_string(steps) + " steps; it is " + shapeText(array.shape);
    first.global[name] = stepSlice(array, 0);
  }
  return "";
}

dtensor_status runPerStep(dtensor_program *program,
                          const std::vector<RunTensor> &tensors,
                          const RunOptions &options, const InputFiles &files,
                          const RunData *data, RunEvaluation *evaluation,
                          StepProgress &progress, const RunRanks &ranks,
                          GlobalValues &stacked, std::vector<double> &timesMs) {
  int steps = options.warmup + options.iters;
  for (int step = 0; step < steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    if (step > 0) {
      for (const auto &[name, array] : files.global) {
        NpyArray slice = stepSlice(array, step);
        if (dtensor_status status = dtensor_program_set(
                program, name.c_str(), DTENSOR_GLOBAL, slice.dtype,
                static_cast<int32_t>(slice.shape.size()), slice.shape.data(),
                slice.data.data(), slice.data.size()))
          return status;
      }
      if (data)
        if (dtensor_status status = data->setShards(program, step))
          return status;
    }
    if (dtensor_status status = dtensor_program_run(program))
      return status;
    timesMs.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    if (dtensor_status status =
            progress.report(program, ranks, step, timesMs.back()))
      return status;
    bool last = step + 1 == steps;
    if (evaluation && (last || (options.evalEvery > 0 &&
                                (step + 1) % options.evalEvery == 0))) {
      double loss = 0;
      if (dtensor_status status =
              evaluation->evaluate(program, options, ranks, loss))
        return status;
      if (ranks.rank() == 0)
        progress.reportEvaluation(step, loss, ranks);
    }
    for (const auto &[name, path] : options.outputs) {
      const RunTensor *tensor = findTensor(tensors, name);
      if (!tensor)
        continue;
      std::vector<uint8_t> value;
      if (dtensor_status status = fetchGlobal(program, ranks, *tensor, value))
        return status;
      std::vector<uint8_t> &all = stacked[name];
      all.insert(all.end(), value.begin(), value.end());
    }
  }
  return DTENSOR_OK;
}

bool writeStackedOutputs(const std::vector<RunTensor> &tensors,
                         const RunOptions &options, const RunRanks &ranks,
                         const GlobalValues &stacked, int steps) {
  bool ok = true;
  for (const auto &[name, path] : options.outputs) {
    const RunTensor *tensor = findTensor(tensors, name);
    auto value = stacked.find(name);
    if (!tensor || value == stacked.end())
      continue;
    std::vector<int64_t> shape{steps};
    shape.insert(shape.end(), tensor->shape.begin(), tensor->shape.end());
    std::string error =
        writeNpy(path, tensor->dtype, shape, value->second.data());
    if (!error.empty()) {
      ranks.report("--output " + name + ": " + error);
      ok = false;
    }
  }
  return ok;
}

} // namespace dtensor::tooling

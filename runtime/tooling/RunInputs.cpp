//===- RunInputs.cpp - A run session's inputs and weights -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunInputs.h"

#include "dtensor/Tooling/ElementTypes.h"
#include "dtensor/Tooling/RunRanks.h"

namespace dtensor::tooling {

std::string rankPath(const std::string &pattern, int rankNumber) {
  static const std::string kField = "{rank}";
  std::string path;
  size_t start = 0;
  for (size_t at = pattern.find(kField); at != std::string::npos;
       at = pattern.find(kField, start)) {
    path += pattern.substr(start, at - start) + std::to_string(rankNumber);
    start = at + kField.size();
  }
  return path + pattern.substr(start);
}

bool readInputFiles(const RunOptions &options, const RunRanks &ranks,
                    InputFiles &files) {
  bool ok = true;
  for (const auto &[name, path] : options.inputs) {
    std::string error = readNpy(path, files.global[name]);
    if (!error.empty()) {
      ranks.report("--input " + name + ": " + error);
      ok = false;
    }
  }
  for (const auto &[name, pattern] : options.localInputs) {
    std::string error =
        readNpy(rankPath(pattern, ranks.rank()), files.local[name]);
    if (!error.empty()) {
      ranks.report("--input-local " + name + ": " + error);
      ok = false;
    }
  }
  for (const std::string &path : options.prompts) {
    NpyArray array;
    std::string error = readNpy(path, array);
    if (error.empty() &&
        (array.shape.size() != 1 ||
         (array.dtype != DTENSOR_I32 && array.dtype != DTENSOR_I64)))
      error = "expected a 1-D array of i32 or i64 token ids";
    if (!error.empty()) {
      ranks.report("--prompt " + path + ": " + error);
      ok = false;
      continue;
    }
    std::vector<int64_t> &ids = files.prompts.emplace_back(array.shape[0]);
    for (int64_t i = 0; i < array.shape[0]; ++i)
      ids[i] = static_cast<int64_t>(
          elementAsDouble(array.data.data(), array.dtype, i));
  }
  return ok;
}

std::string missingValueMessage(const RunTensor &tensor) {
  return std::string(tensor.role == DTENSOR_PARAMETER ? "parameter"
                     : tensor.role == DTENSOR_WEIGHT  ? "weight"
                                                      : "input") +
         " '" + tensor.name + "' (" + tensor.typeString() +
         ") has no value: give " +
         (tensor.isWeight()
              ? "--weights FILE.safetensors"
              : "--input " + tensor.name + "=FILE.npy, --input-local " +
                    tensor.name + "=FILE.{rank}.npy") +
         " or --random-inputs SEED";
}

bool populateInputs(dtensor_program *program,
                    const std::vector<RunTensor> &tensors,
                    const RunOptions &options, const InputFiles &files,
                    const RunRanks &ranks) {
  auto fail = [&](dtensor_status status) {
    ranks.report(dtensor_last_error(), status);
    return false;
  };
  if (dtensor_status status =
          dtensor_program_init_weights(program, options.seed, nullptr))
    return fail(status);
  // The random ops draw from the same seed, from step 0.
  if (dtensor_status status =
          dtensor_program_set_random_state(program, options.seed, 0))
    return fail(status);
  if (!options.weights.empty())
    if (dtensor_status status =
            dtensor_program_load_weights(program, options.weights.c_str()))
      return fail(status);
  for (const RunTensor &tensor : tensors) {
    int32_t hasInit = 0;
    dtensor_program_has_init(program, tensor.index, &hasInit);
    if (tensor.role == DTENSOR_OUTPUT ||
        (tensor.isWeight() && (!options.weights.empty() || hasInit)))
      continue;
    // Generation sets the inputs of each step; the cache starts at zero.
    if (options.generate && !tensor.isWeight())
      continue;
    // State starts at zero unless a file gives it.
    if (tensor.role == DTENSOR_STATE && !files.local.count(tensor.name) &&
        !files.global.count(tensor.name))
      continue;
    // A file of this rank's shard (--input-local) or of the global tensor.
    auto local = files.local.find(tensor.name);
    auto global = files.global.find(tensor.name);
    if (local != files.local.end() || global != files.global.end()) {
      bool isLocal = local != files.local.end();
      const NpyArray &array = isLocal ? local->second : global->second;
      if (dtensor_status status = dtensor_program_set(
              program, tensor.name.c_str(),
              isLocal ? DTENSOR_LOCAL : DTENSOR_GLOBAL, array.dtype,
              static_cast<int32_t>(array.shape.size()), array.shape.data(),
              array.data.data(), array.data.size()))
        return fail(status);
      continue;
    }
    if (!options.randomSeed) {
      ranks.report(missingValueMessage(tensor));
      return false;
    }
    if (dtensor_status status = dtensor_program_fill(
            program, tensor.name.c_str(),
            isFloatingPoint(tensor.dtype) ? DTENSOR_RANDN : DTENSOR_ZEROS, 0.0,
            *options.randomSeed * 1000003u + tensor.index))
      return fail(status);
  }
  return true;
}

} // namespace dtensor::tooling

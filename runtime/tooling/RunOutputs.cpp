//===- RunOutputs.cpp - A run session's outputs ---------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunOutputs.h"

#include "dtensor/Tooling/ElementTypes.h"
#include "dtensor/Tooling/Npy.h"
#include "dtensor/Tooling/RunInputs.h"
#include "dtensor/Tooling/RunRanks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtensor::tooling {

bool writeLocalOutputs(dtensor_program *program,
                       const std::vector<RunTensor> &tensors,
                       const RunOptions &options, const RunRanks &ranks,
                       bool &writeFailed) {
  for (const RunTensor &tensor : tensors) {
    auto pattern = options.localOutputs.find(tensor.name);
    if (pattern == options.localOutputs.end())
      continue;
    dtensor_tensor_info info;
    dtensor_program_tensor_info(program, tensor.index, &info);
    std::vector<int64_t> shape(info.local_shape, info.local_shape + info.ndim);
    size_t count = 1;
    for (int64_t size : shape)
      count *= static_cast<size_t>(size);
    std::vector<uint8_t> data(count * dtensor_dtype_size(tensor.dtype));
    if (dtensor_status status =
            dtensor_program_get(program, tensor.name.c_str(), DTENSOR_LOCAL, 0,
                                data.data(), data.size())) {
      ranks.report(dtensor_last_error(), status);
      return false;
    }
    std::string error = writeNpy(rankPath(pattern->second, ranks.rank()),
                                 tensor.dtype, shape, data.data());
    if (!error.empty()) {
      ranks.report("--output-local " + tensor.name + ": " + error);
      writeFailed = true;
    }
  }
  return true;
}

bool fetchGlobalValues(dtensor_program *program,
                       const std::vector<RunTensor> &tensors,
                       const RunOptions &options, const RunRanks &ranks,
                       GlobalValues &globals) {
  for (const RunTensor &tensor : tensors) {
    bool wanted = tensor.role == DTENSOR_OUTPUT || options.check ||
                  (tensor.isUpdated() && options.outputs.count(tensor.name));
    if (!wanted)
      continue;
    if (dtensor_status status =
            fetchGlobal(program, ranks, tensor, globals[tensor.name])) {
      ranks.report(dtensor_last_error(), status);
      return false;
    }
  }
  return true;
}

std::string describeOutput(const RunTensor &tensor, const uint8_t *data) {
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  size_t count = tensor.numElements();
  for (size_t i = 0; i < count; ++i) {
    double v = elementAsDouble(data, tensor.dtype, i);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  std::string type = tensor.typeString();
  auto print = [&](char *buffer, size_t size) {
    return std::snprintf(buffer, size,
                         "output %s: %s min %.6g max %.6g mean %.6g",
                         tensor.name.c_str(), type.c_str(), count ? lo : 0.0,
                         count ? hi : 0.0, count ? sum / count : 0.0);
  };
  std::string line(static_cast<size_t>(print(nullptr, 0)) + 1, '\0');
  print(line.data(), line.size());
  line.pop_back();
  return line;
}

bool writeGlobalOutputs(const std::vector<RunTensor> &tensors,
                        const RunOptions &options, const RunRanks &ranks,
                        const GlobalValues &globals) {
  bool ok = true;
  for (const RunTensor &tensor : tensors) {
    if (tensor.role != DTENSOR_OUTPUT &&
        !(tensor.isUpdated() && options.outputs.count(tensor.name)))
      continue;
    const std::vector<uint8_t> &data = globals.at(tensor.name);
    auto file = options.outputs.find(tensor.name);
    if (file != options.outputs.end()) {
      std::string error =
          writeNpy(file->second, tensor.dtype, tensor.shape, data.data());
      if (!error.empty()) {
        ranks.report("--output " + tensor.name + ": " + error);
        ok = false;
      }
    } else if (!options.quiet) {
      std::printf("%s\n", describeOutput(tensor, data.data()).c_str());
    }
  }
  return ok;
}

} // namespace dtensor::tooling

//===- RunTensors.cpp - The tensors a run session sees --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunTensors.h"

#include "dtensor/Tooling/ElementTypes.h"
#include "dtensor/Tooling/RunRanks.h"

#include <algorithm>

namespace dtensor::tooling {

size_t RunTensor::numElements() const {
  size_t count = 1;
  for (int64_t size : shape)
    count *= static_cast<size_t>(size);
  return count;
}

size_t RunTensor::bytes() const {
  return numElements() * dtensor_dtype_size(dtype);
}

std::string RunTensor::typeString() const {
  std::string text = dtypeName(dtype);
  text += "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text + "]";
}

std::vector<RunTensor> listRunTensors(dtensor_program *program) {
  int32_t count = 0, entries = 0;
  dtensor_program_num_tensors(program, &count);
  dtensor_program_num_entries(program, &entries);
  const char *selectedName = "";
  dtensor_program_selected_entry(program, &selectedName);
  std::string selected = entries > 1 ? selectedName : "";
  std::vector<RunTensor> tensors;
  for (int32_t i = 0; i < count; ++i) {
    dtensor_tensor_info info;
    dtensor_program_tensor_info(program, i, &info);
    if (info.entry[0] && selected != info.entry)
      continue;
    tensors.push_back(
        {info.name, info.role, info.dtype,
         std::vector<int64_t>(info.global_shape, info.global_shape + info.ndim),
         i});
  }
  return tensors;
}

std::string unknownTensorError(const std::vector<RunTensor> &tensors,
                               const char *flag,
                               const std::map<std::string, std::string> &given,
                               bool outputs) {
  for (const auto &entry : given) {
    auto it =
        std::find_if(tensors.begin(), tensors.end(),
                     [&](const RunTensor &t) { return t.name == entry.first; });
    if (it != tensors.end() &&
        (it->isUpdated() || (it->role == DTENSOR_OUTPUT) == outputs))
      continue;
    std::string known;
    for (const RunTensor &t : tensors)
      if (t.isUpdated() || (t.role == DTENSOR_OUTPUT) == outputs)
        known += (known.empty() ? "" : ", ") + t.name;
    return std::string(flag) + ": the program has no " +
           (outputs ? "output" : "input") + " '" + entry.first +
           "' (it has: " + known + ")";
  }
  return "";
}

dtensor_status fetchGlobal(dtensor_program *program, const RunRanks &ranks,
                           const RunTensor &tensor,
                           std::vector<uint8_t> &data) {
  bool root = ranks.rank() == 0;
  if (root)
    data.resize(tensor.bytes());
  return dtensor_program_get(program, tensor.name.c_str(), DTENSOR_GLOBAL, 0,
                             root ? data.data() : nullptr,
                             root ? data.size() : 0);
}

} // namespace dtensor::tooling

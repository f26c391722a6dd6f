//===- RowBounds.cpp - Checking indices before a step ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "RowBounds.h"

#include "Program.h"

#include "dtensor/Formats/Box.h"

#include <cstring>

namespace dtensor::rt {

namespace {

/// Element `index` (row-major) of an i32 or i64 tensor's host copy
/// (inputs are written on the host only).
int64_t indexAt(const Tensor &tensor, int64_t index) {
  const char *data = tensor.buffer.data();
  if (tensor.info.dtype == DType::I32) {
    int32_t value;
    std::memcpy(&value, data + index * sizeof value, sizeof value);
    return value;
  }
  int64_t value;
  std::memcpy(&value, data + index * sizeof value, sizeof value);
  return value;
}

} // namespace

Status checkRowWrites(const dtensor_program &program) {
  const Entry &entry = program.entries[program.activeEntry];
  // The entry's argument named `name` (the manifest was validated: it is
  // there, with the role the row write needs).
  auto argument = [&](const std::string &name) -> const Tensor * {
    for (int64_t index : entry.arguments)
      if (program.tensors[index].info.name == name)
        return &program.tensors[index];
    return nullptr;
  };
  for (const RowWriteInfo &write : entry.rowWrites) {
    const Tensor *slots = argument(write.slots);
    const Tensor *positions = argument(write.positions);
    // A rank outside their mesh holds nothing; the ranks that hold them
    // check, and the agreement tells this one.
    if (!slots || !positions || !argument(write.state) || !slots->held ||
        !positions->held)
      continue;
    std::string where = program.artifact + ": entry \"" + entry.name + "\": ";
    int64_t rows = slots->localShape.empty() ? 0 : slots->localShape[0];
    for (int64_t b = 0; b < rows; ++b) {
      int64_t slot = indexAt(*slots, b);
      if (slot < 0)
        continue;
      if (slot >= write.cacheSlots)
        return invalidArgument(
            where + "slot out of range: row " + std::to_string(b) +
            " of input \"" + write.slots + "\" is slot " +
            std::to_string(slot) + ", the state \"" + write.state +
            "\" has " + std::to_string(write.cacheSlots) +
            " slots (a negative slot marks a padding row); the step was not "
            "run");
      int64_t position = indexAt(*positions, b);
      if (position < 0 || position > write.cachePositions - write.rows)
        return invalidArgument(
            where + "position " + (position < 0 ? "before" : "past") +
            " the cache: row " + std::to_string(b) + " of input \"" +
            write.positions + "\" is position " + std::to_string(position) +
            ", which with " + std::to_string(write.rows) +
            (write.rows == 1 ? " row" : " rows") + " writes positions [" +
            std::to_string(position) + ", " +
            std::to_string(position + write.rows) + ") of slot " +
            std::to_string(slot) + "; the state \"" + write.state +
            "\" has " + std::to_string(write.cachePositions) +
            " positions; the step was not run");
    }
  }
  return Status::success();
}

Status checkIndexBounds(const dtensor_program &program) {
  const Entry &entry = program.entries[program.activeEntry];
  for (const IndexBoundInfo &bound : entry.indexBounds) {
    const Tensor *input = nullptr;
    for (int64_t index : entry.arguments)
      if (program.tensors[index].info.name == bound.input)
        input = &program.tensors[index];
    if (!input || !input->held)
      continue;
    int64_t count = numElements(input->localShape);
    for (int64_t i = 0; i < count; ++i) {
      int64_t value = indexAt(*input, i);
      if ((value >= 0 && value < bound.bound) || value == bound.ignoreIndex)
        continue;
      // The element's global coordinates (local ones plus the offset).
      std::string where;
      int64_t rest = i;
      std::vector<int64_t> coordinates(input->localShape.size());
      for (size_t d = input->localShape.size(); d-- > 0;) {
        int64_t size = input->localShape[d];
        coordinates[d] =
            (size ? rest % size : 0) +
            (d < input->localOffset.size() ? input->localOffset[d] : 0);
        rest = size ? rest / size : 0;
      }
      for (size_t d = 0; d < coordinates.size(); ++d)
        where += (d ? ", " : "") + std::to_string(coordinates[d]);
      return invalidArgument(
          program.artifact + ": entry \"" + entry.name + "\": input \"" +
          bound.input + "\" holds " + std::to_string(value) + " at [" + where +
          "], outside [0, " + std::to_string(bound.bound) + ")" +
          (bound.table.empty() ? std::string()
                               : ", the rows of \"" + bound.table + "\"") +
          (bound.ignoreIndex ? " and not the ignore_index " +
                                   std::to_string(*bound.ignoreIndex)
                             : std::string()) +
          "; the step was not run");
    }
  }
  return Status::success();
}

} // namespace dtensor::rt

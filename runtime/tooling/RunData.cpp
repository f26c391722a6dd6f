//===- RunData.cpp - Token batches fed to each step (--data) --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunData.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>

namespace dtensor::tooling {

namespace {

const RunTensor *findInput(const std::vector<RunTensor> &tensors,
                           const std::string &name) {
  for (const RunTensor &tensor : tensors)
    if (tensor.name == name && tensor.role == DTENSOR_INPUT)
      return &tensor;
  return nullptr;
}

/// The smallest `bound` of the selected entry's index_bounds over `names`
/// (none when the manifest gives none for them). "" or the error.
std::string readIdBound(const std::string &artifact, const std::string &entry,
                        const std::vector<std::string> &names, int64_t &bound) {
  bound = std::numeric_limits<int64_t>::max();
  std::string path = artifact + "/manifest.json";
  std::ifstream file(path);
  nlohmann::json manifest =
      nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.is_object())
    return "cannot read the index bounds of " + path;
  std::string selected =
      entry.empty() ? manifest.value("entry", std::string()) : entry;
  auto entries = manifest.find("entries");
  if (entries == manifest.end() || !entries->is_array())
    return "";
  for (const nlohmann::json &candidate : *entries) {
    if (!candidate.is_object() ||
        candidate.value("name", std::string()) != selected)
      continue;
    auto bounds = candidate.find("index_bounds");
    if (bounds == candidate.end() || !bounds->is_array())
      return "";
    for (const nlohmann::json &item : *bounds)
      if (item.is_object() && item.contains("bound") &&
          item["bound"].is_number_integer() &&
          std::find(names.begin(), names.end(),
                    item.value("input", std::string())) != names.end())
        bound = std::min(bound, item["bound"].get<int64_t>());
  }
  return "";
}

} // namespace

std::string RunData::open(const DataSource &from) {
  source = from;
  return TokenStream::open(source.files, stream);
}

std::string RunData::bind(dtensor_program *program,
                          const std::vector<RunTensor> &tensors,
                          const RunOptions &options) {
  tokens = options.dataTokens;
  targets = options.dataTargets;
  const RunTensor *tokenInput = findInput(tensors, tokens);
  const RunTensor *targetInput = findInput(tensors, targets);
  for (auto [tensor, name, flag] :
       {std::make_tuple(tokenInput, &tokens, "--data-tokens"),
        std::make_tuple(targetInput, &targets, "--data-targets")}) {
    if (!tensor)
      return source.flag + ": the entry has no input '" + *name + "' (" + flag +
             " names the input the batches feed)";
    if ((tensor->dtype != DTENSOR_I64 && tensor->dtype != DTENSOR_I32) ||
        tensor->shape.size() != 2)
      return source.flag + ": input '" + *name + "' is " +
             tensor->typeString() +
             "; the batches feed [batch, sequence] token ids of i64 or i32";
  }
  if (tokenInput->shape != targetInput->shape ||
      tokenInput->dtype != targetInput->dtype)
    return source.flag + ": the token input '" + tokens + "' is " +
           tokenInput->typeString() + " but the target input '" + targets +
           "' is " + targetInput->typeString() + "; they must agree";
  dtype = tokenInput->dtype;
  rows = tokenInput->shape[0];
  columns = tokenInput->shape[1];

  // This rank's box, the same for both inputs (one layout).
  dtensor_tensor_info info[2];
  for (int i = 0; i < 2; ++i) {
    if (dtensor_program_tensor_info(
            program, (i ? targetInput : tokenInput)->index, &info[i]))
      return source.flag + ": " + dtensor_last_error();
  }
  for (const dtensor_tensor_info &one : info)
    if (std::strstr(one.placements, "head_tail"))
      return source.flag + ": input '" + std::string(one.name) +
             "' is laid out " + one.placements +
             "; head-tail shards are not fed from token files";
  if (!std::equal(info[0].local_shape, info[0].local_shape + 2,
                  info[1].local_shape) ||
      !std::equal(info[0].local_offset, info[0].local_offset + 2,
                  info[1].local_offset))
    return source.flag + ": inputs '" + tokens + "' (" + info[0].placements +
           ") and '" + targets + "' (" + info[1].placements +
           ") are sharded differently";
  rowOffset = info[0].local_offset[0];
  localRows = info[0].local_shape[0];
  columnOffset = info[0].local_offset[1];
  localColumns = info[0].local_shape[1];

  int64_t bound = 0;
  if (std::string error =
          readIdBound(options.artifact, source.entry, {tokens, targets}, bound);
      !error.empty())
    return source.flag + ": " + error;
  if (bound != std::numeric_limits<int64_t>::max())
    if (std::string error = stream.checkVocabulary(bound); !error.empty())
      return source.flag + ": " + error;
  if (std::string error =
          TokenBatches::create(stream, rows, columns, source.seed, batches);
      !error.empty())
    return source.flag + ": " + error;
  return "";
}

std::vector<std::pair<std::string, NpyArray>>
RunData::shards(int64_t step) const {
  std::vector<int64_t> tokenRows(localRows * columns),
      targetRows(localRows * columns);
  batches.read(source.start + uint64_t(step), rowOffset, rowOffset + localRows,
               tokenRows.data(), targetRows.data());
  std::vector<std::pair<std::string, NpyArray>> result;
  for (auto [name, values] : {std::make_pair(&tokens, &tokenRows),
                              std::make_pair(&targets, &targetRows)}) {
    NpyArray array;
    array.dtype = dtype;
    array.shape = {localRows, localColumns};
    size_t width = dtype == DTENSOR_I64 ? 8 : 4;
    array.data.resize(size_t(localRows * localColumns) * width);
    uint8_t *out = array.data.data();
    for (int64_t r = 0; r < localRows; ++r)
      for (int64_t c = 0; c < localColumns; ++c, out += width) {
        int64_t id = (*values)[r * columns + columnOffset + c];
        if (width == 8) {
          std::memcpy(out, &id, 8);
        } else {
          int32_t narrow = static_cast<int32_t>(id);
          std::memcpy(out, &narrow, 4);
        }
      }
    result.emplace_back(*name, std::move(array));
  }
  return result;
}

dtensor_status RunData::setShards(dtensor_program *program,
                                  int64_t step) const {
  for (const auto &[name, shard] : shards(step))
    if (dtensor_status status = dtensor_program_set(
            program, name.c_str(), DTENSOR_LOCAL, shard.dtype,
            static_cast<int32_t>(shard.shape.size()), shard.shape.data(),
            shard.data.data(), shard.data.size()))
      return status;
  return DTENSOR_OK;
}

} // namespace dtensor::tooling

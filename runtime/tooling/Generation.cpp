//===- Generation.cpp - Greedy generation over a KV cache -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "dtensor/Tooling/Generation.h"

#include "dtensor/Tooling/ElementTypes.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>

using namespace dtensor::tooling;

std::vector<PrefillChunk>
dtensor::tooling::planPrefill(const std::vector<StepShape> &steps,
                              int64_t length, int64_t maxPositions,
                              std::string &error) {
  std::vector<PrefillChunk> chunks;
  if (length <= 0) {
    error = "the prompt is empty";
    return {};
  }
  if (length > maxPositions) {
    error = "the prompt has " + std::to_string(length) +
            " tokens; the cache holds " + std::to_string(maxPositions) +
            " positions";
    return {};
  }
  int64_t offset = 0;
  while (offset < length) {
    int64_t left = length - offset;
    // The fewest tokens that hold what is left, else the most; fewest rows
    // among equals. A chunk's padding must stay in the cache too.
    std::optional<size_t> holds, most;
    for (size_t i = 0; i < steps.size(); ++i) {
      const StepShape &step = steps[i];
      if (step.tokens < 1 || step.rows < 1 ||
          offset + step.tokens > maxPositions)
        continue;
      auto better = [&](std::optional<size_t> current, bool fewerTokens) {
        if (!current)
          return true;
        const StepShape &other = steps[*current];
        if (step.tokens != other.tokens)
          return fewerTokens ? step.tokens < other.tokens
                             : step.tokens > other.tokens;
        return step.rows < other.rows;
      };
      if (step.tokens >= left && better(holds, true))
        holds = i;
      if (better(most, false))
        most = i;
    }
    std::optional<size_t> chosen = holds ? holds : most;
    if (!chosen) {
      error = "no entry fits tokens " + std::to_string(offset) + ".." +
              std::to_string(length - 1) + " of the prompt in a cache of " +
              std::to_string(maxPositions) + " positions";
      return {};
    }
    int64_t take = std::min(left, steps[*chosen].tokens);
    chunks.push_back({*chosen, offset, take});
    offset += take;
  }
  return chunks;
}

int64_t dtensor::tooling::pickDecodeStep(const std::vector<StepShape> &steps,
                                         size_t active) {
  int64_t holds = -1, widest = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepShape &step = steps[i];
    if (step.tokens != 1 || step.rows < 1)
      continue;
    if (widest < 0 || step.rows > steps[widest].rows)
      widest = static_cast<int64_t>(i);
    if (static_cast<size_t>(step.rows) >= active &&
        (holds < 0 || step.rows < steps[holds].rows))
      holds = static_cast<int64_t>(i);
  }
  return holds >= 0 ? holds : widest;
}

namespace {
/// The program's description of one tensor of the selected entry.
struct Found {
  dtensor_dtype dtype;
  std::vector<int64_t> shape;
};

bool isInteger(dtensor_dtype dtype) {
  return dtype == DTENSOR_I32 || dtype == DTENSOR_I64;
}

/// `values` as `dtype` (i32 or i64) bytes.
std::vector<uint8_t> encode(const std::vector<int64_t> &values,
                            dtensor_dtype dtype) {
  std::vector<uint8_t> bytes(values.size() * dtensor_dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DTENSOR_I64) {
      std::memcpy(bytes.data() + 8 * i, &values[i], 8);
    } else {
      int32_t value = static_cast<int32_t>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &value, 4);
    }
  }
  return bytes;
}

std::vector<int64_t> decodeValues(const std::vector<uint8_t> &bytes,
                                  dtensor_dtype dtype) {
  size_t size = dtensor_dtype_size(dtype);
  std::vector<int64_t> values(bytes.size() / size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DTENSOR_I64) {
      std::memcpy(&values[i], bytes.data() + 8 * i, 8);
    } else {
      int32_t value;
      std::memcpy(&value, bytes.data() + 4 * i, 4);
      values[i] = value;
    }
  }
  return values;
}

std::string lastError() { return dtensor_last_error(); }

/// f32 or f64 bytes as f32 values.
} // namespace

std::unique_ptr<Generator> Generator::create(dtensor_program *program,
                                             std::string &error, int rank) {
  std::unique_ptr<Generator> generator(new Generator(program));
  generator->rank = rank;
  // Logits are served only when every step entry has them, of one V.
  bool allLogits = true;
  int64_t logitsVocab = -1;
  int32_t numTensors = 0, numEntries = 0;
  dtensor_program_num_tensors(program, &numTensors);
  dtensor_program_num_entries(program, &numEntries);
  const char *selected = "";
  dtensor_program_selected_entry(program, &selected);
  std::string initial = selected;

  // The cache: dims 0 and 1 of the state, which every state tensor shares.
  for (int32_t i = 0; i < numTensors; ++i) {
    dtensor_tensor_info info;
    dtensor_program_tensor_info(program, i, &info);
    if (info.role != DTENSOR_STATE)
      continue;
    if (info.ndim < 2) {
      error = std::string("state '") + info.name +
              "' is not a cache [slots, positions, ...]";
      return nullptr;
    }
    if (generator->slots == 0) {
      generator->slots = info.global_shape[0];
      generator->positions = info.global_shape[1];
    } else if (generator->slots != info.global_shape[0] ||
               generator->positions != info.global_shape[1]) {
      error = std::string("state '") + info.name +
              "' has other slots or positions than the first cache";
      return nullptr;
    }
  }
  if (generator->slots == 0) {
    error = "the program has no state (a KV cache) to generate with";
    return nullptr;
  }

  // The step entries: tokens[B, T], slots[B], start[B] -> next_token[B, T].
  std::string skipped;
  for (int32_t e = 0; e < numEntries; ++e) {
    const char *name = "";
    dtensor_program_entry_name(program, e, &name);
    if (dtensor_program_select_entry(program, name)) {
      error = lastError();
      return nullptr;
    }
    std::map<std::string, Found> found;
    for (const char *wanted :
         {"tokens", "slots", "start", "next_token", "logits"}) {
      int32_t index = -1;
      if (dtensor_program_find_tensor(program, wanted, &index))
        continue;
      dtensor_tensor_info info;
      dtensor_program_tensor_info(program, index, &info);
      bool output = std::strcmp(wanted, "next_token") == 0 ||
                    std::strcmp(wanted, "logits") == 0;
      if ((info.role == DTENSOR_OUTPUT) != output)
        continue;
      found[wanted] = {info.dtype, std::vector<int64_t>(
                                       info.global_shape,
                                       info.global_shape + info.ndim)};
    }
    auto shaped = [&](const char *key, size_t rank) {
      auto it = found.find(key);
      return it != found.end() && it->second.shape.size() == rank &&
             isInteger(it->second.dtype);
    };
    if (!shaped("tokens", 2) || !shaped("slots", 1) || !shaped("start", 1) ||
        !shaped("next_token", 2)) {
      skipped += std::string(skipped.empty() ? "" : ", ") + name;
      continue;
    }
    int64_t rows = found["tokens"].shape[0],
            tokens = found["tokens"].shape[1];
    if (found["slots"].shape[0] != rows || found["start"].shape[0] != rows ||
        found["next_token"].shape != found["tokens"].shape) {
      skipped += std::string(skipped.empty() ? "" : ", ") + name;
      continue;
    }
    generator->steps.push_back({name, rows, tokens});
    generator->tokenTypes.push_back(found["tokens"].dtype);
    generator->slotTypes.push_back(found["slots"].dtype);
    generator->startTypes.push_back(found["start"].dtype);
    generator->nextTypes.push_back(found["next_token"].dtype);
    auto logits = found.find("logits");
    bool hasLogits =
        logits != found.end() && isFloatingPoint(logits->second.dtype) &&
        logits->second.shape.size() == 3 && logits->second.shape[0] == rows &&
        logits->second.shape[1] == tokens &&
        (logitsVocab < 0 || logits->second.shape[2] == logitsVocab);
    if (hasLogits)
      logitsVocab = logits->second.shape[2];
    allLogits = allLogits && hasLogits;
    generator->logitsTypes.push_back(hasLogits ? logits->second.dtype
                                               : DTENSOR_F32);
  }
  if (allLogits && logitsVocab > 0)
    generator->vocab = logitsVocab;
  dtensor_program_select_entry(program, initial.c_str());
  if (generator->steps.empty()) {
    error = "no entry of the program is a generation step (inputs "
            "tokens[B, T], slots[B], start[B] of i32 or i64, output "
            "next_token[B, T])" +
            (skipped.empty() ? std::string() : "; it has: " + skipped);
    return nullptr;
  }
  if (pickDecodeStep(generator->steps, 1) < 0) {
    error = "no generation step of one token per row (T = 1) to decode with";
    return nullptr;
  }
  return generator;
}

bool Generator::runStep(const StepShape &step,
                        const std::vector<int64_t> &tokens,
                        const std::vector<int64_t> &slotIds,
                        const std::vector<int64_t> &starts,
                        std::vector<int64_t> &next, std::string &error,
                        std::vector<float> *logits) {
  size_t index = &step - steps.data();
  auto fail = [&] {
    error = lastError();
    return false;
  };
  if (dtensor_program_select_entry(program, step.entry.c_str()))
    return fail();
  int64_t tokenShape[2] = {step.rows, step.tokens};
  int64_t rowShape[1] = {step.rows};
  struct Input {
    const char *name;
    const std::vector<int64_t> &values;
    dtensor_dtype dtype;
    int32_t ndim;
    const int64_t *shape;
  };
  for (const Input &input :
       {Input{"tokens", tokens, tokenTypes[index], 2, tokenShape},
        Input{"slots", slotIds, slotTypes[index], 1, rowShape},
        Input{"start", starts, startTypes[index], 1, rowShape}}) {
    std::vector<uint8_t> bytes = encode(input.values, input.dtype);
    if (dtensor_program_set(program, input.name, DTENSOR_GLOBAL, input.dtype,
                            input.ndim, input.shape, bytes.data(),
                            bytes.size()))
      return fail();
  }
  if (dtensor_program_run(program))
    return fail();
  std::vector<uint8_t> bytes(tokens.size() *
                             dtensor_dtype_size(nextTypes[index]));
  if (dtensor_program_get(program, "next_token", DTENSOR_GLOBAL, -1,
                          bytes.data(), bytes.size()))
    return fail();
  next = decodeValues(bytes, nextTypes[index]);
  if (!logits)
    return true;
  // Gathered to rank 0 only: the others sample nothing.
  bool root = rank == 0;
  std::vector<uint8_t> raw(root ? tokens.size() * vocab *
                                      dtensor_dtype_size(logitsTypes[index])
                                : 0);
  if (dtensor_program_get(program, "logits", DTENSOR_GLOBAL, 0,
                          root ? raw.data() : nullptr, raw.size()))
    return fail();
  *logits = floatElements(raw.data(), logitsTypes[index],
                          raw.size() / dtypeSize(logitsTypes[index]));
  return true;
}

bool Generator::prefill(int64_t slot, const std::vector<int64_t> &prompt,
                        int64_t &next, std::string &error,
                        std::vector<int64_t> *all, std::vector<float> *logits) {
  if (all)
    all->clear();
  if (logits && !vocab) {
    error = "the program's steps have no logits output";
    return false;
  }
  if (slot < 0 || slot >= slots) {
    error = "slot " + std::to_string(slot) + " is outside the cache's " +
            std::to_string(slots) + " slots";
    return false;
  }
  std::vector<PrefillChunk> chunks = planPrefill(
      steps, static_cast<int64_t>(prompt.size()), positions, error);
  if (chunks.empty())
    return false;
  for (const PrefillChunk &chunk : chunks) {
    const StepShape &step = steps[chunk.step];
    // Row 0 holds the chunk, padded with token 0; the other rows are
    // padding rows (slot -1: nothing is written, nothing is read).
    std::vector<int64_t> tokens(step.rows * step.tokens, 0);
    std::copy(prompt.begin() + chunk.offset,
              prompt.begin() + chunk.offset + chunk.length, tokens.begin());
    std::vector<int64_t> slotIds(step.rows, -1), starts(step.rows, -1);
    slotIds[0] = slot;
    starts[0] = chunk.offset;
    std::vector<int64_t> out;
    bool last = &chunk == &chunks.back();
    std::vector<float> chunkLogits;
    if (!runStep(step, tokens, slotIds, starts, out, error,
                 logits && last ? &chunkLogits : nullptr))
      return false;
    next = out[chunk.length - 1];
    if (logits && last) {
      logits->clear();
      if (!chunkLogits.empty()) // rank 0: row 0, the last prompt token
        logits->assign(chunkLogits.begin() + (chunk.length - 1) * vocab,
                       chunkLogits.begin() + chunk.length * vocab);
    }
    if (all)
      all->insert(all->end(), out.begin(), out.begin() + chunk.length);
  }
  return true;
}

bool Generator::decode(const std::vector<Row> &rows, std::vector<int64_t> &next,
                       std::string &error, std::vector<float> *logits) {
  if (logits && !vocab) {
    error = "the program's steps have no logits output";
    return false;
  }
  const StepShape &step = steps[pickDecodeStep(steps, rows.size())];
  next.clear();
  if (logits)
    logits->clear();
  for (size_t first = 0; first < rows.size(); first += step.rows) {
    std::vector<int64_t> tokens(step.rows, 0), slotIds(step.rows, -1),
        starts(step.rows, -1);
    size_t count = std::min<size_t>(step.rows, rows.size() - first);
    for (size_t i = 0; i < count; ++i) {
      const Row &row = rows[first + i];
      if (row.slot < 0 || row.slot >= slots || row.position < 0 ||
          row.position >= positions) {
        error = "row " + std::to_string(first + i) + ": slot " +
                std::to_string(row.slot) + ", position " +
                std::to_string(row.position) + " is outside the cache (" +
                std::to_string(slots) + " slots of " +
                std::to_string(positions) + " positions)";
        return false;
      }
      tokens[i] = row.token;
      slotIds[i] = row.slot;
      starts[i] = row.position;
    }
    std::vector<int64_t> out;
    std::vector<float> stepLogits;
    if (!runStep(step, tokens, slotIds, starts, out, error,
                 logits ? &stepLogits : nullptr))
      return false;
    next.insert(next.end(), out.begin(), out.begin() + count);
    if (!stepLogits.empty()) // rank 0; T = 1: a row's V logits
      logits->insert(logits->end(), stepLogits.begin(),
                     stepLogits.begin() + count * vocab);
  }
  return true;
}

bool Generator::generate(const std::vector<std::vector<int64_t>> &prompts,
                         int64_t newTokens,
                         std::vector<std::vector<int64_t>> &generated,
                         std::string &error, Times *times) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start)
        .count();
  };
  if (static_cast<int64_t>(prompts.size()) > slots) {
    error = std::to_string(prompts.size()) + " prompts, but the cache has " +
            std::to_string(slots) + " slots";
    return false;
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    // The last new token is not written back: it needs no position.
    int64_t needed = static_cast<int64_t>(prompts[i].size()) + newTokens - 1;
    if (needed > positions) {
      error = "prompt " + std::to_string(i) + " has " +
              std::to_string(prompts[i].size()) + " tokens; with " +
              std::to_string(newTokens) + " new ones it needs " +
              std::to_string(needed) + " positions, and the cache has " +
              std::to_string(positions);
      return false;
    }
  }
  generated.assign(prompts.size(), {});
  if (newTokens <= 0)
    return true;
  std::vector<Row> rows;
  Clock::time_point start = Clock::now();
  for (size_t i = 0; i < prompts.size(); ++i) {
    int64_t next = 0;
    if (!prefill(static_cast<int64_t>(i), prompts[i], next, error))
      return false;
    generated[i].push_back(next);
    rows.push_back({static_cast<int64_t>(i), next,
                    static_cast<int64_t>(prompts[i].size())});
  }
  if (times)
    times->prefill = since(start);
  for (int64_t t = 1; t < newTokens; ++t) {
    std::vector<int64_t> next;
    start = Clock::now();
    if (!decode(rows, next, error))
      return false;
    if (times)
      times->decode.push_back(since(start));
    for (size_t i = 0; i < rows.size(); ++i) {
      generated[i].push_back(next[i]);
      rows[i].token = next[i];
      ++rows[i].position;
    }
  }
  return true;
}

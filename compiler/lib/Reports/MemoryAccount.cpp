//===- MemoryAccount.cpp - Per-rank memory account of an entry ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Reports/MemoryAccount.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace dtensor::memory {

int64_t peakLiveBytes(std::vector<LiveRange> ranges) {
  // Sweep the program points: a range adds its bytes at its begin and
  // removes them after its end, so ranges ending at a point still count
  // there, with those beginning at it.
  std::map<int64_t, int64_t> change;
  for (const LiveRange &range : ranges) {
    change[range.begin] += range.bytes;
    change[std::max(range.begin, range.end) + 1] -= range.bytes;
  }
  int64_t live = 0, peak = 0;
  for (const auto &[point, delta] : change) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

int64_t exactSizeCacheBytes(const std::vector<LiveRange> &ranges) {
  std::map<int64_t, std::vector<LiveRange>> bySize;
  for (const LiveRange &range : ranges)
    bySize[range.bytes].push_back(range);
  int64_t total = 0;
  for (auto &[bytes, group] : bySize)
    total += peakLiveBytes(std::move(group));
  return total;
}

size_t largestRank(const EntryMemory &entry) {
  size_t best = 0;
  for (size_t i = 1; i < entry.ranks.size(); ++i)
    if (entry.ranks[i].peak() > entry.ranks[best].peak())
      best = i;
  return best;
}

/// Every figure of `memory` but its rank, in the report's column order.
static std::vector<int64_t> figures(const RankMemory &memory) {
  return {memory.parameters,    memory.optimizerState, memory.otherState,
          memory.inputsOutputs, memory.gradients,      memory.savedActivations,
          memory.transientPeak, memory.lastUsePeak,    memory.cachedBuffers,
          memory.peak(),        memory.unknownSizes};
}

bool ranksDiffer(const EntryMemory &entry) {
  for (const RankMemory &memory : entry.ranks)
    if (figures(memory) != figures(entry.ranks.front()))
      return true;
  return false;
}

std::string formatMemoryText(const std::vector<EntryMemory> &entries) {
  using Row = std::vector<std::string>;
  std::vector<Row> rows{{"entry", "rank", "parameters", "optimizer_state",
                         "other_state", "inputs_outputs", "gradients",
                         "saved_activations", "transient_peak", "last_use_peak",
                         "cached_buffers", "peak", "unknown_sizes"}};
  auto addRow = [&](const EntryMemory &entry, const RankMemory &memory,
                    const std::string &rank) {
    Row row{entry.name, rank};
    std::vector<int64_t> values = figures(memory);
    for (size_t column = 0; column < values.size(); ++column) {
      // Gradients and saved activations are columns 4 and 5.
      bool trainingOnly = column == 4 || column == 5;
      row.push_back(trainingOnly && !entry.training
                        ? "-"
                        : std::to_string(values[column]));
    }
    rows.push_back(std::move(row));
  };
  for (const EntryMemory &entry : entries) {
    if (entry.ranks.empty())
      continue;
    const RankMemory &largest = entry.ranks[largestRank(entry)];
    bool differ = ranksDiffer(entry);
    addRow(entry, largest,
           (differ ? "max " : "all ") + std::to_string(largest.rank));
    if (differ)
      for (const RankMemory &memory : entry.ranks)
        addRow(entry, memory, std::to_string(memory.rank));
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const Row &row : rows)
    for (size_t column = 0; column < row.size(); ++column)
      widths[column] = std::max(widths[column], row[column].size());
  std::ostringstream os;
  os << "memory per rank (bytes)\n";
  for (const Row &row : rows) {
    os << " ";
    for (size_t column = 0; column < row.size(); ++column) {
      os << " " << row[column];
      if (column + 1 < row.size())
        os << std::string(widths[column] - row[column].size() + 1, ' ');
    }
    os << "\n";
  }
  return os.str();
}

/// `text` as a JSON string (entry names: no control characters).
static std::string quote(const std::string &text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string formatMemoryJson(const std::vector<EntryMemory> &entries) {
  std::ostringstream os;
  os << "{\"entries\": [";
  for (size_t e = 0; e < entries.size(); ++e) {
    const EntryMemory &entry = entries[e];
    os << (e ? ", " : "") << "{\"name\": " << quote(entry.name)
       << ", \"training\": " << (entry.training ? "true" : "false")
       << ", \"max_rank\": "
       << (entry.ranks.empty() ? 0 : entry.ranks[largestRank(entry)].rank)
       << ", \"ranks\": [";
    for (size_t r = 0; r < entry.ranks.size(); ++r) {
      const RankMemory &m = entry.ranks[r];
      os << (r ? ", " : "") << "{\"rank\": " << m.rank
         << ", \"parameters\": " << m.parameters
         << ", \"optimizer_state\": " << m.optimizerState
         << ", \"other_state\": " << m.otherState
         << ", \"inputs_outputs\": " << m.inputsOutputs;
      if (entry.training)
        os << ", \"gradients\": " << m.gradients
           << ", \"saved_activations\": " << m.savedActivations;
      os << ", \"transient_peak\": " << m.transientPeak
         << ", \"last_use_peak\": " << m.lastUsePeak
         << ", \"cached_buffers\": " << m.cachedBuffers
         << ", \"persistent\": " << m.persistent() << ", \"peak\": " << m.peak()
         << ", \"unknown_sizes\": " << m.unknownSizes << "}";
    }
    os << "]}";
  }
  os << "]}\n";
  return os.str();
}

} // namespace dtensor::memory

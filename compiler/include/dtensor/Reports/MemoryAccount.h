//===- MemoryAccount.h - Per-rank memory account of an entry ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The arithmetic of the memory report, without MLIR: the peak of buffers
// live over program points, one rank's account of an entry, and the report
// over ranks as text and JSON. compiler/lib/Reports/MemoryAnalysis.cpp
// fills it from the per-rank program (docs/memory-report.md).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_REPORTS_MEMORYACCOUNT_H
#define DTENSOR_REPORTS_MEMORYACCOUNT_H

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::memory {

/// A buffer live from program point `begin` to `end`, both included.
struct LiveRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t bytes = 0;
};

/// The largest sum of the bytes of the ranges live at one program point (0
/// without ranges). A range whose end is before its begin is live at its
/// begin only.
int64_t peakLiveBytes(std::vector<LiveRange> ranges);

/// The bytes a cache of freed buffers that reuses a buffer only for a
/// request of the same size (the runtime's, which keeps them across steps)
/// holds after the ranges: per size, the most ranges of that size live at
/// one point, times the size.
int64_t exactSizeCacheBytes(const std::vector<LiveRange> &ranges);

/// One rank's memory for one call of an entry, in bytes.
struct RankMemory {
  int64_t rank = 0;
  /// Arguments, by role: weights and parameters; the training step's
  /// optimizer state (moments, accumulators, counters); other state (a KV
  /// cache); the inputs and the results the runtime passes in.
  int64_t parameters = 0;
  int64_t optimizerState = 0;
  int64_t otherState = 0;
  int64_t inputsOutputs = 0;
  /// Of a training step: the gradient of each parameter as its update reads
  /// it, and the step's buffers live across the loss (the forward's values
  /// that the backward reads).
  int64_t gradients = 0;
  int64_t savedActivations = 0;
  /// The peak of the entry's own allocations over its program points, each
  /// live until the program frees it.
  int64_t transientPeak = 0;
  /// The same peak were each allocation freed after its last use: what the
  /// step needs (at most the transient peak).
  int64_t lastUsePeak = 0;
  /// What the runtime's exact-size buffer cache keeps of those allocations
  /// after the step (exactSizeCacheBytes): at least the transient peak.
  int64_t cachedBuffers = 0;
  /// Values or allocations whose size the compiler could not tell for this
  /// rank (counted as 0 above).
  int64_t unknownSizes = 0;

  /// What lives across calls: parameters and all state.
  int64_t persistent() const {
    return parameters + optimizerState + otherState;
  }
  /// The peak of the call: persistent memory, the runtime's inputs and
  /// outputs and the transient peak.
  int64_t peak() const { return persistent() + inputsOutputs + transientPeak; }
};

/// The account of one entry on every rank.
struct EntryMemory {
  std::string name;
  /// Whether gradients and saved activations apply (a training step).
  bool training = false;
  std::vector<RankMemory> ranks;
};

/// The index in `entry.ranks` of the rank with the largest peak (the first
/// of equals); 0 without ranks.
size_t largestRank(const EntryMemory &entry);

/// Whether two ranks' accounts differ in any figure (uneven shards).
bool ranksDiffer(const EntryMemory &entry);

/// The report as text: per entry, one row for the rank with the largest
/// peak and, where ranks differ, one row per rank.
std::string formatMemoryText(const std::vector<EntryMemory> &entries);

/// The report as one JSON document: {"entries": [{"name", "training",
/// "max_rank", "ranks": [{...}]}]}, sizes in bytes.
std::string formatMemoryJson(const std::vector<EntryMemory> &entries);

} // namespace dtensor::memory

#endif // DTENSOR_REPORTS_MEMORYACCOUNT_H

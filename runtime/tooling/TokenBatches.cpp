//===- TokenBatches.cpp - Language-model batches of a token stream --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/TokenBatches.h"

#include <numeric>
#include <utility>
#include <vector>

namespace dtensor::tooling {

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace

std::string TokenBatches::create(const TokenStream &stream, int64_t rows,
                                 int64_t seqLen, std::optional<uint64_t> seed,
                                 TokenBatches &batches) {
  if (rows < 1 || seqLen < 1)
    return "a batch needs at least one row of at least one token (rows " +
           std::to_string(rows) + ", sequence length " +
           std::to_string(seqLen) + ")";
  uint64_t windows =
      stream.size() == 0 ? 0 : (stream.size() - 1) / uint64_t(seqLen);
  if (windows < uint64_t(rows))
    return "the token data holds " + std::to_string(stream.size()) +
           " tokens: " + std::to_string(windows) + " sequences of " +
           std::to_string(seqLen) +
           " tokens and their targets, fewer than "
           "the " +
           std::to_string(rows) + " rows of one batch";
  TokenBatches made;
  made.stream = &stream;
  made.rows = rows;
  made.seqLen = seqLen;
  made.windows = windows;
  made.seed = seed;
  batches = std::move(made);
  return "";
}

uint64_t TokenBatches::windowAt(uint64_t epoch, uint64_t position) const {
  if (!seed)
    return position;
  if (order.empty() || cachedEpoch != epoch) {
    order.resize(windows);
    std::iota(order.begin(), order.end(), uint64_t(0));
    uint64_t state = *seed;
    uint64_t epochKey = epoch;
    state ^= splitmix64(epochKey);
    // Fisher-Yates: position i swaps with one drawn from [0, i] (the
    // multiply-shift map of a 64-bit draw onto the range).
    for (uint64_t i = windows - 1; i > 0; --i) {
      uint64_t draw = splitmix64(state);
      uint64_t j = static_cast<uint64_t>(
          (static_cast<unsigned __int128>(draw) * (i + 1)) >> 64);
      std::swap(order[i], order[j]);
    }
    cachedEpoch = epoch;
  }
  return order[position];
}

uint64_t TokenBatches::getRowStart(uint64_t batch, int64_t row) const {
  uint64_t visit = batch * uint64_t(rows) + uint64_t(row);
  return windowAt(visit / windows, visit % windows) * uint64_t(seqLen);
}

void TokenBatches::read(uint64_t batch, int64_t rowBegin, int64_t rowEnd,
                        int64_t *tokens, int64_t *targets) const {
  std::vector<int64_t> window(seqLen + 1);
  for (int64_t row = rowBegin; row < rowEnd; ++row) {
    stream->read(getRowStart(batch, row), seqLen + 1, window.data());
    int64_t at = (row - rowBegin) * seqLen;
    std::copy(window.begin(), window.end() - 1, tokens + at);
    std::copy(window.begin() + 1, window.end(), targets + at);
  }
}

} // namespace dtensor::tooling

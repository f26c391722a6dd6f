//===- TokenBatches.h - Language-model batches of tokens -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Batches of `rows` sequences of `seqLen` tokens and their next-token
// targets, cut from a TokenStream as llm.c's loader cuts them: window w is
// tokens [w * seqLen, (w + 1) * seqLen] (seqLen + 1 tokens, the targets the
// inputs shifted by one), so a stream of N tokens holds (N - 1) / seqLen
// windows. Row r of batch b is the window at position b * rows + r of the
// visiting order, counted over epochs: epoch e visits every window once, in
// stream order or, with shuffling, in an order drawn from the seed and e
// alone (a Fisher-Yates shuffle driven by splitmix64, so the same seed gives
// the same batches on every machine and at every mesh). A batch is a
// function of its index: a run resumes at any batch, and each data-parallel
// rank reads only its rows.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_TOKENBATCHES_H
#define DTENSOR_TOOLING_TOKENBATCHES_H

#include "dtensor/Tooling/TokenStream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::tooling {

class TokenBatches {
public:
  /// Batches of `rows` x `seqLen` from `stream` (which must outlive them),
  /// shuffled by `seed` when it is given. "" or the error: rows or seqLen
  /// below 1, or a stream with fewer windows than one batch has rows.
  static std::string create(const TokenStream &stream, int64_t rows,
                            int64_t seqLen, std::optional<uint64_t> seed,
                            TokenBatches &batches);

  /// Windows in the stream: the rows of one epoch.
  uint64_t getWindows() const { return windows; }
  int64_t getRows() const { return rows; }
  int64_t getSeqLen() const { return seqLen; }

  /// The stream index of the first token of row `row` of batch `batch`.
  uint64_t getRowStart(uint64_t batch, int64_t row) const;

  /// Rows [rowBegin, rowEnd) of batch `batch`: their tokens and targets,
  /// each (rowEnd - rowBegin) x seqLen int64, row-major.
  void read(uint64_t batch, int64_t rowBegin, int64_t rowEnd, int64_t *tokens,
            int64_t *targets) const;

private:
  /// The window visited at position `position` of epoch `epoch`.
  uint64_t windowAt(uint64_t epoch, uint64_t position) const;

  const TokenStream *stream = nullptr;
  int64_t rows = 0, seqLen = 0;
  uint64_t windows = 0;
  std::optional<uint64_t> seed;
  /// The visiting order of the last epoch asked for (shuffled only).
  mutable uint64_t cachedEpoch = 0;
  mutable std::vector<uint64_t> order;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_TOKENBATCHES_H

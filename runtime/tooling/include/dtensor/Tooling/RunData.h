//===- RunData.h - Token batches fed to each step (--data) ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run --data: a training run's batches from token files
// (TokenStream.h: .npy and llm.c .bin shards, as one stream), cut as
// TokenBatches.h says into the entry's token input and its next-token
// targets. Step s reads batch start + s, and each rank reads only its shard
// of it (the rows, and the columns of a sequence-sharded input, its layout
// gives it). Every token is checked against the entry's index bounds (the
// manifest's `index_bounds`: the embedding's rows, the cross-entropy's
// classes) before any step.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_RUNDATA_H
#define DTENSOR_TOOLING_RUNDATA_H

#include "dtensor/Tooling/Npy.h"
#include "dtensor/Tooling/RunOptions.h"
#include "dtensor/Tooling/RunTensors.h"
#include "dtensor/Tooling/TokenBatches.h"
#include "dtensor/Tooling/TokenStream.h"

#include "dtensor/runtime.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::tooling {

/// Where a run's batches come from: --data (the trained entry's) or
/// --eval-data (the evaluated entry's).
struct DataSource {
  /// The flag, for messages.
  std::string flag;
  std::vector<std::string> files;
  std::optional<uint64_t> seed;
  /// The batch read at step 0.
  uint64_t start = 0;
  /// The entry fed ("": the artifact's default).
  std::string entry;
};

class RunData {
public:
  /// Opens and checks the files of `source` on this rank (no collective).
  /// "" or the error, naming the file.
  std::string open(const DataSource &source);

  /// With the source's entry selected: finds its token and target inputs
  /// (among `tensors`), this rank's shard of them, the bound of their ids
  /// (the manifest of `options.artifact`), checks every token against it
  /// and cuts the batches. The same on every rank: "" or the error.
  std::string bind(dtensor_program *program,
                   const std::vector<RunTensor> &tensors,
                   const RunOptions &options);

  /// This rank's shards of batch `start + step`: the token and target
  /// inputs' names and values.
  std::vector<std::pair<std::string, NpyArray>> shards(int64_t step) const;

  /// COLLECTIVE. Sets this rank's shards of batch `start + step` as the
  /// selected entry's token and target inputs; the failed call's status.
  dtensor_status setShards(dtensor_program *program, int64_t step) const;

  /// Tokens of one global batch.
  int64_t batchTokens() const { return rows * columns; }

private:
  TokenStream stream;
  TokenBatches batches;
  std::string tokens, targets;
  dtensor_dtype dtype = DTENSOR_I64;
  /// The global batch, and this rank's box of it.
  int64_t rows = 0, columns = 0;
  int64_t rowOffset = 0, localRows = 0, columnOffset = 0, localColumns = 0;
  DataSource source;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_RUNDATA_H

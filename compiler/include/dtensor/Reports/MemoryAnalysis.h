//===- MemoryAnalysis.h - Memory account of per-rank programs ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fills the memory account (MemoryAccount.h) of the entries of a per-rank
// program in two steps: the tensor program after collective fusion gives
// the arguments' roles and local shapes and the gradients; the same
// program bufferized, its deallocations placed, gives the allocations,
// whose peak over the entry's program points is the transient peak (each
// live until freed) or the last-use peak (until last used), and those
// used across the loss are the saved activations. Sizes are per rank: the
// dynamic dims of uneven shards are evaluated with each rank's mesh
// coordinates.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_REPORTS_MEMORYANALYSIS_H
#define DTENSOR_REPORTS_MEMORYANALYSIS_H

#include "dtensor/Reports/MemoryAccount.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace dtensor::memory {

class MemoryAnalysis {
public:
  /// Accounts `entries` of the per-rank tensor program `module` (after
  /// --dtensor-fuse-collectives) on ranks 0 to `worldSize` - 1.
  MemoryAnalysis(mlir::ModuleOp module, llvm::ArrayRef<std::string> entries,
                 int64_t worldSize);

  /// Adds the transient peaks and saved activations from `bufferized`, the
  /// same program after the target's bufferization stage: out-params
  /// (--dtensor-entry-out-params), one-shot bufferization and the buffer
  /// deallocation pipeline (mesh coordinates may be runtime calls).
  void addBufferizedProgram(mlir::ModuleOp bufferized);

  const std::vector<EntryMemory> &getEntries() const { return entries; }

  /// The local shape of each buffer argument of an entry on one rank: the
  /// tensor arguments, then the results that --dtensor-entry-out-params
  /// turns into arguments (those not updating state); -1 where unknown.
  using BufferShapes = std::vector<std::vector<int64_t>>;

private:
  std::vector<EntryMemory> entries;
  /// Per entry, per rank.
  std::vector<std::vector<BufferShapes>> shapes;
  /// Per entry, its number of tensor arguments: the first out-param after.
  std::vector<unsigned> argumentCounts;
  /// Per rank, the coordinates of the rank in each mesh that holds it.
  std::vector<llvm::StringMap<std::vector<int64_t>>> coords;
};

} // namespace dtensor::memory

#endif // DTENSOR_REPORTS_MEMORYANALYSIS_H

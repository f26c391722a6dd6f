//===- PlanEntries.h - Entry points of a model plan ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A model plan may name dims (`model.dims`, e.g. batch `B` and tokens `T`)
// that its shapes use in place of sizes, and list entry points
// (`model.entries`) that each give every dim a size: a prefill and a decode
// step of one model over shared parameters and state. Each entry is the
// plan with its sizes written in (docs/model-plan.md, "State and entry
// points").
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FRONTEND_PLANENTRIES_H
#define DTENSOR_FRONTEND_PLANENTRIES_H

#include "dtensor/Frontend/JsonTree.h"
#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/Support/LLVM.h"

#include <string>
#include <utility>
#include <vector>

namespace dtensor::frontend {

/// An entry of `model.entries`, or the one implied when there is none.
struct EntryDecl {
  std::string name;
  /// A size for each of `model.dims`, in their order.
  std::vector<std::pair<std::string, int64_t>> dims;
  /// The entry's object; null for the implied entry.
  const JsonNode *node = nullptr;
};

struct PlanEntries {
  std::vector<std::string> dims;
  /// At least one. Without `model.entries`, one entry named after the model
  /// (`main` by default) with no dims.
  std::vector<EntryDecl> entries;
  /// True when the plan lists its entries.
  bool listed = false;
};

/// Reads `model.dims` and `model.entries` of the plan `root` and checks that
/// every string in a `shape` array names a dim.
mlir::FailureOr<PlanEntries> readPlanEntries(const JsonNode &root,
                                             const JsonLocator &locator);

/// `root` with every dim name in a `shape` array replaced by the entry's
/// size (positions and paths kept, for diagnostics).
JsonNode specializePlan(const JsonNode &root, const EntryDecl &entry);

/// "B = 4, T = 1".
std::string describeDims(const EntryDecl &entry);

} // namespace dtensor::frontend

#endif // DTENSOR_FRONTEND_PLANENTRIES_H

//===- Manifest.cpp - Role names and the entry table ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The helpers of the manifest's data model. Reading, writing and checking a
// manifest are in ManifestFile.cpp, ManifestJson.cpp, ManifestHash.cpp and
// ManifestChecks.cpp.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Formats/Manifest.h"

namespace dtensor::rt {

const char *tensorRoleName(TensorRole role) {
  switch (role) {
  case TensorRole::Input:
    return "input";
  case TensorRole::Weight:
    return "weight";
  case TensorRole::Output:
    return "output";
  case TensorRole::State:
    return "state";
  case TensorRole::Parameter:
    return "parameter";
  }
  return "unknown";
}

int64_t formatVersionFor(const std::vector<TensorInfo> &tensors) {
  for (const TensorInfo &tensor : tensors)
    if (tensor.role == TensorRole::Parameter)
      return 2;
  return kOldestArtifactFormatVersion;
}

std::vector<EntryInfo> entryTable(const Manifest &manifest) {
  if (!manifest.entries.empty())
    return manifest.entries;
  EntryInfo entry;
  entry.name = manifest.entry;
  for (size_t i = 0; i < manifest.tensors.size(); ++i)
    (manifest.tensors[i].role == TensorRole::Output ? entry.results
                                                    : entry.arguments)
        .push_back(static_cast<int64_t>(i));
  return {entry};
}

} // namespace dtensor::rt

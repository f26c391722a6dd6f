//===- Groups.h - Communicators of collective groups ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A group of a mesh over some of its dims: the ranks whose coords agree on
// every other mesh dim, ordered row-major over the listed dims (the first
// listed most significant), exactly as layout::Mesh::groupMembers orders
// them. Mesh coords map to ranks of the context's communicator through the
// mesh's device ids; ranks outside the mesh take part in no group of it.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_GROUPS_H
#define DTENSOR_RUNTIME_GROUPS_H

#include "Communicator.h"

#include <optional>

namespace dtensor::rt {

/// A mesh and this rank's coordinate in it (none when outside the mesh).
struct MeshPlace {
  layout::Mesh mesh;
  std::optional<std::vector<int64_t>> coord;
};

/// The communicator of one group, for a rank inside the mesh; `comm` is null
/// and `members` empty for ranks outside it.
struct Group {
  int64_t mesh = 0;
  std::vector<int64_t> meshDims;
  std::unique_ptr<Communicator> comm;
  /// Mesh coords of the members, by group index.
  std::vector<std::vector<int64_t>> members;
};

/// COLLECTIVE over `world`: creates the group of `place`'s mesh over
/// `meshDims` that contains this rank. Every rank of `world` must call it
/// with the same mesh and dims.
Status createGroup(Communicator &world, const MeshPlace &place,
                   int64_t meshIndex, const std::vector<int64_t> &meshDims,
                   Group &group);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_GROUPS_H

//===- Groups.cpp - Communicators of a program's collective groups --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Groups.h"

#include <algorithm>

namespace dtensor::rt {

Status createGroup(Communicator &world, const MeshPlace &place,
                   int64_t meshIndex, const std::vector<int64_t> &meshDims,
                   Group &group) {
  group.mesh = meshIndex;
  group.meshDims = meshDims;
  group.members.clear();
  if (!place.coord)
    return world.split(/*color=*/-1, /*key=*/0, group.comm);

  // Ranks agreeing on the other mesh dims share a color: the row-major
  // index of their coords over those dims.
  const std::vector<int64_t> &coord = *place.coord;
  const layout::Mesh &mesh = place.mesh;
  int64_t color = 0;
  for (int64_t dim = 0; dim < mesh.rank(); ++dim)
    if (std::find(meshDims.begin(), meshDims.end(), dim) == meshDims.end())
      color = color * mesh.dimSize(dim) + coord[dim];
  int64_t key = mesh.groupIndex(meshDims, coord);
  if (Status s = world.split(static_cast<int>(color), static_cast<int>(key),
                             group.comm))
    return s;
  group.members = mesh.groupMembers(meshDims, coord);
  if (!group.comm || group.comm->size() != mesh.groupSize(meshDims) ||
      group.comm->rank() != key)
    return runtimeError("the communicator of a group of mesh " +
                        std::to_string(meshIndex) +
                        " does not match its mesh layout (are the device ids "
                        "the ranks of the context?)");
  return Status::success();
}

} // namespace dtensor::rt

//===- TopologyCosts.h - A topology file's links as costs -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What --topology FILE does to the cost model: the link class of each mesh
// dim of one mesh (docs/topology.md) becomes CostParams::meshDimLinks, so
// that propagation and the redistribute planner price each collective by
// the slowest class its group crosses.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PLANNER_TOPOLOGYCOSTS_H
#define DTENSOR_PLANNER_TOPOLOGYCOSTS_H

#include "dtensor/Formats/Topology.h"
#include "dtensor/Planner/CommCost.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dtensor::layout {

/// Sets params.meshDimLinks to the classes `topology` (read from `file`)
/// gives the dims of a mesh of `shape` called `dimNames` (empty when
/// unnamed). "" or the error of rt::resolveMeshDimLinks; `params` is left
/// as it was on an error.
std::string setMeshDimLinks(const rt::Topology &topology,
                            const std::string &file,
                            const std::vector<int64_t> &shape,
                            const std::vector<std::string> &dimNames,
                            CostParams &params);

/// "dp: ib (6.5 us, 25 GB/s), tp: nvlink (2 us, 300 GB/s)": the links of
/// params.meshDimLinks by mesh dim (its name when `dimNames` has one, else
/// its index), for explanations; "" without links.
std::string describeMeshDimLinks(const CostParams &params,
                                 const std::vector<std::string> &dimNames);

} // namespace dtensor::layout

#endif // DTENSOR_PLANNER_TOPOLOGYCOSTS_H

//===- TopologyCosts.cpp - A topology file's links in the cost model ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Planner/TopologyCosts.h"

#include <cstdio>

namespace dtensor::layout {

std::string setMeshDimLinks(const rt::Topology &topology,
                            const std::string &file,
                            const std::vector<int64_t> &shape,
                            const std::vector<std::string> &dimNames,
                            CostParams &params) {
  std::vector<rt::LinkClass> classes;
  if (std::string error =
          rt::resolveMeshDimLinks(topology, file, shape, dimNames, classes);
      !error.empty())
    return error;
  params.meshDimLinks.clear();
  for (const rt::LinkClass &link : classes)
    params.meshDimLinks.push_back(
        {link.name, link.latencyUs, link.bandwidthGBps});
  return "";
}

std::string describeMeshDimLinks(const CostParams &params,
                                 const std::vector<std::string> &dimNames) {
  std::string text;
  for (size_t dim = 0; dim < params.meshDimLinks.size(); ++dim) {
    const LinkCost &link = params.meshDimLinks[dim];
    char numbers[64];
    std::snprintf(numbers, sizeof(numbers), " (%.4g us, %.4g GB/s)",
                  link.latencyUs, link.bandwidthGBps);
    text += (text.empty() ? "" : ", ") +
            (dim < dimNames.size() && !dimNames[dim].empty()
                 ? dimNames[dim]
                 : std::to_string(dim)) +
            ": " + link.name + numbers;
  }
  return text;
}

} // namespace dtensor::layout

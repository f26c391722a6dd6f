//===- RunRanks.cpp - The ranks a run session runs on ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/RunRanks.h"

#include <cstdio>

namespace dtensor::tooling {

void RunRanks::report(const std::string &message, dtensor_status status) const {
  if (status == DTENSOR_ERR_PEER && rankNumber != 0)
    return;
  std::fprintf(stderr, "%s: %s%s\n", tool.c_str(),
               ranks > 1 ? ("rank " + std::to_string(rankNumber) + ": ").c_str()
                         : "",
               message.c_str());
}

} // namespace dtensor::tooling

//===- Log.h - One-line messages on stderr ----------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_EXAMPLES_SERVER_LOG_H
#define DTENSOR_EXAMPLES_SERVER_LOG_H

#include <string>

namespace dtensor::server {

/// Prefixes lines with the rank; --quiet keeps errors only.
void setLogRank(int rank, bool quiet);
void logInfo(const std::string &message);
void logError(const std::string &message);

} // namespace dtensor::server

#endif // DTENSOR_EXAMPLES_SERVER_LOG_H

//===- Log.cpp - One-line messages on stderr ------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Log.h"

#include <cstdio>

namespace dtensor::server {

namespace {
int logRank = 0;
bool logQuiet = false;

void line(const std::string &message) {
  // One fprintf per line: lines of several threads do not interleave.
  std::fprintf(stderr, "dtensor-server[%d]: %s\n", logRank, message.c_str());
}
} // namespace

void setLogRank(int rank, bool quiet) {
  logRank = rank;
  logQuiet = quiet;
}

void logInfo(const std::string &message) {
  if (!logQuiet)
    line(message);
}

void logError(const std::string &message) { line(message); }

} // namespace dtensor::server

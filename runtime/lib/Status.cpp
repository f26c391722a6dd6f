//===- Status.cpp - Errors of the runtime ---------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Status.h"

namespace dtensor::rt {

static thread_local std::string lastError;

dtensor_status report(const Status &status) {
  if (!status.ok()) {
    try {
      lastError = status.message();
    } catch (...) {
      lastError.clear();
    }
  }
  return status.code();
}

const char *lastErrorMessage() { return lastError.c_str(); }

} // namespace dtensor::rt

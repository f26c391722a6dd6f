//===- Status.h - Errors of the runtime -------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A Status is what every internal step returns: a dtensor_status code and a
// message. The C API turns a failed Status into its return value and the
// thread-local message behind dtensor_last_error().
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_STATUS_H
#define DTENSOR_RUNTIME_STATUS_H

#include "dtensor/runtime.h"

#include <string>

namespace dtensor::rt {

/// The outcome of a step: DTENSOR_OK or an error code with its message.
class Status {
public:
  Status() = default;
  Status(dtensor_status code, std::string message)
      : statusCode(code), text(std::move(message)) {}

  static Status success() { return Status(); }

  bool ok() const { return statusCode == DTENSOR_OK; }
  explicit operator bool() const { return !ok(); }
  dtensor_status code() const { return statusCode; }
  const std::string &message() const { return text; }

private:
  dtensor_status statusCode = DTENSOR_OK;
  std::string text;
};

inline Status invalidArgument(std::string message) {
  return Status(DTENSOR_ERR_INVALID_ARGUMENT, std::move(message));
}
inline Status runtimeError(std::string message) {
  return Status(DTENSOR_ERR_RUNTIME, std::move(message));
}
inline Status commError(std::string message) {
  return Status(DTENSOR_ERR_COMM, std::move(message));
}

/// Records `status` as this thread's last error (when it failed) and returns
/// its code: the last step of every C API function.
dtensor_status report(const Status &status);

/// This thread's last error message ("" if none).
const char *lastErrorMessage();

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_STATUS_H

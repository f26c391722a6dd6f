//===- JsonText.h - JSON values in error messages ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_RUNTIME_FORMATS_JSONTEXT_H
#define DTENSOR_RUNTIME_FORMATS_JSONTEXT_H

#include <nlohmann/json.hpp>

#include <string>

namespace dtensor::rt {

/// A short rendering of a JSON value for the "got ..." part of a message:
/// at most 60 characters.
std::string describeJson(const nlohmann::json &value);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_FORMATS_JSONTEXT_H

//===- JsonText.cpp - JSON values in error messages -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "JsonText.h"

std::string dtensor::rt::describeJson(const nlohmann::json &value) {
  std::string text;
  try {
    text = value.dump();
  } catch (const nlohmann::json::exception &) {
    return "a string that is not valid UTF-8";
  }
  if (text.size() > 60)
    text = text.substr(0, 57) + "...";
  return text;
}

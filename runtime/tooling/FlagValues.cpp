//===- FlagValues.cpp - Checks of the tools' flag values ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/FlagValues.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace dtensor::tooling {

namespace {

/// A number as the messages show it: 1e-05, 0.5, 3.
std::string shortNumber(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

} // namespace

// The validators have no description: CLI11 would append it to the value's
// name in the help ("--iters N:an integer >= 1").

std::optional<long long> parseDecimalInteger(const std::string &text) {
  size_t digits = text.empty() || (text[0] != '-' && text[0] != '+') ? 0 : 1;
  if (digits == text.size())
    return std::nullopt;
  for (size_t i = digits; i < text.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(text[i])))
      return std::nullopt;
  errno = 0;
  long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return std::nullopt;
  return value;
}

CLI::Validator integerIn(long long lo, long long hi) {
  std::string expected = "an integer in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]";
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        std::optional<long long> value = parseDecimalInteger(text);
        if (!value || *value < lo || *value > hi)
          return "expects " + expected + ", not '" + text + "'";
        text = std::to_string(*value);
        return "";
      },
      "");
}

CLI::Validator integerAtLeast(long long lo, long long max) {
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        std::optional<long long> value = parseDecimalInteger(text);
        if (!value || *value < lo)
          return "expects an integer >= " + std::to_string(lo) + ", not '" +
                 text + "'";
        if (*value > max)
          return "expects an integer >= " + std::to_string(lo) +
                 ", at most " + std::to_string(max) + ", not '" + text + "'";
        text = std::to_string(*value);
        return "";
      },
      "");
}

CLI::Validator numberAtLeast(double lo) {
  std::string expected = "a number >= " + shortNumber(lo);
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        char *end = nullptr;
        errno = 0;
        double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end || errno == ERANGE || !std::isfinite(value) ||
            value < lo)
          return "expects " + expected + ", not '" + text + "'";
        return "";
      },
      "");
}

CLI::Validator nameEqualsValue(const std::string &form) {
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        size_t equals = text.find('=');
        if (equals == std::string::npos || equals == 0 ||
            equals + 1 == text.size())
          return "expects " + form + ", not '" + text + "'";
        return "";
      },
      "");
}

std::pair<std::string, std::string> splitNameValue(const std::string &text) {
  size_t equals = text.find('=');
  if (equals == std::string::npos)
    return {text, ""};
  return {text.substr(0, equals), text.substr(equals + 1)};
}

CLI::Validator oneOf(const std::vector<std::string> &words) {
  std::string expected;
  for (size_t i = 0; i < words.size(); ++i)
    expected += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") +
                words[i];
  return CLI::Validator(
      [=](std::string &text) -> std::string {
        for (const std::string &word : words)
          if (text == word)
            return "";
        return "expects " + expected + ", not '" + text + "'";
      },
      "");
}

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= text.size();) {
    size_t end = std::min(text.find(',', start), text.size());
    if (end > start)
      items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

} // namespace dtensor::tooling

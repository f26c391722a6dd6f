//===- FlagValues.h - Checks of the tools' flag values ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CLI11 validators with the messages the dtensor tools print, e.g.
//   dtensor-run: --iters: expects an integer >= 1, not '0'
// (CLI11 puts the option's name in front). Pass them to an option's
// ->transform(): the integer check also rewrites the value as plain
// decimal, since CLI11 would read "010" as octal and "0x10" as hex.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_FLAGVALUES_H
#define DTENSOR_TOOLING_FLAGVALUES_H

#include <CLI/CLI.hpp>

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dtensor::tooling {

/// `text` as a decimal integer (an optional sign, then digits only), or
/// std::nullopt when it is not one or does not fit a long long.
std::optional<long long> parseDecimalInteger(const std::string &text);

/// A decimal integer in [lo, hi]: "expects an integer in [LO, HI], not
/// 'TEXT'".
CLI::Validator integerIn(long long lo, long long hi);

/// A decimal integer >= lo: "expects an integer >= LO, not 'TEXT'"; `max`
/// is the most the option's type holds ("expects an integer >= LO, at most
/// MAX, not 'TEXT'" above it).
CLI::Validator
integerAtLeast(long long lo,
               long long max = std::numeric_limits<long long>::max());

/// A finite decimal number >= lo: "expects a number >= LO, not 'TEXT'".
CLI::Validator numberAtLeast(double lo);

/// NAME=VALUE with neither part empty: "expects NAME=VALUE, not 'TEXT'"
/// (`form` is what the message shows, e.g. "NAME=FILE").
CLI::Validator nameEqualsValue(const std::string &form = "NAME=VALUE");

/// Splits NAME=VALUE at the first '='.
std::pair<std::string, std::string> splitNameValue(const std::string &text);

/// One of `words`: "expects error or hang, not 'TEXT'".
CLI::Validator oneOf(const std::vector<std::string> &words);

/// A comma-separated list's non-empty items ("a,,b," gives a, b).
std::vector<std::string> splitList(const std::string &text);

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_FLAGVALUES_H

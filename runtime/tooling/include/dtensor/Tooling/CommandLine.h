//===- CommandLine.h - The tools' command lines on CLI11 --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-run, dtensor-bench-ceilings and dtensor-server declare their flags
// on a CLI11 app (Debian's libcli11-dev, header-only) through this class,
// which gives them the same conventions:
//
// - `-h, --help` prints the usage line, a description, the arguments and
//   every option by group (each with its value's name: `--seed N`), and an
//   optional footer, to standard output; the tool then exits 0, whatever
//   else the command line holds;
// - a mistake prints `<tool>: <what is wrong>` to standard error (an unknown
//   option also prints the help) and the tool exits with its error status;
// - an option given more than once keeps its last value, unless it was
//   declared to collect them (repeatable options such as --input);
// - `--flag=value` is refused for flags.
//
// The values' checks, with the tools' messages, are in FlagValues.h.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_COMMANDLINE_H
#define DTENSOR_TOOLING_COMMANDLINE_H

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::tooling {

class CommandLine {
public:
  /// `tool` names the program in messages; `usage` is the help's first
  /// line(s), e.g. "usage: dtensor-run ARTIFACT [options]"; `description`
  /// the paragraph under it (lines broken by hand).
  CommandLine(std::string tool, std::string usage, std::string description);

  /// Where the tool declares its arguments and options. Option groups are
  /// the help's sections; options of group "" are hidden from the help.
  CLI::App &app() { return app_; }
  const std::string &tool() const { return tool_; }

  /// Adds `-h, --help` ("this text") to `group`: call it where the flag
  /// should appear in the help.
  CLI::Option *addHelp(const std::string &group = "Options");

  /// Parses the command line. std::nullopt when the tool should go on;
  /// otherwise the status to exit with: 0 after the help was printed to
  /// `out`, `errorStatus` after a mistake was reported on `err`.
  std::optional<int> parse(int argc, const char *const *argv, int errorStatus,
                           std::ostream &out = std::cout,
                           std::ostream &err = std::cerr);

  /// Reports `message` as the tool's error (`<tool>: <message>`), for the
  /// checks that come after parse().
  void error(const std::string &message, std::ostream &err = std::cerr) const;

  /// The help text --help prints.
  std::string help() const;

  /// The command line parse() read, in its order, without the options of
  /// `leaveOut`: each option by its first long name (else its short one)
  /// followed by its values, arguments as they were. What a tool that
  /// starts itself again (dtensor-run -n) passes on.
  std::vector<std::string>
  arguments(const std::vector<const CLI::Option *> &leaveOut = {}) const;

private:
  std::string tool_;
  CLI::App app_;
  CLI::Option *help_ = nullptr;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_COMMANDLINE_H

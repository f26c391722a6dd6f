//===- CommandLineTest.cpp - The tools' command lines on CLI11 ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/CommandLine.h"

#include "dtensor/Tooling/FlagValues.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace dtensor::tooling;

namespace {

/// A command line shaped like dtensor-run's, and what it parsed.
struct ToyTool {
  ToyTool() : cli("toy", "usage: toy ARTIFACT [options]", "Runs a toy.") {
    CLI::App &app = cli.app();
    app.add_option("ARTIFACT", artifacts, "the artifact");
    ranks = app.add_option("-n", rankCount, "ranks to start\nwith mpirun")
                ->type_name("RANKS")
                ->transform(integerAtLeast(1));
    app.add_option("--input", inputs, "an input (repeatable)")
        ->type_name("NAME=FILE")
        ->transform(nameEqualsValue("NAME=FILE"))
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false);
    app.add_option("--iters", iters, "steps")
        ->type_name("N")
        ->transform(integerAtLeast(1));
    app.add_option("--tolerance", tolerance, "relative error")
        ->type_name("X")
        ->transform(numberAtLeast(0));
    launcher = app.add_option("--mpirun", mpirun, "the launcher")
                   ->type_name("PATH");
    app.add_flag("-q,--quiet", quiet, "errors only");
    app.add_option("--secret", secret, "a testing aid")->group("");
    app.add_option("--fail-kind", failKind, "how to fail")
        ->type_name("error|hang")
        ->transform(oneOf({"error", "hang"}))
        ->group("Testing aids");
    cli.addHelp();
    cli.app().footer("Endpoints: none.");
  }

  /// Parses `args` (after the program name); the status or -1 to go on.
  int parse(std::vector<std::string> args) {
    args.insert(args.begin(), "toy");
    std::vector<const char *> argv;
    for (const std::string &arg : args)
      argv.push_back(arg.c_str());
    std::optional<int> status = cli.parse(static_cast<int>(argv.size()),
                                          argv.data(), 2, out, err);
    return status ? *status : -1;
  }

  CommandLine cli;
  std::vector<std::string> artifacts, inputs;
  int rankCount = 0, iters = 1;
  double tolerance = 0;
  std::string mpirun = "mpirun", secret, failKind = "error";
  bool quiet = false;
  CLI::Option *ranks = nullptr, *launcher = nullptr;
  std::ostringstream out, err;
};

TEST(CommandLineTest, Values) {
  ToyTool tool;
  ASSERT_EQ(tool.parse({"model.dtc", "-n", "4", "--input", "x=x.npy",
                        "--iters=3", "--tolerance", "1e-3", "-q", "--input",
                        "y=a=b", "--fail-kind", "hang"}),
            -1)
      << tool.err.str();
  EXPECT_EQ(tool.artifacts, std::vector<std::string>{"model.dtc"});
  EXPECT_EQ(tool.rankCount, 4);
  EXPECT_EQ(tool.inputs, (std::vector<std::string>{"x=x.npy", "y=a=b"}));
  EXPECT_EQ(tool.iters, 3);
  EXPECT_EQ(tool.tolerance, 1e-3);
  EXPECT_TRUE(tool.quiet);
  EXPECT_EQ(tool.failKind, "hang");
  EXPECT_EQ(tool.out.str(), "");
  EXPECT_EQ(tool.err.str(), "");
}

TEST(CommandLineTest, NothingGiven) {
  ToyTool tool;
  EXPECT_EQ(tool.parse({}), -1);
  EXPECT_TRUE(tool.artifacts.empty());
  EXPECT_EQ(tool.iters, 1);
  EXPECT_FALSE(tool.quiet);
}

TEST(CommandLineTest, TheLastOfRepeatedValuesWins) {
  ToyTool tool;
  ASSERT_EQ(tool.parse({"--iters", "2", "a", "--iters", "5", "-n3"}), -1)
      << tool.err.str();
  EXPECT_EQ(tool.iters, 5);
  EXPECT_EQ(tool.rankCount, 3);
}

TEST(CommandLineTest, RepeatableOptionTakesOneValueEach) {
  ToyTool tool;
  // "b" is not a second value of --input: it is an argument.
  ASSERT_EQ(tool.parse({"--input", "x=1", "a", "b"}), -1);
  EXPECT_EQ(tool.inputs, std::vector<std::string>{"x=1"});
  EXPECT_EQ(tool.artifacts, (std::vector<std::string>{"a", "b"}));
}

TEST(CommandLineTest, IntegersAreDecimal) {
  ToyTool tool;
  ASSERT_EQ(tool.parse({"--iters", "010"}), -1);
  EXPECT_EQ(tool.iters, 10);
}

TEST(CommandLineTest, Help) {
  ToyTool tool;
  EXPECT_EQ(tool.parse({"a", "--help", "--iters", "0"}), 0);
  EXPECT_EQ(tool.err.str(), "");
  const std::string help = tool.out.str();
  EXPECT_EQ(help, tool.cli.help());
  // The usage, the description, the arguments, the options by group with
  // the descriptions at column 27, continuation lines indented, the
  // testing aids, the footer; no hidden option.
  EXPECT_EQ(help, "usage: toy ARTIFACT [options]\n"
                  "\n"
                  "Runs a toy.\n"
                  "\n"
                  "Arguments:\n"
                  "  ARTIFACT                 the artifact\n"
                  "\n"
                  "Options:\n"
                  "  -n RANKS                 ranks to start\n"
                  "                           with mpirun\n"
                  "  --input NAME=FILE        an input (repeatable)\n"
                  "  --iters N                steps\n"
                  "  --tolerance X            relative error\n"
                  "  --mpirun PATH            the launcher\n"
                  "  -q, --quiet              errors only\n"
                  "  -h, --help               this text\n"
                  "\n"
                  "Testing aids:\n"
                  "  --fail-kind error|hang   how to fail\n"
                  "\n"
                  "Endpoints: none.\n");
  ToyTool shortFlag;
  EXPECT_EQ(shortFlag.parse({"-h"}), 0);
  EXPECT_EQ(shortFlag.out.str(), help);
}

TEST(CommandLineTest, UnknownOption) {
  ToyTool tool;
  EXPECT_EQ(tool.parse({"a", "--frobnicate"}), 2);
  EXPECT_EQ(tool.out.str(), "");
  const std::string err = tool.err.str();
  EXPECT_EQ(err.rfind("toy: unknown option --frobnicate\nusage: toy", 0), 0u)
      << err;
  EXPECT_NE(err.find("  --iters N"), std::string::npos);
}

TEST(CommandLineTest, BadValues) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"-n", "0"}, "toy: -n: expects an integer >= 1, not '0'\n"},
      {{"--iters", "x"}, "toy: --iters: expects an integer >= 1, not 'x'\n"},
      {{"--iters", "-3"}, "toy: --iters: expects an integer >= 1, not '-3'\n"},
      {{"--tolerance", "-1"},
       "toy: --tolerance: expects a number >= 0, not '-1'\n"},
      {{"--input", "x"}, "toy: --input: expects NAME=FILE, not 'x'\n"},
      {{"--fail-kind", "crash"},
       "toy: --fail-kind: expects error or hang, not 'crash'\n"},
  };
  for (const Case &c : cases) {
    ToyTool tool;
    EXPECT_EQ(tool.parse(c.args), 2) << c.message;
    EXPECT_EQ(tool.err.str(), c.message);
    EXPECT_EQ(tool.out.str(), "");
  }
}

TEST(CommandLineTest, MissingValue) {
  ToyTool tool;
  EXPECT_EQ(tool.parse({"a", "--iters"}), 2);
  const std::string err = tool.err.str();
  EXPECT_EQ(err.rfind("toy: --iters", 0), 0u) << err;
}

TEST(CommandLineTest, FlagsTakeNoValue) {
  ToyTool tool;
  EXPECT_EQ(tool.parse({"a", "--quiet=false"}), 2);
  const std::string err = tool.err.str();
  EXPECT_EQ(err.rfind("toy: ", 0), 0u) << err;
  EXPECT_NE(err.find("quiet"), std::string::npos) << err;
}

TEST(CommandLineTest, Error) {
  ToyTool tool;
  tool.cli.error("more than one artifact given", tool.err);
  EXPECT_EQ(tool.err.str(), "toy: more than one artifact given\n");
}

TEST(CommandLineTest, ArgumentsAgain) {
  ToyTool tool;
  ASSERT_EQ(tool.parse({"-q", "--input", "x=1", "-n", "3", "model.dtc",
                        "--iters=010", "--mpirun", "/bin/fake", "--input",
                        "y=2", "--quiet"}),
            -1);
  // In their order, less -n and --mpirun; long names, plain values.
  EXPECT_EQ(tool.cli.arguments({tool.ranks, tool.launcher}),
            (std::vector<std::string>{"--quiet", "--input", "x=1",
                                      "model.dtc", "--iters", "10",
                                      "--input", "y=2", "--quiet"}));
  EXPECT_EQ(tool.cli.arguments().size(), 13u);
  EXPECT_EQ(tool.cli.arguments()[3], "-n");
  EXPECT_EQ(tool.cli.arguments()[4], "3");

  // A value given twice: both go on, so that the last still wins.
  ToyTool twice;
  ASSERT_EQ(twice.parse({"--iters", "2", "a", "--iters=5", "-n", "2", "-n",
                         "4"}),
            -1);
  EXPECT_EQ(twice.iters, 5);
  EXPECT_EQ(twice.cli.arguments({twice.ranks}),
            (std::vector<std::string>{"--iters", "2", "a", "--iters", "5"}));
}

} // namespace

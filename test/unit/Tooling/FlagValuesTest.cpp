//===- FlagValuesTest.cpp - Checks of the tools' flag values --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Tooling/FlagValues.h"

#include <gtest/gtest.h>

using namespace dtensor::tooling;

namespace {

/// What `validator` says of `text` ("" when accepted), and the text after.
std::pair<std::string, std::string> check(const CLI::Validator &validator,
                                          std::string text) {
  std::string message = validator(text);
  return {message, text};
}

TEST(FlagValuesTest, ParseDecimalInteger) {
  EXPECT_EQ(parseDecimalInteger("0"), 0);
  EXPECT_EQ(parseDecimalInteger("42"), 42);
  EXPECT_EQ(parseDecimalInteger("-7"), -7);
  EXPECT_EQ(parseDecimalInteger("+7"), 7);
  EXPECT_EQ(parseDecimalInteger("010"), 10);
  EXPECT_EQ(parseDecimalInteger("9223372036854775807"),
            9223372036854775807LL);
  for (const char *bad : {"", "-", "+", "1.5", "1e3", "0x10", " 1", "1 ",
                          "12a", "9223372036854775808"})
    EXPECT_FALSE(parseDecimalInteger(bad)) << bad;
}

TEST(FlagValuesTest, Integers) {
  CLI::Validator atLeastOne = integerAtLeast(1);
  EXPECT_EQ(check(atLeastOne, "3"),
            std::make_pair(std::string(), std::string("3")));
  // Rewritten as plain decimal: CLI11 would read "010" as octal.
  EXPECT_EQ(check(atLeastOne, "010").second, "10");
  EXPECT_EQ(check(atLeastOne, "+5").second, "5");
  EXPECT_EQ(check(atLeastOne, "0").first, "expects an integer >= 1, not '0'");
  EXPECT_EQ(check(atLeastOne, "x").first, "expects an integer >= 1, not 'x'");
  EXPECT_EQ(check(atLeastOne, "0x10").first,
            "expects an integer >= 1, not '0x10'");
  EXPECT_EQ(check(atLeastOne, "9223372036854775808").first,
            "expects an integer >= 1, not '9223372036854775808'");
  CLI::Validator anInt = integerAtLeast(0, 2147483647);
  EXPECT_EQ(check(anInt, "2147483647").first, "");
  EXPECT_EQ(check(anInt, "2147483648").first,
            "expects an integer >= 0, at most 2147483647, not '2147483648'");
  CLI::Validator port = integerIn(0, 65535);
  EXPECT_EQ(check(port, "65535").first, "");
  EXPECT_EQ(check(port, "65536").first,
            "expects an integer in [0, 65535], not '65536'");
  EXPECT_EQ(check(port, "-1").first,
            "expects an integer in [0, 65535], not '-1'");
}

TEST(FlagValuesTest, NumberAtLeast) {
  CLI::Validator nonNegative = numberAtLeast(0);
  for (const char *good : {"0", "1e-3", "2.5", "1E2", "0.0"})
    EXPECT_EQ(check(nonNegative, good).first, "") << good;
  EXPECT_EQ(check(nonNegative, "-1e-3").first,
            "expects a number >= 0, not '-1e-3'");
  for (const char *bad : {"", "nan", "inf", "1e999", "1x", "one"})
    EXPECT_EQ(check(nonNegative, bad).first,
              std::string("expects a number >= 0, not '") + bad + "'");
  EXPECT_EQ(check(numberAtLeast(0.5), "0.25").first,
            "expects a number >= 0.5, not '0.25'");
}

TEST(FlagValuesTest, NameEqualsValue) {
  CLI::Validator nameFile = nameEqualsValue("NAME=FILE");
  EXPECT_EQ(check(nameFile, "x=x.npy").first, "");
  EXPECT_EQ(check(nameFile, "x=a=b").first, "");
  for (const char *bad : {"x", "=x.npy", "x=", "", "="})
    EXPECT_EQ(check(nameFile, bad).first,
              std::string("expects NAME=FILE, not '") + bad + "'");
  EXPECT_EQ(splitNameValue("x=a=b"), std::make_pair(std::string("x"),
                                                    std::string("a=b")));
  EXPECT_EQ(splitNameValue("x").first, "x");
  EXPECT_EQ(splitNameValue("x").second, "");
}

TEST(FlagValuesTest, OneOf) {
  CLI::Validator kind = oneOf({"error", "hang"});
  EXPECT_EQ(check(kind, "hang").first, "");
  EXPECT_EQ(check(kind, "crash").first, "expects error or hang, not 'crash'");
  EXPECT_EQ(check(oneOf({"a", "b", "c"}), "d").first,
            "expects a, b or c, not 'd'");
}

TEST(FlagValuesTest, SplitList) {
  EXPECT_EQ(splitList("Haswell,auto"),
            (std::vector<std::string>{"Haswell", "auto"}));
  EXPECT_EQ(splitList(",a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(splitList("").empty());
  EXPECT_TRUE(splitList(",,").empty());
}

} // namespace

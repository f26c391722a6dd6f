//===- DebugOutputTest.cpp - the tools' --debug and --debug-only ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Driver/DebugOutput.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"

#include <gtest/gtest.h>

#ifndef NDEBUG
// Registered once (a second call finds them and adds nothing); parsing
// --debug-only switches the output on for exactly the listed types.
TEST(DebugOutputTest, DebugOnlySelectsTypes) {
  dtensor::driver::registerDebugOutputOptions();
  dtensor::driver::registerDebugOutputOptions();
  ASSERT_TRUE(llvm::cl::getRegisteredOptions().count("debug"));
  ASSERT_TRUE(llvm::cl::getRegisteredOptions().count("debug-only"));
  const char *argv[] = {"tool", "--debug-only=dtensor-partition,dtensor-x"};
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(2, argv, "", &llvm::nulls()));
  EXPECT_TRUE(llvm::DebugFlag);
  EXPECT_TRUE(llvm::isCurrentDebugType("dtensor-partition"));
  EXPECT_TRUE(llvm::isCurrentDebugType("dtensor-x"));
  EXPECT_FALSE(llvm::isCurrentDebugType("dtensor-propagate"));
  llvm::DebugFlag = false;
}
#endif

//===- DebugOutput.cpp - The tools' --debug and --debug-only --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Driver/DebugOutput.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"

#include <string>
#include <vector>

void dtensor::driver::registerDebugOutputOptions() {
#ifndef NDEBUG
  // A libLLVM built with assertions registers both itself.
  if (llvm::cl::getRegisteredOptions().count("debug-only"))
    return;
  static std::vector<std::string> types;
  static llvm::cl::opt<bool> debug(
      "debug", llvm::cl::desc("Print the debug output of every pass"),
      llvm::cl::Hidden,
      llvm::cl::callback([](const bool &on) { llvm::DebugFlag = on; }));
  static llvm::cl::list<std::string> debugOnly(
      "debug-only",
      llvm::cl::desc("Print the debug output of these passes only (their "
                     "DEBUG_TYPE: the pass argument, e.g. dtensor-partition)"),
      llvm::cl::Hidden, llvm::cl::CommaSeparated,
      llvm::cl::value_desc("type,..."),
      llvm::cl::callback([](const std::string &type) {
        types.push_back(type);
        std::vector<const char *> names;
        for (const std::string &name : types)
          names.push_back(name.c_str());
        llvm::DebugFlag = true;
        llvm::setCurrentDebugTypes(names.data(), names.size());
      }));
#endif
}

//===- DebugOutput.h - The tools' --debug and --debug-only ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// dtensor's passes print what they decide under LLVM_DEBUG, keyed by their
// DEBUG_TYPE (the pass argument, e.g. dtensor-partition). LLVM registers the
// options that switch this output on (-debug, -debug-only) only in a build
// with assertions; Debian's libLLVM is built without them, while dtensor's
// own code keeps LLVM_DEBUG (DTENSOR_ENABLE_ASSERTIONS). The tools register
// the two options here instead, with LLVM's names and meaning.
//
//===----------------------------------------------------------------------===//
#ifndef DTENSOR_DRIVER_DEBUGOUTPUT_H
#define DTENSOR_DRIVER_DEBUGOUTPUT_H

namespace dtensor::driver {

/// Registers `--debug` (every pass's debug output) and `--debug-only=<types>`
/// (a comma-separated list of DEBUG_TYPEs) as command-line options, unless
/// the LLVM library already has them. Call before parsing the command line.
/// Does nothing when dtensor is built with NDEBUG (no LLVM_DEBUG output).
void registerDebugOutputOptions();

} // namespace dtensor::driver

#endif // DTENSOR_DRIVER_DEBUGOUTPUT_H

//===- WithDebugType.cpp - a pass with DEBUG_TYPE -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "llvm/Support/Debug.h"

namespace dtensor {
#define GEN_PASS_DEF_WITHDEBUGTYPE
#include "dtensor/Stage/Passes.h.inc"
} // namespace dtensor

#define DEBUG_TYPE "dtensor-with-debug-type"

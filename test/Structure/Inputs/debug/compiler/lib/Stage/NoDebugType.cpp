//===- NoDebugType.cpp - a pass without DEBUG_TYPE ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

namespace dtensor {
#define GEN_PASS_DEF_NODEBUGTYPE
#include "dtensor/Stage/Passes.h.inc"
} // namespace dtensor

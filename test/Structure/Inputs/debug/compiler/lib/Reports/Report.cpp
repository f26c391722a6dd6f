//===- Report.cpp - a report pass, which prints its report ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

namespace dtensor {
#define GEN_PASS_DEF_REPORT
#include "dtensor/Reports/Passes.h.inc"
} // namespace dtensor

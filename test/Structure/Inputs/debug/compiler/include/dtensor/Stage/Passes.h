//===- Passes.h - a header that mentions GEN_PASS_DEF_ ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Only files under compiler/lib are checked.
#ifndef DTENSOR_STAGE_PASSES_H
#define DTENSOR_STAGE_PASSES_H
#define GEN_PASS_DEF_IN_A_HEADER
#endif // DTENSOR_STAGE_PASSES_H

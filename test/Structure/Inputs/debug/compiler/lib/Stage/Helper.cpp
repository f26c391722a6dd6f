//===- Helper.cpp - code that defines no pass -----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

int helper() { return 0; }

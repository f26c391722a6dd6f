//===- Tool.cpp - A tool that spells one too ------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
bool named = attr.getName() == "dtensor.name";

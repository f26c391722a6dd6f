//===- Lowering.cpp - Codegen may include codegen -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/RuntimeCalls.h"
#include "dtensor/Partition/Passes.h"

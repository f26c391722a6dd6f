//===- UsesDriver.cpp - a dialect file that reaches up --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "dtensor/Propagation/Passes.h"
#include "mlir/IR/Value.h"

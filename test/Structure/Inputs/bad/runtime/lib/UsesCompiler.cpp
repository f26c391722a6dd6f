//===- UsesCompiler.cpp - a runtime file that reaches up ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "dtensor/Propagation/Passes.h"
#include "mlir/IR/Value.h"
#include "../../compiler/lib/Stage/Private.h"

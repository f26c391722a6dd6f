//===- DTensorTypes.cpp - dtensor types -------------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Dialect/DTensor/DTensorTypes.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dtensor;

#define GET_TYPEDEF_CLASSES
#include "dtensor/Dialect/DTensor/DTensorTypes.cpp.inc"

void DTensorDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dtensor/Dialect/DTensor/DTensorTypes.cpp.inc"
      >();
}

//===- OutlinedFunction.h - a loop nest moved into a function ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_COMPILER_CODEGEN_CPU_OUTLINEDFUNCTION_H
#define DTENSOR_COMPILER_CODEGEN_CPU_OUTLINEDFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

namespace dtensor::codegen {

/// The op defining `value` when it is a constant that can be cloned
/// anywhere (constant-like, without operands or regions), else null.
mlir::Operation *getClonableConstant(mlir::Value value);

/// What an outlined function takes from the code around it: the constants
/// it clones (so that a nest keeps its static bounds and steps, and
/// identical nests get identical signatures) and the values it takes as
/// arguments, in the order of `captured`.
struct Captures {
  llvm::SmallVector<mlir::Operation *> constants;
  llvm::SmallVector<mlir::Value> arguments;
};
/// Splits `captured` into clonable constants and arguments; `arguments`
/// starts with `leading` (passed first, whatever they are).
Captures splitCaptures(const llvm::SetVector<mlir::Value> &captured,
                       mlir::ValueRange leading = {});

/// A new private function `name` in `symbols` taking the types of
/// `captures.arguments` and returning `results`, that LLVM never inlines
/// (one call site each: its inliner would put the nest straight back; the
/// func-to-LLVM conversion keeps `passthrough` and drops a `no_inline` on
/// func.func). Its entry block starts with clones of the constants, mapped
/// in `mapping`; `builder` (whose insertion point is cleared first) is left
/// after them.
mlir::func::FuncOp createOutlinedFunction(mlir::OpBuilder &builder,
                                          mlir::Location loc,
                                          llvm::StringRef name,
                                          const Captures &captures,
                                          mlir::TypeRange results,
                                          mlir::SymbolTable &symbols,
                                          mlir::IRMapping &mapping);

} // namespace dtensor::codegen

#endif // DTENSOR_COMPILER_CODEGEN_CPU_OUTLINEDFUNCTION_H

//===- ModulePath.h - Module paths and the patterns over them ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A model plan's ops name the module they belong to by a dotted path
// (docs/model-plan.md, "module tree"), carried into the IR as the op's
// location `loc("<module>"(...))`. The plan's module patterns (styles,
// local maps, fully_shard, the training section's
// activation_checkpointing) match these paths segment by segment, as
// PyTorch's parallelize_module matches module names with fnmatch.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TRAINING_MODULEPATH_H
#define DTENSOR_TRAINING_MODULEPATH_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace dtensor {

/// True when the dotted `path` matches `pattern` segment by segment, each
/// segment with `*` and `?` wildcards.
bool matchModulePattern(llvm::StringRef pattern, llvm::StringRef path);

/// True when module `module` contains an op of module `opModule` (the root
/// module "" contains everything).
bool moduleContains(llvm::StringRef module, llvm::StringRef opModule);

/// The outermost module that contains module `path` (`path` itself
/// included, the root excluded) and that one of `patterns` matches; ""
/// when none does. The result is a prefix of `path`.
llvm::StringRef findMatchedModule(llvm::ArrayRef<std::string> patterns,
                                  llvm::StringRef path);

/// The module path an op's location names: the name of its outermost
/// NameLoc, looking through the backward mark's FusedLoc; "" (the root
/// module) when there is none.
llvm::StringRef getLocationModule(mlir::Location loc);

} // namespace dtensor

#endif // DTENSOR_TRAINING_MODULEPATH_H

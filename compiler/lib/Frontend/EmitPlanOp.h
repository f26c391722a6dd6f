//===- EmitPlanOp.h - One plan op, emitted and checked ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the importer and the bodies of local maps do alike for each op of
// the plan: its location, its emission (a custom op's call or the op's own
// emitter) and the checks that follow it.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_COMPILER_FRONTEND_EMITPLANOP_H
#define DTENSOR_COMPILER_FRONTEND_EMITPLANOP_H

#include "dtensor/Frontend/ModelPlan.h"
#include "dtensor/Frontend/OpEmitter.h"

namespace dtensor::frontend {

/// The location of a plan object: NameLoc(module, file position), or the
/// file position alone outside any module.
mlir::Location getPlanLocation(llvm::StringRef module, const JsonNode &node,
                               const JsonLocator &locator);

/// Emits `op` with `emitter` (whose inputs are the op's): a custom op's
/// call, or the op's definition. Errors when it made another number of
/// values than the op has outputs (an internal error) and at each member
/// of the op's object that nothing read.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitPlanOp(const OpDecl &op, OpEmitter &emitter, const JsonLocator &locator);

} // namespace dtensor::frontend

#endif // DTENSOR_COMPILER_FRONTEND_EMITPLANOP_H

//===- EmitPlanOp.cpp - One op of a model plan, emitted and checked -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "EmitPlanOp.h"

#include "dtensor/Frontend/CustomOpDecls.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace dtensor::frontend;

Location dtensor::frontend::getPlanLocation(llvm::StringRef module,
                                            const JsonNode &node,
                                            const JsonLocator &locator) {
  FileLineColLoc at = locator.get(node);
  if (module.empty())
    return at;
  return NameLoc::get(StringAttr::get(locator.getContext(), module), at);
}

/// Errors at the op object for members no accessor of `emitter` read.
static LogicalResult checkUnreadAttributes(const OpDecl &op,
                                           const OpEmitter &emitter,
                                           const JsonLocator &locator) {
  static constexpr llvm::StringLiteral kCommon[] = {"op", "module", "inputs",
                                                    "output", "outputs"};
  for (const auto &[key, value] : op.node->members) {
    if (llvm::is_contained(kCommon, key) || emitter.getReadKeys().contains(key))
      continue;
    return locator.emitError(value)
           << "unknown attribute '" << key << "' of op '" << op.definition->name
           << "'";
  }
  return success();
}

FailureOr<SmallVector<Value>>
dtensor::frontend::emitPlanOp(const OpDecl &op, OpEmitter &emitter,
                              const JsonLocator &locator) {
  FailureOr<SmallVector<Value>> results =
      op.custom ? emitCustomOp(emitter, *op.custom)
                : op.definition->emit(emitter);
  if (failed(results))
    return failure();
  if (results->size() != op.outputs.size())
    return locator.emitError(*op.node)
           << "internal error: '" << op.definition->name << "' made "
           << results->size() << " result(s) for " << op.outputs.size()
           << " output(s)";
  if (failed(checkUnreadAttributes(op, emitter, locator)))
    return failure();
  return results;
}

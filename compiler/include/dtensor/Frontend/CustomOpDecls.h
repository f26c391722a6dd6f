//===- CustomOpDecls.h - Custom ops declared by a model plan ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The `model.custom_ops` of a model plan (docs/custom-ops.md): ops that a
// user's shared library implements on local tensors, each with its
// signature (input dtypes and ranks), the shape rule of its output, the C
// symbol of its kernel and, optionally, its sharding strategies in the form
// of PyTorch's `register_sharding`.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_FRONTEND_CUSTOMOPDECLS_H
#define DTENSOR_FRONTEND_CUSTOMOPDECLS_H

#include "dtensor/Dialect/DTensor/DTensorAttrs.h"
#include "dtensor/Frontend/JsonTree.h"
#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/IR/Types.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtensor::frontend {

/// One input of a custom op's signature.
struct CustomOpInput {
  std::string name;
  mlir::Type dtype;
  int64_t rank = 0;
};

/// One dim of a custom op's output: a fixed size, or the size of dim `dim`
/// (non-negative) of input `input`.
struct CustomOpOutputDim {
  std::optional<int64_t> size;
  unsigned input = 0;
  int64_t dim = 0;
};

struct CustomOpDecl {
  std::string name;
  std::string symbol;
  std::vector<CustomOpInput> inputs;
  mlir::Type outputDtype;
  std::vector<CustomOpOutputDim> outputShape;
  /// Each strategy: the output's placement, then one per input (PyTorch's
  /// (output placements, input placements) for one mesh dim). Absent: the
  /// op runs replicated.
  std::optional<std::vector<std::vector<PlacementAttr>>> strategies;
  /// `backward[i]`: the declared custom op that computes input i's gradient
  /// from this op's inputs and its output's gradient, or null for an input
  /// without a gradient. Absent: the op has no gradient.
  std::optional<std::vector<const CustomOpDecl *>> backward;
  const JsonNode *node = nullptr;
  /// How the importer calls it: `inputs.size()` inputs, one output. Its
  /// emit function is null; the importer calls emitCustomOp.
  OpDefinition definition;
};

/// Reads `model.custom_ops` (`list`). A name that is a built-in op kind or
/// declared twice, a dtype, rank or shape rule out of range, a strategy
/// that does not fit the op's arity or ranks, or a backward that names no
/// declared op, the op itself, or an op whose signature is not that of the
/// input's gradient is an error at its JSON path.
mlir::LogicalResult
readCustomOpDecls(const JsonNode &list, const JsonLocator &locator,
                  std::vector<std::shared_ptr<const CustomOpDecl>> &decls);

/// Builds a call of `decl` on the emitter's inputs: checks their dtypes and
/// ranks against the signature (and that each declared backward gives its
/// input's shape), then a `dtensor.custom_call` into a `tensor.empty` of the
/// output's shape, its backward ops as the call's `backward` attribute.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
emitCustomOp(OpEmitter &emitter, const CustomOpDecl &decl);

} // namespace dtensor::frontend

#endif // DTENSOR_FRONTEND_CUSTOMOPDECLS_H

//===- CustomOps.cpp - Calls of the plan's custom ops ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "EmitSupport.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/Frontend/CustomOpDecls.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

FailureOr<SmallVector<Value>>
dtensor::frontend::emitCustomOp(OpEmitter &emitter, const CustomOpDecl &decl) {
  // Read by the plan reader, which found `decl` by it.
  (void)emitter.getNode("custom_op");
  for (auto [index, input] : llvm::enumerate(decl.inputs)) {
    RankedTensorType type = emitter.inputType(index);
    if (type.getElementType() != input.dtype || type.getRank() != input.rank)
      return emitter.emitInputError(index)
             << "input '" << emitter.inputName(index) << "' is "
             << formatDtype(type.getElementType())
             << formatShape(type.getShape()) << "; custom op '" << decl.name
             << "' takes its input '" << input.name << "' as "
             << formatDtype(input.dtype) << " of rank " << input.rank;
  }
  SmallVector<int64_t> shape;
  for (const CustomOpOutputDim &dim : decl.outputShape)
    shape.push_back(dim.size
                        ? *dim.size
                        : emitter.inputType(dim.input).getDimSize(dim.dim));
  OpBuilder &b = emitter.builder;
  Value init = tensor::EmptyOp::create(b, emitter.loc, shape, decl.outputDtype);
  ArrayAttr strategies;
  if (decl.strategies) {
    SmallVector<Attribute> list;
    for (const std::vector<PlacementAttr> &strategy : *decl.strategies)
      list.push_back(b.getArrayAttr(
          SmallVector<Attribute>(strategy.begin(), strategy.end())));
    strategies = b.getArrayAttr(list);
  }
  auto call = CustomCallOp::create(b, emitter.loc, init.getType(), init,
                                   emitter.inputs(), b.getStringAttr(decl.name),
                                   b.getStringAttr(decl.symbol), strategies);
  return SmallVector<Value>{call.getResult()};
}

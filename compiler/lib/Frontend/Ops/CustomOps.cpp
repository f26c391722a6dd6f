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

namespace {

/// The shape `decl` gives its output on inputs of `types`.
SmallVector<int64_t> outputShape(const CustomOpDecl &decl,
                                 ArrayRef<RankedTensorType> types) {
  SmallVector<int64_t> shape;
  for (const CustomOpOutputDim &dim : decl.outputShape)
    shape.push_back(dim.size ? *dim.size
                             : types[dim.input].getDimSize(dim.dim));
  return shape;
}

/// `decl`'s strategies as the attribute of a dtensor.custom_call; null
/// without strategies.
ArrayAttr strategiesAttr(OpBuilder &b, const CustomOpDecl &decl) {
  if (!decl.strategies)
    return ArrayAttr();
  SmallVector<Attribute> list;
  for (const std::vector<PlacementAttr> &strategy : *decl.strategies)
    list.push_back(b.getArrayAttr(
        SmallVector<Attribute>(strategy.begin(), strategy.end())));
  return b.getArrayAttr(list);
}

} // namespace

FailureOr<SmallVector<Value>>
dtensor::frontend::emitCustomOp(OpEmitter &emitter, const CustomOpDecl &decl) {
  // Read by the plan reader, which found `decl` by it.
  (void)emitter.getNode("custom_op");
  SmallVector<RankedTensorType> types;
  for (auto [index, input] : llvm::enumerate(decl.inputs)) {
    RankedTensorType type = emitter.inputType(index);
    if (type.getElementType() != input.dtype || type.getRank() != input.rank)
      return emitter.emitInputError(index)
             << "input '" << emitter.inputName(index) << "' is "
             << formatDtype(type.getElementType())
             << formatShape(type.getShape()) << "; custom op '" << decl.name
             << "' takes its input '" << input.name << "' as "
             << formatDtype(input.dtype) << " of rank " << input.rank;
    types.push_back(type);
  }
  OpBuilder &b = emitter.builder;
  auto resultType =
      RankedTensorType::get(outputShape(decl, types), decl.outputDtype);

  // Each backward op, on the inputs and the output's gradient, must give
  // its input's shape: the declarations checked dtypes and ranks only.
  ArrayAttr backward;
  if (decl.backward) {
    SmallVector<RankedTensorType> backwardTypes(types);
    backwardTypes.push_back(resultType);
    SmallVector<Attribute> entries;
    for (auto [index, op] : llvm::enumerate(*decl.backward)) {
      if (!op) {
        entries.push_back(b.getUnitAttr());
        continue;
      }
      SmallVector<int64_t> shape = outputShape(*op, backwardTypes);
      if (ArrayRef<int64_t>(shape) != types[index].getShape())
        return emitter.emitInputError(index)
               << "the gradient of input '" << emitter.inputName(index) << "' ("
               << formatDtype(types[index].getElementType())
               << formatShape(types[index].getShape())
               << ") would be the output of custom op '" << op->name
               << "', which is " << formatShape(shape) << " here";
      SmallVector<NamedAttribute> members{
          b.getNamedAttr("op_name", b.getStringAttr(op->name)),
          b.getNamedAttr("symbol", b.getStringAttr(op->symbol))};
      if (ArrayAttr strategies = strategiesAttr(b, *op))
        members.push_back(b.getNamedAttr("strategies", strategies));
      entries.push_back(b.getDictionaryAttr(members));
    }
    backward = b.getArrayAttr(entries);
  }

  Value init = tensor::EmptyOp::create(b, emitter.loc, resultType.getShape(),
                                       decl.outputDtype);
  auto call = CustomCallOp::create(b, emitter.loc, init.getType(), init,
                                   emitter.inputs(), b.getStringAttr(decl.name),
                                   b.getStringAttr(decl.symbol),
                                   strategiesAttr(b, decl), backward);
  return SmallVector<Value>{call.getResult()};
}

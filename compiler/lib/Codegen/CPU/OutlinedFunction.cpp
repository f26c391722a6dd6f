//===- OutlinedFunction.cpp - a loop nest moved into a function -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OutlinedFunction.h"

using namespace mlir;

Operation *dtensor::codegen::getClonableConstant(Value value) {
  Operation *producer = value.getDefiningOp();
  if (producer && producer->hasTrait<OpTrait::ConstantLike>() &&
      producer->getNumOperands() == 0 && producer->getNumRegions() == 0)
    return producer;
  return nullptr;
}

dtensor::codegen::Captures
dtensor::codegen::splitCaptures(const llvm::SetVector<Value> &captured,
                                ValueRange leading) {
  Captures captures;
  llvm::append_range(captures.arguments, leading);
  for (Value value : captured) {
    if (Operation *constant = getClonableConstant(value))
      captures.constants.push_back(constant);
    else
      captures.arguments.push_back(value);
  }
  return captures;
}

func::FuncOp dtensor::codegen::createOutlinedFunction(
    OpBuilder &builder, Location loc, StringRef name, const Captures &captures,
    TypeRange results, SymbolTable &symbols, IRMapping &mapping) {
  MLIRContext *context = builder.getContext();
  auto type = FunctionType::get(
      context, ValueRange(captures.arguments).getTypes(), results);
  builder.clearInsertionPoint();
  auto func = func::FuncOp::create(builder, loc, name, type);
  func.setPrivate();
  func->setAttr("passthrough",
                builder.getArrayAttr({builder.getStringAttr("noinline")}));
  symbols.insert(func);
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  for (Operation *constant : captures.constants)
    builder.clone(*constant, mapping);
  return func;
}

//===- DTensorAsyncOps.cpp - dtensor.start, yield and wait ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The asynchronous form of a collective: dtensor.start issues it and returns
// futures, dtensor.wait completes it and returns the tensors.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Dialect/DTensor/DTensorOps.h"

using namespace mlir;
using namespace dtensor;

//===----------------------------------------------------------------------===//
// StartOp
//===----------------------------------------------------------------------===//

Operation *StartOp::getCollective() { return &getBody().front().front(); }

LogicalResult StartOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 0)
    return emitOpError("body must not take arguments");
  // The op's verifier runs before its blocks are checked for terminators.
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end in dtensor.yield");
  if (!llvm::hasSingleElement(body.without_terminator()))
    return emitOpError("body must hold exactly one collective before its "
                       "dtensor.yield");
  Operation *collective = getCollective();
  if (!collective->hasTrait<Collective>())
    return emitOpError() << "body holds '" << collective->getName()
                         << "', which is not a collective";
  if (yield.getValues() != collective->getResults())
    return emitOpError("dtensor.yield must return the results of the "
                       "collective, all of them in order");
  if (getNumResults() != yield.getValues().size())
    return emitOpError() << "returns " << getNumResults()
                         << " futures but its collective has "
                         << yield.getValues().size() << " results";
  for (auto [index, future, value] :
       llvm::enumerate(getFutures(), yield.getValues())) {
    Type held = cast<FutureType>(future.getType()).getValueType();
    if (held != value.getType())
      return emitOpError() << "future #" << index << " holds " << held
                           << " but the collective's result #" << index
                           << " is " << value.getType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

StartOp WaitOp::getStart() {
  if (getFutures().empty())
    return {};
  return getFutures().front().getDefiningOp<StartOp>();
}

LogicalResult WaitOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  for (Value future : operands) {
    auto type = dyn_cast<FutureType>(future.getType());
    if (!type)
      return emitOptionalError(location, "operand of type ", future.getType(),
                               " is not a !dtensor.future");
    inferredReturnTypes.push_back(type.getValueType());
  }
  return success();
}

LogicalResult WaitOp::verify() {
  StartOp start = getStart();
  if (!start)
    return emitOpError("needs the futures of a dtensor.start");
  for (auto [index, future] : llvm::enumerate(getFutures())) {
    auto result = dyn_cast<OpResult>(future);
    if (!result || result.getOwner() != start)
      return emitOpError() << "future #" << index
                           << " does not come from the dtensor.start of "
                              "future #0; one wait completes one start";
    if (result.getResultNumber() != index)
      return emitOpError() << "future #" << index << " is future #"
                           << result.getResultNumber()
                           << " of its dtensor.start; futures must be in "
                              "order";
  }
  if (getFutures().size() != start.getNumResults())
    return emitOpError() << "waits on " << getFutures().size() << " of the "
                         << start.getNumResults()
                         << " futures of its dtensor.start; it must wait on "
                            "all of them";
  return success();
}

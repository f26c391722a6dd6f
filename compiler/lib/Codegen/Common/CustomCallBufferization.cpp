//===- CustomCallBufferization.cpp - Custom calls into runtime calls ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor.custom_call is in destination-passing style: its result is its
// init's buffer, which the kernel writes whole (the init's contents are
// never read, so one-shot analysis need not copy them). It bufferizes
// straight into the runtime call:
//
//   dtensor_rt_push_buffer(input 0) ... (input n-1), (output)
//   dtensor_rt_custom_call(id, n)
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/CustomCalls.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

#include <set>

using namespace mlir;
using namespace mlir::bufferization;
using namespace dtensor;
using namespace dtensor::codegen;

void dtensor::codegen::recordCustomOps(ModuleOp module) {
  if (module->hasAttr(DTensorDialect::getCustomOpsAttrName()))
    return;
  std::set<std::string> names;
  module.walk([&](CustomCallOp op) { names.insert(op.getOpName().str()); });
  if (names.empty())
    return;
  Builder builder(module.getContext());
  SmallVector<Attribute> list;
  for (const std::string &name : names)
    list.push_back(builder.getStringAttr(name));
  module->setAttr(DTensorDialect::getCustomOpsAttrName(),
                  builder.getArrayAttr(list));
}

std::optional<int64_t> dtensor::codegen::lookupCustomOpId(ModuleOp module,
                                                          StringRef name) {
  auto list =
      module->getAttrOfType<ArrayAttr>(DTensorDialect::getCustomOpsAttrName());
  if (!list)
    return std::nullopt;
  for (auto [id, attr] : llvm::enumerate(list))
    if (auto text = dyn_cast<StringAttr>(attr); text && text == name)
      return static_cast<int64_t>(id);
  return std::nullopt;
}

namespace {

struct CustomCallModel
    : DstBufferizableOpInterfaceExternalModel<CustomCallModel, CustomCallOp> {
  /// The kernel reads its inputs; it overwrites the init without reading it.
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &state) const {
    return !cast<DestinationStyleOpInterface>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto call = cast<CustomCallOp>(op);
    auto module = op->getParentOfType<ModuleOp>();
    recordCustomOps(module);
    std::optional<int64_t> id = lookupCustomOpId(module, call.getOpName());
    if (!id)
      return op->emitOpError()
             << "custom op '" << call.getOpName() << "' is missing from the "
             << "module's " << DTensorDialect::getCustomOpsAttrName();
    for (Value operand : op->getOperands())
      if (!getRuntimeDType(
              cast<RankedTensorType>(operand.getType()).getElementType()))
        return op->emitOpError()
               << "has an operand of element type " << operand.getType()
               << ", which the runtime does not carry";
    // The inputs, then the output.
    SmallVector<Value> buffers;
    SmallVector<Value> operands(call.getInputs());
    operands.push_back(call.getInit());
    for (Value operand : operands) {
      FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    Location loc = op->getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    for (Value buffer : buffers)
      pushBuffer(rewriter, loc, buffer);
    callRuntime(rewriter, loc, kCustomCallSymbol, {},
                {createI64(rewriter, loc, *id),
                 createI64(rewriter, loc,
                           static_cast<int64_t>(call.getInputs().size()))});
    replaceOpWithBufferizedValues(rewriter, op, buffers.back());
    return success();
  }
};

} // namespace

void dtensor::codegen::registerCustomCallBufferizationModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DTensorDialect *) {
    CustomCallOp::attachInterface<CustomCallModel>(*context);
  });
}

//===- AttentionBackwardBufferization.cpp - attention_backward's call -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor.attention_backward is in destination-passing style, its three
// inits the gradients' buffers. It bufferizes straight into a call of the
// runtime's fused backward: each operand's buffer viewed in logical order
// by a memref.transpose of its dims (no copy), queued in the ABI's order
// (query, key, value, out, d_out, lse, [mask], [positions], d_query, d_key,
// d_value), then
//   dtensor_rt_attention_backward(dtype, flags, scale)
// which writes the three gradients whole: the inits are only written.
//
//===----------------------------------------------------------------------===//

#include "AttentionLogicalView.h"

#include "dtensor/Codegen/Common/Passes.h"
#include "dtensor/Codegen/Common/RuntimeCalls.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "dtensor/rt_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace dtensor;
using namespace dtensor::codegen;

namespace {

struct AttentionBackwardModel
    : DstBufferizableOpInterfaceExternalModel<AttentionBackwardModel,
                                              AttentionBackwardOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return !cast<AttentionBackwardOp>(op).isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto backward = cast<AttentionBackwardOp>(op);
    Type element = backward.getQuery().getType().getElementType();
    if (!element.isF32() && !element.isF64())
      return backward.emitOpError()
             << "has element type " << element
             << ", which the runtime's attention backward kernel does not "
                "take (f32 or f64); --dtensor-decompose-attention writes it "
                "as linalg";
    Location loc = op->getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    SmallVector<Value> views;
    auto queue = [&](Value value, ArrayRef<int64_t> dims) -> FailureOr<Value> {
      FailureOr<Value> buffer = getBuffer(rewriter, value, options, state);
      if (failed(buffer))
        return failure();
      views.push_back(dims.empty() ? *buffer
                                   : codegen::detail::attentionLogicalView(
                                         rewriter, loc, *buffer, dims));
      return *buffer;
    };
    ArrayRef<int64_t> queryDims = backward.getQueryDims(),
                      keyDims = backward.getKeyDims(),
                      valueDims = backward.getValueDims(),
                      resultDims = backward.getResultDims();
    struct Viewed {
      Value value;
      ArrayRef<int64_t> dims;
    } inputs[] = {
        {backward.getQuery(), queryDims}, {backward.getKey(), keyDims},
        {backward.getValue(), valueDims}, {backward.getOut(), resultDims},
        {backward.getDOut(), resultDims}, {backward.getLse(), {}}};
    for (const Viewed &input : inputs)
      if (failed(queue(input.value, input.dims)))
        return failure();
    int32_t flags = 0;
    if (backward.getCausal())
      flags |= DTENSOR_RT_ATTENTION_CAUSAL;
    for (auto [value, flag] :
         {std::pair<Value, int32_t>{backward.getMask(),
                                    DTENSOR_RT_ATTENTION_MASK},
          {backward.getPositions(), DTENSOR_RT_ATTENTION_POSITIONS}}) {
      if (!value)
        continue;
      if (failed(queue(value, {})))
        return failure();
      flags |= flag;
    }
    SmallVector<Value> results;
    for (const Viewed &init : {Viewed{backward.getDQueryInit(), queryDims},
                               Viewed{backward.getDKeyInit(), keyDims},
                               Viewed{backward.getDValueInit(), valueDims}}) {
      FailureOr<Value> buffer = queue(init.value, init.dims);
      if (failed(buffer))
        return failure();
      results.push_back(*buffer);
    }
    for (Value view : views)
      pushBuffer(rewriter, loc, view);
    Value scale = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF64FloatAttr(backward.getScale().convertToDouble()));
    callRuntime(rewriter, loc, "dtensor_rt_attention_backward", {},
                {createI32(rewriter, loc, *getRuntimeDType(element)),
                 createI32(rewriter, loc, flags), scale});
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

} // namespace

void dtensor::codegen::registerAttentionBackwardBufferizationModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DTensorDialect *) {
    AttentionBackwardOp::attachInterface<AttentionBackwardModel>(*context);
  });
}

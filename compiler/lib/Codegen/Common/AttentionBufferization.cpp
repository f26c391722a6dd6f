//===- AttentionBufferization.cpp - dtensor.attention to its runtime call -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor.attention is in destination-passing style, its init the result's
// buffer. It bufferizes straight into a call of the runtime's fused kernel:
// each operand's buffer viewed in logical order by a memref.transpose of
// its dims (no copy), queued, then
//   dtensor_rt_attention(dtype, flags, scale)
// which writes the init's buffer (and the log-sum-exp init's). The inits
// are only written, unless the op accumulates into them.
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
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace dtensor;
using namespace dtensor::codegen;

Value dtensor::codegen::detail::attentionLogicalView(OpBuilder &b, Location loc,
                                                     Value buffer,
                                                     ArrayRef<int64_t> dims) {
  if (llvm::equal(dims, llvm::seq<int64_t>(0, dims.size())))
    return buffer;
  SmallVector<unsigned> permutation(dims.begin(), dims.end());
  AffineMap map = AffineMap::getPermutationMap(permutation, b.getContext());
  return memref::TransposeOp::create(b, loc, buffer, AffineMapAttr::get(map));
}

namespace {

struct AttentionModel
    : DstBufferizableOpInterfaceExternalModel<AttentionModel, AttentionOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    auto attention = cast<AttentionOp>(op);
    return attention.getAccumulate() || !attention.isDpsInit(&operand);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attention = cast<AttentionOp>(op);
    Type element = attention.getQuery().getType().getElementType();
    if (!element.isF32() && !element.isF64())
      return attention.emitOpError()
             << "has element type " << element
             << ", which the runtime's attention kernel does not take (f32 "
                "or f64); --dtensor-decompose-attention writes it as linalg";
    auto bufferOf = [&](Value value) -> FailureOr<Value> {
      return getBuffer(rewriter, value, options, state);
    };
    Location loc = op->getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    struct Viewed {
      Value value;
      ArrayRef<int64_t> dims;
    } viewed[] = {{attention.getQuery(), attention.getQueryDims()},
                  {attention.getKey(), attention.getKeyDims()},
                  {attention.getValue(), attention.getValueDims()},
                  {attention.getInit(), attention.getResultDims()}};
    SmallVector<Value> views;
    Value out;
    for (const Viewed &operand : viewed) {
      FailureOr<Value> buffer = bufferOf(operand.value);
      if (failed(buffer))
        return failure();
      if (operand.value == attention.getInit())
        out = *buffer;
      views.push_back(codegen::detail::attentionLogicalView(
          rewriter, loc, *buffer, operand.dims));
    }
    int32_t flags = 0;
    if (attention.getCausal())
      flags |= DTENSOR_RT_ATTENTION_CAUSAL;
    for (auto [value, flag] :
         {std::pair<Value, int32_t>{attention.getMask(),
                                    DTENSOR_RT_ATTENTION_MASK},
          {attention.getRows(), DTENSOR_RT_ATTENTION_ROWS},
          {attention.getPositions(), DTENSOR_RT_ATTENTION_POSITIONS}}) {
      if (!value)
        continue;
      FailureOr<Value> buffer = bufferOf(value);
      if (failed(buffer))
        return failure();
      views.push_back(*buffer);
      flags |= flag;
    }
    SmallVector<Value> results{out};
    if (Value lseInit = attention.getLogSumExpInit()) {
      FailureOr<Value> buffer = bufferOf(lseInit);
      if (failed(buffer))
        return failure();
      views.push_back(*buffer);
      results.push_back(*buffer);
      flags |= DTENSOR_RT_ATTENTION_LOG_SUM_EXP;
      if (attention.getAccumulate())
        flags |= DTENSOR_RT_ATTENTION_ACCUMULATE;
    }
    for (Value view : views)
      pushBuffer(rewriter, loc, view);
    Value scale = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF64FloatAttr(attention.getScale().convertToDouble()));
    callRuntime(rewriter, loc, "dtensor_rt_attention", {},
                {createI32(rewriter, loc, *getRuntimeDType(element)),
                 createI32(rewriter, loc, flags), scale});
    replaceOpWithBufferizedValues(rewriter, op, results);
    return success();
  }
};

} // namespace

void dtensor::codegen::registerAttentionBufferizationModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DTensorDialect *) {
    AttentionOp::attachInterface<AttentionModel>(*context);
  });
}

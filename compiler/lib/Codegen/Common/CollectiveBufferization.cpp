//===- CollectiveBufferization.cpp - Collectives to runtime calls ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dtensor collectives bufferize straight into calls of the runtime ABI:
// their inputs and outputs are queued with dtensor_rt_push_buffer and one
// dtensor_rt_<collective> call runs them. A collective numbered by
// --dtensor-number-collective-sites first passes its number to
// dtensor_rt_collective_site, for the runtime's trace.
//
// This is done with BufferizableOpInterface models rather than a rewrite
// into destination-passing form before bufferization: one-shot analysis then
// decides when an all_reduce may overwrite its operand in place and inserts
// a copy only when the operand is read later, and result buffers are
// allocated (and freed by the deallocation pipeline) like those of any
// other op, with no memref-level dtensor ops to add to the dialect.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "DynamicChunk.h"
#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"
#include "dtensor/rt_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace dtensor;
using namespace dtensor::codegen;

namespace {

int32_t getReductionCode(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return DTENSOR_RT_SUM;
  case ReductionKind::Avg:
    return DTENSOR_RT_AVG;
  case ReductionKind::Max:
    return DTENSOR_RT_MAX;
  case ReductionKind::Min:
    return DTENSOR_RT_MIN;
  }
  llvm_unreachable("unknown reduction kind");
}

MemRefType getIdentityBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// What every model needs to emit its calls: ids, dtype and the group.
struct CommContext {
  ModuleOp module;
  int64_t groupId;
  int32_t dtype;
};

FailureOr<CommContext> getCommContext(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  StringRef mesh = op->getAttrOfType<FlatSymbolRefAttr>("mesh").getValue();
  ArrayRef<int64_t> meshDims =
      op->getAttrOfType<DenseI64ArrayAttr>("mesh_dims").asArrayRef();
  std::optional<int64_t> groupId = lookupGroupId(module, mesh, meshDims);
  if (!groupId)
    return op->emitOpError(
        "has no group id; run --dtensor-prepare-collectives first");
  Type elementType =
      cast<ShapedType>(op->getOperand(0).getType()).getElementType();
  std::optional<int32_t> dtype = getRuntimeDType(elementType);
  if (!dtype)
    return op->emitOpError("element type ")
           << elementType << " is not supported by the runtime collectives";
  return CommContext{module, *groupId, *dtype};
}

/// The buffer of `tensor`, copied into a contiguous one when its layout is
/// not the identity (a strided slice): the runtime sends whole buffers.
FailureOr<Value> getContiguousBuffer(RewriterBase &rewriter, Location loc,
                                     Value tensor,
                                     const BufferizationOptions &options,
                                     const BufferizationState &state) {
  FailureOr<Value> buffer = getBuffer(rewriter, tensor, options, state);
  if (failed(buffer))
    return failure();
  auto type = cast<MemRefType>(buffer->getType());
  if (type.getLayout().isIdentity())
    return buffer;
  auto contiguous = MemRefType::get(type.getShape(), type.getElementType(),
                                    AffineMap(), type.getMemorySpace());
  SmallVector<Value> dynamicSizes;
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(memref::DimOp::create(rewriter, loc, *buffer,
                                                   static_cast<int64_t>(dim)));
  FailureOr<Value> copy =
      options.createAlloc(rewriter, loc, contiguous, dynamicSizes);
  if (failed(copy) ||
      failed(options.createMemCpy(rewriter, loc, *buffer, *copy)))
    return failure();
  return copy;
}

/// The contiguous buffers of all of `op`'s tensor operands, in order.
FailureOr<SmallVector<Value>>
getContiguousOperandBuffers(RewriterBase &rewriter, Operation *op,
                            const BufferizationOptions &options,
                            BufferizationState &state) {
  SmallVector<Value> buffers;
  for (Value operand : op->getOperands()) {
    FailureOr<Value> buffer =
        getContiguousBuffer(rewriter, op->getLoc(), operand, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

/// The size of a dim split over `op`'s group like dtensor.chunk.
FailureOr<Value> getChunkSize(OpBuilder &builder, Operation *op,
                              Value inputBuffer, int64_t dim) {
  Location loc = op->getLoc();
  auto mesh = lookupMesh(op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
  Value size = memref::DimOp::create(builder, loc, inputBuffer, dim);
  return buildDynamicChunk(
             builder, loc, mesh, size,
             op->getAttrOfType<DenseI64ArrayAttr>("mesh_dims").asArrayRef())
      .size;
}

/// The sum of the dim over the group: the size of a gathered dim.
Value getGroupSum(OpBuilder &builder, Location loc, const CommContext &comm,
                  Value inputBuffer, int64_t dim) {
  Value local = memref::DimOp::create(builder, loc, inputBuffer, dim);
  Value local64 =
      arith::IndexCastOp::create(builder, loc, builder.getI64Type(), local);
  Value sum =
      callRuntime(builder, loc, "dtensor_rt_group_sum", builder.getI64Type(),
                  {createI64(builder, loc, comm.groupId), local64})
          .getResult(0);
  return arith::IndexCastOp::create(builder, loc, builder.getIndexType(), sum);
}

/// The size of the piece `shift` receives: piece (g - step - 1) mod n of
/// its dim_size, g this rank's coordinate along the shift's mesh dim.
Value getReceivedPieceSize(OpBuilder &builder, ShiftOp shift) {
  Location loc = shift.getLoc();
  auto mesh = lookupMesh(shift, shift.getMeshAttr());
  int64_t n = mesh.getGroupSize(shift.getMeshDims());
  int64_t whole = shift.getDimSize();
  int64_t chunk = (whole + n - 1) / n;
  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  Value coord = MeshCoordOp::create(builder, loc,
                                    TypeRange{builder.getIndexType()},
                                    shift.getMesh(), shift.getMeshDimsAttr())
                    .getResult(0);
  int64_t back = (static_cast<int64_t>(shift.getStep()) + 1) % n;
  Value source = arith::RemUIOp::create(
      builder, loc, arith::AddIOp::create(builder, loc, coord, index(n - back)),
      index(n));
  Value start = arith::MinUIOp::create(
      builder, loc, arith::MulIOp::create(builder, loc, source, index(chunk)),
      index(whole));
  Value rest = arith::SubIOp::create(builder, loc, index(whole), start);
  return arith::MinUIOp::create(builder, loc, rest, index(chunk));
}

/// How each dynamic dim of a result relates to its input.
enum class DimKind { Same, Gathered, Split, ReceivedPiece };

/// Allocates the result buffer of `result`, whose dynamic dims are computed
/// from `inputBuffer` according to `kindOf(dim)`.
FailureOr<Value> allocateResult(RewriterBase &rewriter, Operation *op,
                                const CommContext &comm, Value result,
                                Value inputBuffer,
                                llvm::function_ref<DimKind(int64_t)> kindOf,
                                const BufferizationOptions &options) {
  Location loc = op->getLoc();
  MemRefType type = getIdentityBufferType(result);
  SmallVector<Value> dynamicSizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    if (!type.isDynamicDim(dim))
      continue;
    switch (kindOf(dim)) {
    case DimKind::Same:
      dynamicSizes.push_back(
          memref::DimOp::create(rewriter, loc, inputBuffer, dim));
      break;
    case DimKind::Gathered:
      dynamicSizes.push_back(
          getGroupSum(rewriter, loc, comm, inputBuffer, dim));
      break;
    case DimKind::Split: {
      FailureOr<Value> size = getChunkSize(rewriter, op, inputBuffer, dim);
      if (failed(size))
        return failure();
      dynamicSizes.push_back(*size);
      break;
    }
    case DimKind::ReceivedPiece:
      dynamicSizes.push_back(
          getReceivedPieceSize(rewriter, cast<ShiftOp>(op)));
      break;
    }
  }
  return options.createAlloc(rewriter, loc, type, dynamicSizes);
}

/// Shared analysis answers: collectives read every input; an all_reduce
/// also writes it (it reduces in place), the others write fresh buffers.
/// Tells the runtime which site the next collective call is, when `op` was
/// numbered (dtensor.site, --dtensor-number-collective-sites).
void announceSite(OpBuilder &builder, Location loc, Operation *op) {
  auto site = op->getAttrOfType<IntegerAttr>(DTensorDialect::getSiteAttrName());
  if (!site)
    return;
  callRuntime(builder, loc, "dtensor_rt_collective_site", {},
              {createI64(builder, loc, site.getInt())});
}

template <typename ConcreteModel, typename ConcreteOp>
struct CollectiveModelBase
    : public BufferizableOpInterface::ExternalModel<ConcreteModel, ConcreteOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }
  FailureOr<BufferLikeType> getBufferType(Operation *, Value value,
                                          const BufferizationOptions &,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    return cast<BufferLikeType>(getIdentityBufferType(value));
  }
};

/// Gathers, scatters, all-to-all and broadcast: queue the inputs and fresh
/// outputs, then one call.
template <typename ConcreteModel, typename ConcreteOp>
struct CopyingCollectiveModel
    : public CollectiveModelBase<ConcreteModel, ConcreteOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto concrete = cast<ConcreteOp>(op);
    FailureOr<CommContext> comm = getCommContext(op);
    if (failed(comm))
      return failure();
    Location loc = op->getLoc();
    FailureOr<SmallVector<Value>> operandBuffers =
        getContiguousOperandBuffers(rewriter, op, options, state);
    if (failed(operandBuffers))
      return failure();
    SmallVector<Value> inputs = std::move(*operandBuffers), outputs;
    for (auto [input, result] : llvm::zip(inputs, op->getResults())) {
      FailureOr<Value> buffer = allocateResult(
          rewriter, op, *comm, result, input,
          [&](int64_t dim) { return ConcreteModel::getDimKind(concrete, dim); },
          options);
      if (failed(buffer))
        return failure();
      outputs.push_back(*buffer);
    }
    for (Value buffer : llvm::concat<Value>(inputs, outputs))
      pushBuffer(rewriter, loc, buffer);
    announceSite(rewriter, loc, op);
    ConcreteModel::emitCall(rewriter, loc, concrete, *comm,
                            static_cast<int64_t>(inputs.size()));
    replaceOpWithBufferizedValues(rewriter, op, outputs);
    return success();
  }
};

Value callCollective(OpBuilder &builder, Location loc, StringRef name,
                     ArrayRef<Value> args) {
  return callRuntime(builder, loc, name, builder.getI64Type(), args)
      .getResult(0);
}

struct AllGatherModel : CopyingCollectiveModel<AllGatherModel, AllGatherOp> {
  static DimKind getDimKind(AllGatherOp op, int64_t dim) {
    return dim == static_cast<int64_t>(op.getGatherDim()) ? DimKind::Gathered
                                                          : DimKind::Same;
  }
  static void emitCall(OpBuilder &b, Location loc, AllGatherOp op,
                       const CommContext &comm, int64_t count) {
    callCollective(b, loc, "dtensor_rt_all_gather",
                   {createI64(b, loc, comm.groupId),
                    createI64(b, loc, op.getGatherDim()),
                    createI32(b, loc, comm.dtype), createI64(b, loc, count),
                    createI32(b, loc, 0)});
  }
};

struct ReduceScatterModel
    : CopyingCollectiveModel<ReduceScatterModel, ReduceScatterOp> {
  static DimKind getDimKind(ReduceScatterOp op, int64_t dim) {
    return dim == static_cast<int64_t>(op.getScatterDim()) ? DimKind::Split
                                                           : DimKind::Same;
  }
  static void emitCall(OpBuilder &b, Location loc, ReduceScatterOp op,
                       const CommContext &comm, int64_t count) {
    callCollective(b, loc, "dtensor_rt_reduce_scatter",
                   {createI64(b, loc, comm.groupId),
                    createI32(b, loc, getReductionCode(op.getReduction())),
                    createI64(b, loc, op.getScatterDim()),
                    createI32(b, loc, comm.dtype), createI64(b, loc, count),
                    createI32(b, loc, 0)});
  }
};

struct AllToAllModel : CopyingCollectiveModel<AllToAllModel, AllToAllOp> {
  static DimKind getDimKind(AllToAllOp op, int64_t dim) {
    if (dim == static_cast<int64_t>(op.getSplitDim()))
      return DimKind::Split;
    if (dim == static_cast<int64_t>(op.getConcatDim()))
      return DimKind::Gathered;
    return DimKind::Same;
  }
  static void emitCall(OpBuilder &b, Location loc, AllToAllOp op,
                       const CommContext &comm, int64_t) {
    callCollective(b, loc, "dtensor_rt_all_to_all",
                   {createI64(b, loc, comm.groupId),
                    createI64(b, loc, op.getSplitDim()),
                    createI64(b, loc, op.getConcatDim()),
                    createI32(b, loc, comm.dtype), createI32(b, loc, 0)});
  }
};

struct BroadcastModel : CopyingCollectiveModel<BroadcastModel, BroadcastOp> {
  static DimKind getDimKind(BroadcastOp, int64_t) { return DimKind::Same; }
  static void emitCall(OpBuilder &b, Location loc, BroadcastOp op,
                       const CommContext &comm, int64_t) {
    callCollective(b, loc, "dtensor_rt_broadcast",
                   {createI64(b, loc, comm.groupId),
                    createI64(b, loc, op.getRoot()),
                    createI32(b, loc, comm.dtype), createI32(b, loc, 0)});
  }
};

struct ShiftModel : CopyingCollectiveModel<ShiftModel, ShiftOp> {
  static DimKind getDimKind(ShiftOp op, int64_t dim) {
    return dim == static_cast<int64_t>(op.getDim()) ? DimKind::ReceivedPiece
                                                    : DimKind::Same;
  }
  static void emitCall(OpBuilder &b, Location loc, ShiftOp op,
                       const CommContext &comm, int64_t count) {
    callCollective(b, loc, "dtensor_rt_shift",
                   {createI64(b, loc, comm.groupId),
                    createI64(b, loc, op.getDim()),
                    createI64(b, loc, op.getDimSize()),
                    createI64(b, loc, op.getStep()),
                    createI32(b, loc, comm.dtype), createI64(b, loc, count),
                    createI32(b, loc, 0)});
  }
};

/// all_reduce works in place: each input buffer is also its output, and
/// result i is equivalent to input i (one-shot analysis copies the input
/// first when it is read afterwards).
struct AllReduceModel : CollectiveModelBase<AllReduceModel, AllReduceOp> {
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return true;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    return {{op->getResult(operand.getOperandNumber()),
             BufferRelation::Equivalent}};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return false; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto allReduce = cast<AllReduceOp>(op);
    FailureOr<CommContext> comm = getCommContext(op);
    if (failed(comm))
      return failure();
    Location loc = op->getLoc();
    FailureOr<SmallVector<Value>> operandBuffers =
        getContiguousOperandBuffers(rewriter, op, options, state);
    if (failed(operandBuffers))
      return failure();
    SmallVector<Value> buffers = std::move(*operandBuffers);
    for (Value buffer : llvm::concat<Value>(buffers, buffers))
      pushBuffer(rewriter, loc, buffer);
    announceSite(rewriter, loc, op);
    callCollective(
        rewriter, loc, "dtensor_rt_all_reduce",
        {createI64(rewriter, loc, comm->groupId),
         createI32(rewriter, loc, getReductionCode(allReduce.getReduction())),
         createI32(rewriter, loc, comm->dtype),
         createI64(rewriter, loc, static_cast<int64_t>(buffers.size())),
         createI32(rewriter, loc, 0)});
    replaceOpWithBufferizedValues(rewriter, op, buffers);
    return success();
  }
};

} // namespace

void dtensor::codegen::registerCollectiveBufferizationModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DTensorDialect *) {
    AllReduceOp::attachInterface<AllReduceModel>(*context);
    AllGatherOp::attachInterface<AllGatherModel>(*context);
    ReduceScatterOp::attachInterface<ReduceScatterModel>(*context);
    AllToAllOp::attachInterface<AllToAllModel>(*context);
    BroadcastOp::attachInterface<BroadcastModel>(*context);
    ShiftOp::attachInterface<ShiftModel>(*context);
  });
}

//===- WriteRowsBufferization.cpp - Row writes into their cache's buffer --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor.write_rows is in destination-passing style: its cache is the init
// and its result is equivalent to it, so one-shot analysis lets it update
// the cache's buffer in place and copies the cache first only when the old
// contents are read afterwards. Like the collectives, it bufferizes straight
// into its final form, with no memref-level op in the dialect:
//
//   scf.parallel (r...) over the trailing dims {
//     scf.for b in [0, B) {
//       s = slots[b], p = positions[b]
//       scf.if 0 <= s < S and 0 <= p <= M - T {
//         scf.for t in [0, T) { cache[s, p + t, r...] = values[b, t, r...] }
//       }
//     }
//   }
//
// The trailing dims are independent, so they are the parallel loop: the CPU
// runs it as a loop nest, the CUDA target maps it to a kernel with one
// thread per trailing element (every buffer is read on the device). Each
// element walks the rows in order of b, so where rows overlap the later one
// wins on both targets. A row outside the cache is skipped.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace dtensor;

namespace {

/// The size of dim `dim` of `buffer`, as an index.
Value getDim(OpBuilder &b, Location loc, Value buffer, int64_t dim) {
  return b.createOrFold<memref::DimOp>(loc, buffer, dim);
}

/// `value` (an index) as an i64.
Value toI64(OpBuilder &b, Location loc, Value value) {
  return b.createOrFold<arith::IndexCastOp>(loc, b.getI64Type(), value);
}

/// Element `b` of a 1-D i32 or i64 buffer, sign-extended to i64.
Value loadIndex(OpBuilder &b, Location loc, Value buffer, Value index) {
  Value value = memref::LoadOp::create(b, loc, buffer, index);
  if (!value.getType().isInteger(64))
    value = arith::ExtSIOp::create(b, loc, b.getI64Type(), value);
  return value;
}

struct WriteRowsModel
    : DstBufferizableOpInterfaceExternalModel<WriteRowsModel, WriteRowsOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto writeRows = cast<WriteRowsOp>(op);
    SmallVector<Value> buffers;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    Value values = buffers[0], cache = buffers[1], slots = buffers[2],
          positions = buffers[3];
    Location loc = op->getLoc();
    OpBuilder::InsertionGuard guard(rewriter);

    // Bounds, in i64 to compare with the loaded indices.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value zero64 = arith::ConstantIntOp::create(rewriter, loc, 0, 64);
    Value numRows = getDim(rewriter, loc, values, 0);
    Value rowLength = getDim(rewriter, loc, values, 1);
    Value numSlots = toI64(rewriter, loc, getDim(rewriter, loc, cache, 0));
    // The last valid start: M - T (negative when no row fits).
    Value lastStart = rewriter.createOrFold<arith::SubIOp>(
        loc, toI64(rewriter, loc, getDim(rewriter, loc, cache, 1)),
        toI64(rewriter, loc, rowLength));

    // One iteration per trailing element (a single one without trailing
    // dims).
    int64_t rank = writeRows.getCache().getType().getRank();
    SmallVector<Value> lowers, uppers, steps;
    for (int64_t dim = 2; dim < rank; ++dim) {
      lowers.push_back(zero);
      uppers.push_back(getDim(rewriter, loc, values, dim));
      steps.push_back(one);
    }
    if (lowers.empty()) {
      lowers.push_back(zero);
      uppers.push_back(one);
      steps.push_back(one);
    }
    auto parallel =
        scf::ParallelOp::create(rewriter, loc, lowers, uppers, steps);
    rewriter.setInsertionPoint(parallel.getBody()->getTerminator());
    SmallVector<Value> trailing;
    if (rank > 2)
      trailing = parallel.getInductionVars();

    auto rows = scf::ForOp::create(rewriter, loc, zero, numRows, one);
    rewriter.setInsertionPoint(rows.getBody()->getTerminator());
    Value row = rows.getInductionVar();
    Value slot = loadIndex(rewriter, loc, slots, row);
    Value start = loadIndex(rewriter, loc, positions, row);
    auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
      return arith::CmpIOp::create(rewriter, loc, predicate, lhs, rhs)
          .getResult();
    };
    Value inRange = cmp(arith::CmpIPredicate::sge, slot, zero64);
    for (Value check : {cmp(arith::CmpIPredicate::slt, slot, numSlots),
                        cmp(arith::CmpIPredicate::sge, start, zero64),
                        cmp(arith::CmpIPredicate::sle, start, lastStart)})
      inRange = arith::AndIOp::create(rewriter, loc, inRange, check);
    auto ifInRange = scf::IfOp::create(rewriter, loc, inRange,
                                       /*withElseRegion=*/false);
    rewriter.setInsertionPoint(ifInRange.thenBlock()->getTerminator());
    Value slotIndex = arith::IndexCastOp::create(rewriter, loc,
                                                 rewriter.getIndexType(), slot);
    Value startIndex = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), start);

    auto positionsLoop =
        scf::ForOp::create(rewriter, loc, zero, rowLength, one);
    rewriter.setInsertionPoint(positionsLoop.getBody()->getTerminator());
    Value t = positionsLoop.getInductionVar();
    SmallVector<Value> from{row, t},
        to{slotIndex, arith::AddIOp::create(rewriter, loc, startIndex, t)};
    from.append(trailing.begin(), trailing.end());
    to.append(trailing.begin(), trailing.end());
    Value element = memref::LoadOp::create(rewriter, loc, values, from);
    memref::StoreOp::create(rewriter, loc, element, cache, to);

    rewriter.setInsertionPointAfter(parallel);
    replaceOpWithBufferizedValues(rewriter, op, cache);
    return success();
  }
};

} // namespace

void dtensor::codegen::registerWriteRowsBufferizationModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DTensorDialect *) {
    WriteRowsOp::attachInterface<WriteRowsModel>(*context);
  });
}

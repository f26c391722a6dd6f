//===- ScatterAddBufferization.cpp - Row additions into init's buffer -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor.scatter_add is in destination-passing style: its result is
// equivalent to its init, so one-shot analysis lets it add into the init's
// buffer in place (a zero fill, for the embedding's gradient) and copies
// the init first only when its old contents are read afterwards. Like
// dtensor.write_rows, it bufferizes straight into its final loops:
//
//   scf.parallel (r...) over the trailing dims {
//     scf.for n in [0, N) {
//       v = indices[n]
//       scf.if 0 <= v < V { table[v, r...] += updates[n, r...] }
//     }
//   }
//
// Rows that share an index add into the same element, so the rows are the
// sequential loop and the trailing elements the parallel one: no two
// iterations of the parallel loop touch the same element, on the CPU (a
// loop nest split over the worker threads) as on the CUDA target (one
// thread per trailing element).
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

struct ScatterAddModel
    : DstBufferizableOpInterfaceExternalModel<ScatterAddModel, ScatterAddOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto scatter = cast<ScatterAddOp>(op);
    SmallVector<Value> buffers;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    Value updates = buffers[0], table = buffers[1], indices = buffers[2];
    Location loc = op->getLoc();
    OpBuilder::InsertionGuard guard(rewriter);

    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value numUpdates = rewriter.createOrFold<memref::DimOp>(loc, updates, 0);
    Value numRows = rewriter.createOrFold<memref::DimOp>(loc, table, 0);

    // One iteration per trailing element (a single one for a 1-D table).
    int64_t rank = scatter.getInit().getType().getRank();
    SmallVector<Value> lowers, uppers, steps;
    for (int64_t dim = 1; dim < rank; ++dim) {
      lowers.push_back(zero);
      uppers.push_back(rewriter.createOrFold<memref::DimOp>(loc, table, dim));
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
    if (rank > 1)
      trailing = parallel.getInductionVars();

    auto rows = scf::ForOp::create(rewriter, loc, zero, numUpdates, one);
    rewriter.setInsertionPoint(rows.getBody()->getTerminator());
    Value n = rows.getInductionVar();
    Value index = memref::LoadOp::create(rewriter, loc, indices, n);
    // Compared as an index: a negative i32 or i64 stays negative.
    Value row = arith::IndexCastOp::create(rewriter, loc,
                                           rewriter.getIndexType(), index);
    Value above = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::sge, row, zero);
    Value below = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, row, numRows);
    Value inRange = arith::AndIOp::create(rewriter, loc, above, below);
    auto ifInRange = scf::IfOp::create(rewriter, loc, inRange,
                                       /*withElseRegion=*/false);
    rewriter.setInsertionPoint(ifInRange.thenBlock()->getTerminator());
    SmallVector<Value> from{n}, to{row};
    from.append(trailing.begin(), trailing.end());
    to.append(trailing.begin(), trailing.end());
    Value update = memref::LoadOp::create(rewriter, loc, updates, from);
    Value old = memref::LoadOp::create(rewriter, loc, table, to);
    Value sum = arith::AddFOp::create(rewriter, loc, old, update);
    memref::StoreOp::create(rewriter, loc, sum, table, to);

    rewriter.setInsertionPointAfter(parallel);
    replaceOpWithBufferizedValues(rewriter, op, table);
    return success();
  }
};

} // namespace

void dtensor::codegen::registerScatterAddBufferizationModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DTensorDialect *) {
    ScatterAddOp::attachInterface<ScatterAddModel>(*context);
  });
}

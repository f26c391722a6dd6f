//===- PrepareCollectives.cpp - Ready dtensor ops for bufferization -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One-shot bufferization turns each collective into runtime calls (see
// CollectiveBufferization.cpp); this pass does what must happen before:
// the mesh and group ids the calls name are recorded on the module, the
// local ops (chunk) become tensor ops, and start/wait pairs become
// synchronous collectives.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/CustomCalls.h"

#include "DynamicChunk.h"
#include "dtensor/Codegen/Common/RuntimeCalls.h"
#include "dtensor/Partition/ShardIndex.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <memory>

namespace dtensor::codegen {
#define GEN_PASS_DEF_PREPARECOLLECTIVES
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-prepare-collectives"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::codegen;

namespace {

StringRef getMeshName(Operation *op) {
  return op->getAttrOfType<FlatSymbolRefAttr>("mesh").getValue();
}

ArrayRef<int64_t> getMeshDims(Operation *op) {
  return op->getAttrOfType<DenseI64ArrayAttr>("mesh_dims").asArrayRef();
}

/// Records dtensor.comm_meshes and dtensor.comm_groups, and checks that the
/// runtime carries the element type of every collective.
LogicalResult assignCommIds(ModuleOp module) {
  Builder builder(module.getContext());
  SmallVector<Attribute> meshes;
  for (auto mesh : module.getOps<MeshOp>())
    meshes.push_back(FlatSymbolRefAttr::get(mesh.getSymNameAttr()));

  SmallVector<Attribute> groups;
  llvm::SmallDenseSet<Attribute> seen;
  WalkResult result = module.walk([&](Operation *op) {
    if (!op->hasTrait<Collective>())
      return WalkResult::advance();
    Type elementType =
        cast<ShapedType>(op->getOperand(0).getType()).getElementType();
    if (!getRuntimeDType(elementType)) {
      op->emitOpError("element type ")
          << elementType << " is not supported by the runtime collectives";
      return WalkResult::interrupt();
    }
    auto group = builder.getDictionaryAttr(
        {builder.getNamedAttr("mesh", op->getAttr("mesh")),
         builder.getNamedAttr("mesh_dims", op->getAttr("mesh_dims"))});
    if (seen.insert(group).second)
      groups.push_back(group);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  LLVM_DEBUG(llvm::dbgs() << "ids for " << meshes.size() << " meshes and "
                          << groups.size() << " communication groups\n");
  module->setAttr(DTensorDialect::getCommMeshesAttrName(),
                  builder.getArrayAttr(meshes));
  module->setAttr(DTensorDialect::getCommGroupsAttrName(),
                  builder.getArrayAttr(groups));
  return success();
}

/// Issues each started collective where it starts and hands its results to
/// the wait: the runtime then completes it before the next op.
// TODO(async): pass async = 1 and call dtensor_rt_wait at the wait; this
// needs the handle to travel from the start to the wait through
// bufferization.
void makeCollectivesSynchronous(ModuleOp module) {
  SmallVector<StartOp> starts;
  module.walk([&](StartOp op) { starts.push_back(op); });
  for (StartOp start : starts) {
    LLVM_DEBUG(llvm::dbgs()
               << "issuing the collective started at " << start.getLoc()
               << " synchronously, where it starts\n");
    Block &body = start.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    SmallVector<Value> values(yield.getValues());
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      op.moveBefore(start);
    // A wait on several futures of the start is one user per future.
    llvm::SetVector<Operation *> waits;
    waits.insert(start->user_begin(), start->user_end());
    for (Operation *user : waits) {
      auto wait = cast<WaitOp>(user);
      for (auto [future, result] :
           llvm::zip(wait.getFutures(), wait.getResults()))
        result.replaceAllUsesWith(
            values[cast<OpResult>(future).getResultNumber()]);
      wait.erase();
    }
    start.erase();
  }
}

/// chunk -> tensor.extract_slice at this rank's piece of the dim.
LogicalResult lowerChunks(func::FuncOp func) {
  SmallVector<ChunkOp> chunks;
  func.walk([&](ChunkOp op) { chunks.push_back(op); });
  if (chunks.empty())
    return success();

  std::map<std::string, std::unique_ptr<ShardIndex>> indices;
  for (ChunkOp chunk : chunks) {
    auto inputType = cast<RankedTensorType>(chunk.getInput().getType());
    int64_t dim = chunk.getDim();
    OpBuilder builder(chunk);
    Location loc = chunk.getLoc();
    int64_t rank = inputType.getRank();
    SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(builder, loc, chunk.getInput());
    SmallVector<OpFoldResult> strides(rank, builder.getIndexAttr(1));
    LLVM_DEBUG(llvm::dbgs()
               << "lowering " << OpWithFlags(chunk) << " to "
               << (inputType.isDynamicDim(dim) ? "a slice of run-time size"
                   : llvm::is_contained(inputType.getShape(), 0)
                       ? "an empty tensor (the input holds "
                         "nothing)"
                       : "a slice at this rank's piece")
               << "\n");
    if (inputType.isDynamicDim(dim)) {
      // A piece of an uneven shard split again: sizes known at run time.
      auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
          chunk, chunk.getMeshAttr());
      DynamicChunk piece = buildDynamicChunk(
          builder, loc, mesh,
          tensor::DimOp::create(builder, loc, chunk.getInput(), dim),
          getMeshDims(chunk));
      offsets[dim] = piece.offset;
      sizes[dim] = piece.size;
      auto slice = tensor::ExtractSliceOp::create(builder, loc, chunk.getType(),
                                                  chunk.getInput(), offsets,
                                                  sizes, strides);
      chunk.replaceAllUsesWith(slice.getResult());
      chunk.erase();
      continue;
    }
    std::string meshName = getMeshName(chunk).str();
    std::unique_ptr<ShardIndex> &index = indices[meshName];
    if (!index) {
      auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
          chunk, chunk.getMeshAttr());
      index = std::make_unique<ShardIndex>(mesh, func.front());
    }
    ShardExtent extent =
        index->getExtent(inputType.getDimSize(dim), getMeshDims(chunk));
    offsets[dim] = extent.offset;
    sizes[dim] = extent.staticSize != ShapedType::kDynamic
                     ? OpFoldResult(builder.getIndexAttr(extent.staticSize))
                     : OpFoldResult(extent.size);
    // A tensor with a dim of size 0 holds nothing to slice (and the slice's
    // verifier refuses offset 0 in a dim of size 0): an empty tensor.
    if (llvm::is_contained(inputType.getShape(), 0)) {
      auto empty = tensor::EmptyOp::create(builder, loc, sizes,
                                           inputType.getElementType());
      chunk.replaceAllUsesWith(empty.getResult());
      chunk.erase();
      continue;
    }
    auto slice = tensor::ExtractSliceOp::create(builder, loc, chunk.getType(),
                                                chunk.getInput(), offsets,
                                                sizes, strides);
    chunk.replaceAllUsesWith(slice.getResult());
    chunk.erase();
  }
  for (auto &[name, index] : indices)
    index->eraseUnused();
  return success();
}

struct PrepareCollectives
    : dtensor::codegen::impl::PrepareCollectivesBase<PrepareCollectives> {
  /// The bufferization that follows needs the models of the dtensor
  /// collectives, of dtensor.write_rows, scatter_add and attention, and of the
  /// upstream ops; registering
  /// them here spares every driver of the pipeline from doing it.
  void getDependentDialects(DialectRegistry &registry) const override {
    PrepareCollectivesBase::getDependentDialects(registry);
    registry.insert<bufferization::BufferizationDialect, linalg::LinalgDialect,
                    scf::SCFDialect>();
    registerCollectiveBufferizationModels(registry);
    registerWriteRowsBufferizationModel(registry);
    registerScatterAddBufferizationModel(registry);
    registerAttentionBufferizationModel(registry);
    registerAttentionBackwardBufferizationModel(registry);
    registerCustomCallBufferizationModel(registry);
    arith::registerBufferizableOpInterfaceExternalModels(registry);
    arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
    bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
        registry);
    linalg::registerBufferizableOpInterfaceExternalModels(registry);
    linalg::registerSubsetOpInterfaceExternalModels(registry);
    memref::registerAllocationOpInterfaceExternalModels(registry);
    scf::registerBufferizableOpInterfaceExternalModels(registry);
    scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
    tensor::registerBufferizableOpInterfaceExternalModels(registry);
    tensor::registerSubsetOpInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(assignCommIds(module)))
      return signalPassFailure();
    makeCollectivesSynchronous(module);
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(lowerChunks(func)))
        return signalPassFailure();
  }
};

} // namespace

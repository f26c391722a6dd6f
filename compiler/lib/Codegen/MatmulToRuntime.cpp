//===- MatmulToRuntime.cpp - Matmuls on buffers to dtensor_rt_matmul ------===//
//
// The runtime's matmul (a BLAS) beats any loop nest we would emit. Every
// contraction that is a (batched) matrix product up to transposition of its
// operands qualifies: each operand is passed as a view in the order the
// runtime expects ((batch,) M x K, K x N, M x N), and the runtime reads the
// strides, so a transposed operand costs no copy.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Passes.h"

#include "RuntimeCalls.h"

#include "dtensor/rt_abi.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_CPUMATMULTORUNTIME
#include "dtensor/Codegen/Passes.h.inc"
} // namespace dtensor::codegen

using namespace mlir;
using namespace dtensor::codegen;

namespace {

/// For an operand indexed by `map`, the positions among its dims of the
/// loops `wanted`, or nullopt when the operand does not index exactly those
/// loops, each by a plain loop dim.
std::optional<SmallVector<int64_t>> getPermutation(AffineMap map,
                                                   ArrayRef<unsigned> wanted) {
  if (map.getNumResults() != wanted.size())
    return std::nullopt;
  SmallVector<int64_t> permutation;
  for (unsigned loop : wanted) {
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
    if (!position)
      return std::nullopt;
    permutation.push_back(*position);
  }
  return permutation;
}

/// A view of `buffer` with its dims in `permutation` order.
Value createView(OpBuilder &builder, Location loc, Value buffer,
                 ArrayRef<int64_t> permutation) {
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return buffer;
  SmallVector<unsigned> dims(permutation.begin(), permutation.end());
  AffineMap map = AffineMap::getPermutationMap(dims, builder.getContext());
  return memref::TransposeOp::create(builder, loc, buffer,
                                     AffineMapAttr::get(map));
}

/// The zero fill of `output` that `op` would overwrite anyway: the closest
/// preceding op in the block that writes memory, if it is one.
linalg::FillOp findZeroFill(Operation *op, Value output) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().front() == output &&
          (matchPattern(fill.value(), m_AnyZeroFloat())))
        return fill;
      return {};
    }
    // Allocations and views are fine; anything that may touch memory is not.
    if (!isMemoryEffectFree(prev) &&
        !hasSingleEffect<MemoryEffects::Allocate>(prev))
      return {};
  }
  return {};
}

LogicalResult lowerMatmul(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() > 1 || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1)
    return failure();

  Value a = op.getDpsInputOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  Value c = op.getDpsInitOperand(0)->get();
  Type elementType = cast<MemRefType>(c.getType()).getElementType();
  if (!elementType.isF32() && !elementType.isF64())
    return failure();
  for (Value operand : {a, b})
    if (cast<MemRefType>(operand.getType()).getElementType() != elementType)
      return failure();

  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
  auto order = [&](unsigned rows, unsigned cols) {
    SmallVector<unsigned> loops(batch);
    loops.append({rows, cols});
    return loops;
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned m = dims->m.front(), n = dims->n.front(), k = dims->k.front();
  std::optional<SmallVector<int64_t>> permA =
      getPermutation(maps[0], order(m, k));
  std::optional<SmallVector<int64_t>> permB =
      getPermutation(maps[1], order(k, n));
  std::optional<SmallVector<int64_t>> permC =
      getPermutation(maps[2], order(m, n));
  if (!permA || !permB || !permC)
    return failure();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  linalg::FillOp zeroFill = findZeroFill(op, c);
  pushBuffer(builder, loc, createView(builder, loc, a, *permA));
  pushBuffer(builder, loc, createView(builder, loc, b, *permB));
  pushBuffer(builder, loc, createView(builder, loc, c, *permC));
  int32_t dtype = elementType.isF32() ? DTENSOR_RT_F32 : DTENSOR_RT_F64;
  callRuntime(builder, loc, "dtensor_rt_matmul", {},
              {createI32(builder, loc, dtype),
               createI32(builder, loc, zeroFill ? 0 : 1)});
  op->erase();
  if (zeroFill)
    zeroFill->erase();
  return success();
}

struct CpuMatmulToRuntime
    : dtensor::codegen::impl::CpuMatmulToRuntimeBase<CpuMatmulToRuntime> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    for (linalg::LinalgOp op : candidates)
      (void)lowerMatmul(op);
  }
};

} // namespace

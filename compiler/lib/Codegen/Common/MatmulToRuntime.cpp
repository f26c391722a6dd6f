//===- MatmulToRuntime.cpp - Matmuls on buffers to dtensor_rt_matmul ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime's matmul (a BLAS) beats any loop nest we would emit. Every
// contraction that is a (batched) matrix product up to transposition of its
// operands qualifies: each operand is passed as a view in the order the
// runtime expects ((batch,) M x K, K x N, M x N), and the runtime reads the
// strides, so a transposed operand costs no copy. Several loops of one role
// (a linear on [B, S, in] has M = B x S; attention on [B, H, L, E] has batch
// B x H) are merged into one dim by a collapsed view, when the operands
// hold them adjacent, in one order, and collapsible without a copy.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/Common/Passes.h"

#include "dtensor/Codegen/Common/RuntimeCalls.h"

#include "dtensor/rt_abi.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

namespace dtensor::codegen {
#define GEN_PASS_DEF_MATMULTORUNTIME
#include "dtensor/Codegen/Common/Passes.h.inc"
} // namespace dtensor::codegen

#define DEBUG_TYPE "dtensor-matmul-to-runtime"

using namespace mlir;
using namespace dtensor::codegen;

namespace {

/// The loops of a contraction, in four groups; the runtime sees one dim per
/// non-empty group.
enum Group { Batch, M, N, K, NumGroups };

/// The groups an operand of each role indexes, in the order the runtime
/// expects: (batch,) M x K, K x N, M x N.
constexpr Group kRoleGroups[3][3] = {
    {Batch, M, K}, {Batch, K, N}, {Batch, M, N}};

/// One operand as the runtime sees it: the reassociation collapsing each
/// run of dims of one group, and the group of each collapsed dim.
struct OperandView {
  SmallVector<ReassociationIndices> reassociation;
  SmallVector<Group> groups;
};

/// Splits the dims of an operand indexed by `map` into runs of one group
/// each. Fails unless every dim is a plain loop of the contraction, each
/// group it indexes forms one run, and the loops of a run come in the order
/// `order` records for the group (the first operand seen sets it): merged
/// dims must be linearised the same way in every operand.
std::optional<OperandView>
getOperandView(AffineMap map, ArrayRef<Group> groupOfLoop,
               SmallVector<SmallVector<unsigned>> &order) {
  OperandView view;
  SmallVector<SmallVector<unsigned>> runs;
  for (auto [position, expr] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    Group group = groupOfLoop[dim.getPosition()];
    if (view.groups.empty() || view.groups.back() != group) {
      if (llvm::is_contained(view.groups, group))
        return std::nullopt;
      view.groups.push_back(group);
      view.reassociation.emplace_back();
      runs.emplace_back();
    }
    view.reassociation.back().push_back(position);
    runs.back().push_back(dim.getPosition());
  }
  for (auto [group, run] : llvm::zip_equal(view.groups, runs)) {
    if (order[group].empty())
      order[group] = run;
    else if (order[group] != run)
      return std::nullopt;
  }
  return view;
}

/// True when `buffer` needs no collapse for `view`, or its strides allow
/// one without a copy.
bool isCollapsible(Value buffer, const OperandView &view) {
  auto type = cast<MemRefType>(buffer.getType());
  return view.reassociation.size() == static_cast<size_t>(type.getRank()) ||
         memref::CollapseShapeOp::isGuaranteedCollapsible(type,
                                                          view.reassociation);
}

/// `buffer` with each run of `view` collapsed into one dim and the dims in
/// the order `wanted` lists their groups.
Value createView(OpBuilder &builder, Location loc, Value buffer,
                 const OperandView &view, ArrayRef<Group> wanted) {
  auto type = cast<MemRefType>(buffer.getType());
  if (view.reassociation.size() != static_cast<size_t>(type.getRank()))
    buffer = memref::CollapseShapeOp::create(builder, loc, buffer,
                                             view.reassociation);
  SmallVector<unsigned> permutation;
  for (Group group : wanted)
    permutation.push_back(llvm::find(view.groups, group) - view.groups.begin());
  if (llvm::equal(permutation, llvm::seq<unsigned>(0, permutation.size())))
    return buffer;
  AffineMap map =
      AffineMap::getPermutationMap(permutation, builder.getContext());
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

/// Leaves `op` a loop nest; `why` is for -debug-only output.
LogicalResult keepLoops(linalg::LinalgOp op, StringRef why) {
  LLVM_DEBUG(llvm::dbgs() << "'" << op->getName() << "' at " << op.getLoc()
                          << " stays a loop nest: " << why << "\n");
  (void)why;
  return failure();
}

LogicalResult lowerMatmul(linalg::LinalgOp op, bool halfPrecision) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return keepLoops(op, "a contraction without M, N and K loops");

  Value a = op.getDpsInputOperand(0)->get();
  Value b = op.getDpsInputOperand(1)->get();
  Value c = op.getDpsInitOperand(0)->get();
  Type elementType = cast<MemRefType>(a.getType()).getElementType();
  Type resultType = cast<MemRefType>(c.getType()).getElementType();
  bool half = elementType.isF16() || elementType.isBF16();
  if (!elementType.isF32() && !elementType.isF64() && !(halfPrecision && half))
    return keepLoops(op, half ? "half-precision operands, and "
                                "half-precision is off"
                              : "the runtime's matmul takes f32, f64, f16 "
                                "and bf16 operands");
  if (cast<MemRefType>(b.getType()).getElementType() != elementType)
    return keepLoops(op, "its operands' element types differ");
  // Half-precision operands may accumulate into an f32 result.
  bool mixed = resultType != elementType;
  if (mixed && !(half && resultType.isF32()))
    return keepLoops(op, "its result's element type is neither its "
                         "operands' nor f32 for half-precision operands");

  // Several loops of one group (e.g. M = batch x sequence of a linear on
  // [B, S, in]) become one dim of a collapsed view.
  SmallVector<Group> groupOfLoop(op.getNumLoops(), NumGroups);
  const SmallVector<unsigned, 2> *loopsOfGroup[NumGroups] = {
      &dims->batch, &dims->m, &dims->n, &dims->k};
  for (unsigned group = 0; group < NumGroups; ++group)
    for (unsigned loop : *loopsOfGroup[group])
      groupOfLoop[loop] = static_cast<Group>(group);
  if (llvm::is_contained(groupOfLoop, NumGroups))
    return keepLoops(op, "a loop is neither batch, M, N nor K");
  SmallVector<SmallVector<unsigned>> order(NumGroups);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<OperandView> views;
  for (AffineMap map : maps) {
    std::optional<OperandView> view = getOperandView(map, groupOfLoop, order);
    if (!view)
      return keepLoops(op, "an operand's dims are not runs of one group "
                           "each, in one order in every operand");
    views.push_back(std::move(*view));
  }

  Value buffers[] = {a, b, c};
  for (auto [buffer, view] : llvm::zip_equal(buffers, views))
    if (!isCollapsible(buffer, view))
      return keepLoops(op, "an operand's strides do not let its runs "
                           "collapse without a copy");
  // An operand with a dim of size 0 (no tokens, or a shard of no heads)
  // stays a loop nest that runs no iteration: there is nothing to multiply,
  // and collapsing 0 with a dynamic size gives a static 0 that
  // memref.collapse_shape's verifier refuses.
  for (Value buffer : buffers)
    if (llvm::is_contained(cast<MemRefType>(buffer.getType()).getShape(), 0))
      return keepLoops(op, "an operand has a dim of size 0");

  OpBuilder builder(op);
  Location loc = op.getLoc();
  linalg::FillOp zeroFill = findZeroFill(op, c);
  for (auto [role, buffer] : llvm::enumerate(buffers)) {
    SmallVector<Group> wanted;
    for (Group group : kRoleGroups[role])
      if (group != Batch || !dims->batch.empty())
        wanted.push_back(group);
    pushBuffer(builder, loc,
               createView(builder, loc, buffer, views[role], wanted));
  }
  SmallVector<Value> args = {
      createI32(builder, loc, *getRuntimeDType(elementType))};
  if (mixed)
    args.push_back(createI32(builder, loc, *getRuntimeDType(resultType)));
  args.push_back(createI32(builder, loc, zeroFill ? 0 : 1));
  callRuntime(builder, loc,
              mixed ? "dtensor_rt_matmul_mixed" : "dtensor_rt_matmul", {},
              args);
  LLVM_DEBUG(
      llvm::dbgs() << "'" << op->getName() << "' at " << loc
                   << " becomes a call of "
                   << (mixed ? "dtensor_rt_matmul_mixed" : "dtensor_rt_matmul")
                   << (dims->batch.empty() ? "" : " (batched)")
                   << (zeroFill ? ", overwriting its output (the zero "
                                  "fill before it is erased)"
                                : ", accumulating into its output")
                   << "\n");
  op->erase();
  if (zeroFill)
    zeroFill->erase();
  return success();
}

struct MatmulToRuntime
    : dtensor::codegen::impl::MatmulToRuntimeBase<MatmulToRuntime> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    for (linalg::LinalgOp op : candidates)
      (void)lowerMatmul(op, halfPrecision);
  }
};

} // namespace

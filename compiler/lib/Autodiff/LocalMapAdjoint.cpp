//===- LocalMapAdjoint.cpp - The gradient of a local map ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A dtensor.local_map runs its body on each rank's local pieces, and so
// does its adjoint: one more local map whose body recomputes the forward
// body (the body is isolated, so the backward cannot read its values) and
// sweeps back through it, from the pieces of the results' gradients to the
// pieces of the inputs' gradients, by the same rules as the global program.
//
// The gradients' layouts are the duals of the forward's, which is what
// makes the per-rank gradients add up to the global one: a Shard(d) piece's
// gradient is the Shard(d) piece of the gradient; a Replicate input read by
// every rank gets each rank's contribution, a Partial(sum) gradient; a
// Partial(sum) result, the sum of the pieces, gives each piece the whole
// gradient (Replicate); and a Replicate result, one value that every rank
// claims to compute, takes its gradient as Partial(sum) pieces, which the
// backward, linear in the gradient, maps to partial contributions. PyTorch's
// local_map assumes by default that an input's gradient has the input's
// placements (in_grad_placements), which is wrong for a Replicate input
// whose ranks contribute different gradients; the dual is right for both.
//
// With pieces of uneven sizes the body is a switch over shape classes
// (typed with dynamic dims outside it), and so is its sweep
// (IndexSwitchAdjoint.cpp).
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace dtensor;
using namespace dtensor::autodiff;

namespace {

/// The layout of the gradient of a value laid out as `layout`; null when a
/// placement has no dual (Partial of max, min or avg).
LayoutAttr dualLayout(LayoutAttr layout) {
  MLIRContext *context = layout.getContext();
  SmallVector<PlacementAttr> placements;
  for (PlacementAttr placement : layout.getPlacements()) {
    if (isa<ShardAttr>(placement))
      placements.push_back(placement);
    else if (isa<ReplicateAttr>(placement))
      placements.push_back(PartialAttr::get(context, ReductionKind::Sum));
    else if (auto partial = dyn_cast<PartialAttr>(placement);
             partial && partial.getKind() == ReductionKind::Sum)
      placements.push_back(ReplicateAttr::get(context));
    else
      return LayoutAttr();
  }
  return LayoutAttr::get(context, layout.getMesh(), placements);
}

} // namespace

LogicalResult dtensor::autodiff::differentiateLocalMap(LocalMapOp op,
                                                       Adjoints &adjoints) {
  Block &body = op.getBody().front();
  YieldOp yield = op.getYield();
  // The backward's operands: the forward's inputs, then the gradients of
  // the results that have one; its results: the gradients of the active
  // inputs.
  OpBuilder &b = adjoints.builder;
  Location loc = op.getLoc();
  SmallVector<Value> operands(op.getInputs());
  SmallVector<Attribute> inLayouts(op.getInLayouts().begin(),
                                   op.getInLayouts().end());
  SmallVector<Type> argumentTypes(body.getArgumentTypes());
  SmallVector<unsigned> seeded;
  for (auto [index, result] : llvm::enumerate(op.getResults())) {
    Value gradient = adjoints.lookup(result);
    if (!gradient)
      continue;
    LayoutAttr dual = dualLayout(op.getOutLayout(index));
    if (!dual)
      return op.emitOpError()
             << "has no gradient rule for its result #" << index
             << ", laid out as " << op.getOutLayout(index)
             << ": a Partial other than sum has no dual";
    seeded.push_back(index);
    operands.push_back(gradient);
    inLayouts.push_back(dual);
    argumentTypes.push_back(yield.getValues()[index].getType());
  }
  SmallVector<unsigned> differentiated;
  SmallVector<Attribute> outLayouts;
  SmallVector<Type> resultTypes;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    if (!adjoints.isActive(input))
      continue;
    LayoutAttr dual = dualLayout(op.getInLayout(index));
    if (!dual)
      return op.emitOpError() << "has no gradient rule for its input #" << index
                              << ", laid out as " << op.getInLayout(index)
                              << ": a Partial other than sum has no dual";
    differentiated.push_back(index);
    outLayouts.push_back(dual);
    resultTypes.push_back(input.getType());
  }
  if (differentiated.empty())
    return success();

  // The gradients arrive in whatever layout propagation gives them, so the
  // backward redistributes its operands (the forward's inputs are already
  // in their layouts).
  auto backward =
      LocalMapOp::create(b, loc, resultTypes, operands,
                         b.getArrayAttr(inLayouts), b.getArrayAttr(outLayouts),
                         /*redistribute_inputs=*/true);
  Block *block = b.createBlock(&backward.getBody());
  SmallVector<Location> locations(argumentTypes.size(), loc);
  block->addArguments(argumentTypes, locations);

  // The body's forward, then its reverse sweep, on the local pieces.
  OpBuilder inner = OpBuilder::atBlockEnd(block);
  IRMapping mapping;
  for (auto [argument, local] :
       llvm::zip(body.getArguments(), block->getArguments()))
    mapping.map(argument, local);
  SmallVector<Value> seeds(yield.getValues().size());
  for (auto [position, index] : llvm::enumerate(seeded))
    seeds[index] = block->getArgument(op.getInputs().size() + position);
  SmallVector<Value> wrt;
  for (unsigned index : differentiated)
    wrt.push_back(block->getArgument(index));
  FailureOr<SmallVector<Value>> pieces =
      sweepBody(inner, loc, body, mapping, seeds, wrt);
  if (failed(pieces))
    return failure();
  YieldOp::create(inner, loc, *pieces);

  b.setInsertionPointAfter(backward);
  for (auto [position, index] : llvm::enumerate(differentiated))
    adjoints.add(loc, op.getInputs()[index], backward.getResult(position));
  return success();
}

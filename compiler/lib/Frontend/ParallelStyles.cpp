//===- ParallelStyles.cpp - Tensor-parallel styles at module boundaries ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Values cross module boundaries through the styles of the modules they
// leave and enter: a module output takes the output layouts of every styled
// module it leaves (innermost first), a module input the input layouts of
// every styled module it enters (outermost first). Both are emitted lazily,
// where a reader needs them, so a layout nobody reads constrains nothing.
//
//===----------------------------------------------------------------------===//

#include "FunctionImporter.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace dtensor;
using namespace dtensor::frontend;

FailureOr<Value> FunctionImporter::claimThenRedistribute(
    Value value, LayoutAttr given, StylePlacement desired,
    const StyleDecl &style, int64_t rank, llvm::StringRef what, Location loc) {
  value = claim(value, given, loc);
  if (!desired)
    return value;
  FailureOr<LayoutAttr> desiredLayout =
      getStyleLayout(*desired, style.meshDim, rank, true, *style.node, what);
  if (failed(desiredLayout))
    return failure();
  return redistribute(value, given, *desiredLayout, loc);
}

/// Whether `op` is a matmul by a 2-D parameter `[in, out]`: a linear layer
/// stored transposed, as Hugging Face's Conv1D (GPT-2) does.
static bool isParameterMatmul(const OpDecl &op,
                              const llvm::StringSet<> &parameterNames,
                              const std::vector<TensorDecl> &parameters) {
  if (op.definition->name != "matmul" || op.inputs.size() != 2 ||
      !parameterNames.contains(op.inputs[1]))
    return false;
  for (const TensorDecl &decl : parameters)
    if (decl.name == op.inputs[1])
      return decl.type.getRank() == 2;
  return false;
}

/// The ops whose weights colwise/rowwise shard: linear, embedding, and a
/// matmul by a 2-D parameter.
bool FunctionImporter::isShardableLeaf(const OpDecl &op) const {
  return op.definition->name == "linear" ||
         op.definition->name == "embedding" ||
         isParameterMatmul(op, parameterNames, plan.parameters);
}

bool FunctionImporter::holdsEmbedding(const StyledModule &styled) const {
  return llvm::any_of(styled.ops, [&](unsigned index) {
    return plan.ops[index].definition->name == "embedding";
  });
}

LogicalResult FunctionImporter::checkStyledModules() {
  for (const StyledModule &styled : tree.getStyledModules()) {
    const StyleDecl &style = *styled.style;
    if (style.kind != StyleDecl::Kind::Colwise &&
        style.kind != StyleDecl::Kind::Rowwise) {
      size_t given = style.kind == StyleDecl::Kind::PrepareModuleInput
                         ? style.inputLayouts.size()
                         : style.outputLayouts.size();
      size_t available = style.kind == StyleDecl::Kind::PrepareModuleInput
                             ? styled.inputs.size()
                             : styled.outputs.size();
      if (style.kind != StyleDecl::Kind::SequenceParallel && given > available)
        return locator.emitError(*style.node)
               << "module '" << styled.path << "' has " << available
               << (style.kind == StyleDecl::Kind::PrepareModuleInput
                       ? " input(s)"
                       : " output(s)")
               << " but the style gives " << given << " layout(s)";
      continue;
    }
    unsigned leaves = 0;
    for (unsigned index : styled.ops)
      leaves += isShardableLeaf(plan.ops[index]);
    if (leaves != 1)
      return locator.emitError(*style.node)
             << stringifyStyleKind(style.kind) << " applies to a module with "
             << "one linear, embedding or matmul-by-a-parameter op; module '"
             << styled.path << "' has " << leaves;
  }
  return success();
}

SmallVector<const StyledModule *>
FunctionImporter::getOutputChain(llvm::StringRef name) const {
  SmallVector<const StyledModule *> chain;
  std::optional<llvm::StringRef> definer = tree.getDefiningModule(name);
  if (!definer)
    return chain;
  for (const StyledModule *styled : tree.getStyledAncestors(*definer))
    if (llvm::is_contained(styled->outputs, name))
      chain.push_back(styled);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

FailureOr<Value> FunctionImporter::applyOutputStyle(const StyledModule &styled,
                                                    llvm::StringRef name,
                                                    Value value) {
  const StyleDecl &style = *styled.style;
  auto position = llvm::find(styled.outputs, name) - styled.outputs.begin();
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  Location loc = getOpLocation(styled.path, *style.node);
  std::string what =
      ("output '" + name + "' of module '" + styled.path + "'").str();
  StylePlacement given, desired;
  switch (style.kind) {
  case StyleDecl::Kind::Colwise:
  case StyleDecl::Kind::Rowwise:
    if (position != 0)
      return value;
    if (!style.outputLayouts.empty())
      given = style.outputLayouts.front();
    else if (isReplicatedProjection(styled))
      given = ReplicateAttr::get(context);
    else if (style.kind == StyleDecl::Kind::Colwise)
      given = ShardAttr::get(context, -1);
    else
      given = ReplicateAttr::get(context);
    break;
  case StyleDecl::Kind::SequenceParallel:
    given = ShardAttr::get(context, style.sequenceDim);
    break;
  case StyleDecl::Kind::PrepareModuleOutput:
    if (static_cast<size_t>(position) >= style.outputLayouts.size())
      return value;
    given = style.outputLayouts[position];
    desired = style.desiredOutputLayouts[position];
    break;
  case StyleDecl::Kind::PrepareModuleInput:
    return value;
  }
  if (!given)
    return value;
  FailureOr<LayoutAttr> givenLayout =
      getStyleLayout(*given, style.meshDim, rank, true, *style.node, what);
  if (failed(givenLayout))
    return failure();
  // A vocab-parallel lookup is a masked lookup whose partial sums are then
  // reduced, as in PyTorch; without the claim, a small table could be
  // gathered instead, every step.
  if (style.kind == StyleDecl::Kind::Rowwise && position == 0 &&
      holdsEmbedding(styled)) {
    FailureOr<LayoutAttr> partial =
        getStyleLayout(PartialAttr::get(context, ReductionKind::Sum),
                       style.meshDim, rank, true, *style.node, what);
    if (failed(partial))
      return failure();
    value = claim(value, *partial, loc);
  }
  // PyTorch redistributes the outputs of colwise, rowwise and sequence
  // parallel modules to their output layouts: whatever layout the module
  // computed, which is not claimed.
  if (style.kind != StyleDecl::Kind::PrepareModuleOutput)
    return request(value, *givenLayout, loc);
  return claimThenRedistribute(value, *givenLayout, desired, style, rank, what,
                               loc);
}

FailureOr<Value> FunctionImporter::applyInputStyle(const StyledModule &styled,
                                                   llvm::StringRef name,
                                                   Value value) {
  const StyleDecl &style = *styled.style;
  auto position = llvm::find(styled.inputs, name) - styled.inputs.begin();
  if (static_cast<size_t>(position) == styled.inputs.size())
    return value;
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  Location loc = getOpLocation(styled.path, *style.node);
  std::string what =
      ("input '" + name + "' of module '" + styled.path + "'").str();
  StylePlacement given, desired;
  switch (style.kind) {
  case StyleDecl::Kind::Colwise:
  case StyleDecl::Kind::Rowwise: {
    if (position != 0)
      return value;
    PlacementAttr replicate = ReplicateAttr::get(context);
    PlacementAttr lastDim = ShardAttr::get(context, -1);
    bool colwise = style.kind == StyleDecl::Kind::Colwise;
    desired = colwise || holdsEmbedding(styled) ? replicate : lastDim;
    given = !style.inputLayouts.empty() ? style.inputLayouts.front() : *desired;
    break;
  }
  case StyleDecl::Kind::SequenceParallel:
    given = ShardAttr::get(context, style.sequenceDim);
    break;
  case StyleDecl::Kind::PrepareModuleInput:
    if (static_cast<size_t>(position) >= style.inputLayouts.size())
      return value;
    given = style.inputLayouts[position];
    desired = style.desiredInputLayouts[position];
    break;
  case StyleDecl::Kind::PrepareModuleOutput:
    return value;
  }
  if (!given)
    return value;
  FailureOr<LayoutAttr> givenLayout =
      getStyleLayout(*given, style.meshDim, rank, true, *style.node, what);
  if (failed(givenLayout))
    return failure();
  return claimThenRedistribute(value, *givenLayout, desired, style, rank, what,
                               loc);
}

FailureOr<Value> FunctionImporter::getOutputStage(llvm::StringRef name,
                                                  unsigned stage) {
  if (stage == 0)
    return values.lookup(name);
  auto key = std::make_pair(name.str(), stage);
  if (auto it = outputStages.find(key); it != outputStages.end())
    return it->second;
  FailureOr<Value> previous = getOutputStage(name, stage - 1);
  if (failed(previous))
    return failure();
  // Right after the previous stage, so that every reader is dominated.
  OpBuilder::InsertionGuard guard(builder);
  if (Operation *def = previous->getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(previous->getParentBlock());
  SmallVector<const StyledModule *> chain = getOutputChain(name);
  FailureOr<Value> result =
      applyOutputStyle(*chain[stage - 1], name, *previous);
  if (failed(result))
    return failure();
  outputStages[key] = *result;
  return result;
}

FailureOr<Value>
FunctionImporter::getValueFor(llvm::StringRef name,
                              std::optional<llvm::StringRef> readerModule) {
  if (parameterNames.contains(name))
    return values.lookup(name);
  // Leave every styled module of the definer that the reader is not in
  // (readerModule std::nullopt: the model's caller, outside everything).
  SmallVector<const StyledModule *> chain = getOutputChain(name);
  unsigned stage = 0;
  while (stage < chain.size() &&
         !(readerModule && moduleContains(chain[stage]->path, *readerModule)))
    ++stage;
  FailureOr<Value> value = getOutputStage(name, stage);
  if (failed(value) || !readerModule)
    return value;
  // Enter every styled module of the reader that the definer is not in.
  std::optional<llvm::StringRef> definer = tree.getDefiningModule(name);
  for (const StyledModule *styled : tree.getStyledAncestors(*readerModule)) {
    if (definer && moduleContains(styled->path, *definer))
      continue;
    auto key = std::make_pair(styled->path, name.str());
    if (auto it = inputStages.find(key); it != inputStages.end()) {
      value = it->second;
      continue;
    }
    value = applyInputStyle(*styled, name, *value);
    if (failed(value))
      return failure();
    inputStages[key] = *value;
  }
  return value;
}

//===- IndexBounds.cpp - The index inputs the runtime checks --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "IndexBounds.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace dtensor::driver {

namespace {

/// Whether `generic` only converts its one input elementwise (an integer
/// widening, narrowing or index cast), so that its values are the input's.
bool isElementwiseConversion(linalg::GenericOp generic) {
  if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block &body = generic.getRegion().front();
  return llvm::all_of(body.without_terminator(), [](Operation &op) {
    return isa<arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp>(op);
  });
}

/// The argument of `function` whose values `value` carries unchanged (up
/// to shape, layout and integer width), if any.
BlockArgument tracedArgument(func::FuncOp function, Value value) {
  Block &body = function.getBody().front();
  while (value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() == &body ? arg : BlockArgument();
    Operation *op = value.getDefiningOp();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            DistributeOp, ToLayoutOp>(op)) {
      value = op->getOperand(0);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (generic && isElementwiseConversion(generic)) {
      value = generic.getDpsInputs().front();
      continue;
    }
    return BlockArgument();
  }
  return BlockArgument();
}

} // namespace

std::vector<IndexBound> collectIndexBounds(func::FuncOp function) {
  std::vector<IndexBound> bounds;
  // One bound per argument: the smallest range, and an ignore_index only
  // where every use allows the same one.
  auto add = [&](const IndexBound &bound) {
    auto it = llvm::find_if(bounds, [&](const IndexBound &known) {
      return known.argument == bound.argument;
    });
    if (it == bounds.end()) {
      bounds.push_back(bound);
      return;
    }
    std::optional<int64_t> ignoreIndex =
        it->ignoreIndex == bound.ignoreIndex ? bound.ignoreIndex : std::nullopt;
    if (bound.bound < it->bound)
      *it = bound;
    it->ignoreIndex = ignoreIndex;
  };
  function.walk([&](tensor::GatherOp gather) {
    ArrayRef<int64_t> dims = gather.getGatherDims();
    if (dims.size() != 1)
      return;
    int64_t rows = gather.getSourceType().getDimSize(dims.front());
    BlockArgument ids = tracedArgument(function, gather.getIndices());
    if (ShapedType::isDynamic(rows) || !ids)
      return;
    std::string table;
    if (BlockArgument source = tracedArgument(function, gather.getSource()))
      if (auto name = function.getArgAttrOfType<StringAttr>(
              source.getArgNumber(), DTensorDialect::getNameAttrName()))
        table = name.str();
    add({ids.getArgNumber(), rows, table, std::nullopt});
  });
  function.walk([&](Operation *op) {
    auto classIndex = op->getAttrOfType<DictionaryAttr>(
        DTensorDialect::getClassIndexAttrName());
    if (!classIndex)
      return;
    // The dialect verified the dictionary's fields.
    int64_t operand = classIndex.getAs<IntegerAttr>("operand").getInt();
    BlockArgument targets = tracedArgument(function, op->getOperand(operand));
    if (!targets)
      return;
    std::optional<int64_t> ignoreIndex;
    if (auto ignore = classIndex.getAs<IntegerAttr>("ignore_index"))
      ignoreIndex = ignore.getInt();
    add({targets.getArgNumber(),
         classIndex.getAs<IntegerAttr>("classes").getInt(), "", ignoreIndex});
  });
  return bounds;
}

} // namespace dtensor::driver

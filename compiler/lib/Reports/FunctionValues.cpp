//===- FunctionValues.cpp - the tensor values of a function ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "FunctionValues.h"

#include "dtensor/Analysis/ResultLayout.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dtensor;

/// Appends `value` when it is a tensor; other values are not tabulated.
static void addValue(Value value, LayoutAttr layout,
                     std::vector<ValueLayout> &values) {
  if (isa<TensorType>(value.getType()))
    values.push_back({value, layout});
}

/// Appends the tensor values of `op` in the order the IR printer shows them:
/// its results, then, region by region, each block's arguments and ops.
static void collectOpValues(Operation &op, std::vector<ValueLayout> &values) {
  for (OpResult result : op.getResults())
    addValue(result, getResultLayout(result), values);
  for (Region &region : op.getRegions()) {
    for (Block &block : region) {
      for (BlockArgument arg : block.getArguments())
        addValue(arg, {}, values);
      for (Operation &nested : block)
        collectOpValues(nested, values);
    }
  }
}

std::vector<ValueLayout> dtensor::collectFunctionValues(FunctionOpInterface fn) {
  std::vector<ValueLayout> values;
  Region &body = fn.getFunctionBody();
  for (BlockArgument arg : body.getArguments())
    addValue(arg,
             fn.getArgAttrOfType<LayoutAttr>(
                 arg.getArgNumber(), DTensorDialect::getLayoutAttrName()),
             values);
  for (Block &block : body) {
    if (!block.isEntryBlock())
      for (BlockArgument arg : block.getArguments())
        addValue(arg, {}, values);
    for (Operation &op : block)
      collectOpValues(op, values);
  }
  return values;
}

std::string dtensor::describeMesh(MeshOp mesh) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "@" << mesh.getSymName() << " shape [";
  llvm::interleaveComma(mesh.getShape(), os);
  os << "]";
  if (std::optional<ArrayAttr> names = mesh.getDimNames())
    os << " names " << *names;
  if (std::optional<ArrayRef<int64_t>> ids = mesh.getDeviceIds()) {
    os << " devices [";
    llvm::interleaveComma(*ids, os);
    os << "]";
  }
  return text;
}

//===- RowWrites.cpp - The row writes the runtime checks ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Read from the partitioned entry, where the operands of a write_rows that
// are still the function's arguments arrive whole on every rank: the
// sharding rule of write_rows keeps slots and positions whole, so a sharded
// input would reach it through a collective and is not recorded. The
// compiled program still skips rows outside the cache; the runtime's check
// refuses such a call before the step instead.
//
//===----------------------------------------------------------------------===//

#include "RowWrites.h"

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace dtensor::driver {

std::vector<rt::RowWriteInfo>
collectRowWrites(func::FuncOp function,
                 const std::vector<const rt::TensorInfo *> &arguments) {
  std::vector<rt::RowWriteInfo> writes;
  Block &body = function.getBody().front();
  // The manifest's description of `value` when it is an argument of the
  // entry with role `role`.
  auto argument = [&](Value value,
                      rt::TensorRole role) -> const rt::TensorInfo * {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &body ||
        arg.getArgNumber() >= arguments.size())
      return nullptr;
    const rt::TensorInfo *info = arguments[arg.getArgNumber()];
    return info && info->role == role ? info : nullptr;
  };
  auto replicated = [](const rt::TensorInfo &info) {
    return llvm::all_of(info.placements,
                        [](const std::string &p) { return p == "R"; });
  };
  function.walk([&](WriteRowsOp op) {
    Value cache = op.getCache();
    while (auto earlier = cache.getDefiningOp<WriteRowsOp>())
      cache = earlier.getCache();
    const rt::TensorInfo *state = argument(cache, rt::TensorRole::State);
    const rt::TensorInfo *slots =
        argument(op.getSlots(), rt::TensorRole::Input);
    const rt::TensorInfo *positions =
        argument(op.getPositions(), rt::TensorRole::Input);
    int64_t rows = op.getValues().getType().getDimSize(1);
    if (!state || !slots || !positions || state->shape.size() < 2 ||
        !replicated(*slots) || !replicated(*positions) ||
        ShapedType::isDynamic(rows))
      return;
    rt::RowWriteInfo write{state->name,     slots->name,
                           positions->name, rows,
                           state->shape[0], state->shape[1]};
    if (!llvm::is_contained(writes, write))
      writes.push_back(std::move(write));
  });
  return writes;
}

} // namespace dtensor::driver

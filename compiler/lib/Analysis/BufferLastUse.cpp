//===- BufferLastUse.cpp - The last use of a buffer -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Analysis/BufferLastUse.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dtensor;

namespace {

constexpr llvm::StringLiteral kPushBufferPrefix = "dtensor_rt_push_buffer";
constexpr llvm::StringLiteral kCollectiveSite = "dtensor_rt_collective_site";
constexpr llvm::StringLiteral kRuntimePrefix = "dtensor_rt_";
constexpr llvm::StringLiteral kWait = "dtensor_rt_wait";

/// The runtime functions that take the queued buffers (each runs as an
/// AbiCall in runtime/lib, which empties the queue). Any other call after a
/// push leaves the pushed buffer's last use unknown: a function added to
/// the runtime frees nothing early until it is listed here.
bool takesQueuedBuffers(StringRef callee) {
  static constexpr llvm::StringLiteral consumers[] = {
      "dtensor_rt_matmul",
      "dtensor_rt_matmul_mixed",
      "dtensor_rt_attention",
      "dtensor_rt_attention_backward",
      "dtensor_rt_custom_call",
      "dtensor_rt_gpu_launch",
      "dtensor_rt_all_reduce",
      "dtensor_rt_all_gather",
      "dtensor_rt_reduce_scatter",
      "dtensor_rt_all_to_all",
      "dtensor_rt_broadcast",
      "dtensor_rt_shift",
      "dtensor_rt_group_sum",
      "dtensor_rt_mesh_coord",
      kWait};
  return llvm::is_contained(consumers, callee);
}

/// A value that may hold a buffer's address (a memref, a future, a pointer):
/// not a plain number.
bool mayHoldBuffer(Type type) {
  return !type.isIntOrIndexOrFloat() && !isa<VectorType>(type);
}

bool hasBufferResult(Operation *op) {
  return llvm::any_of(op->getResultTypes(), mayHoldBuffer);
}

class LastUseFinder {
public:
  LastUseFinder(Block &block) : block(block) {}

  BufferLastUse find(Value buffer) {
    BufferLastUse result;
    if (Operation *def = buffer.getDefiningOp())
      last = block.findAncestorOpInBlock(*def);
    if (!last && !isa<BlockArgument>(buffer))
      followed = false;
    llvm::SetVector<Value> aliases;
    aliases.insert(buffer);
    for (size_t i = 0; i < aliases.size(); ++i)
      for (OpOperand &operand : aliases[i].getUses()) {
        Operation *user = operand.getOwner();
        if (isa<memref::DeallocOp>(user))
          result.frees.push_back(user);
        else if (!follow(user, operand, aliases))
          followed = false;
      }
    result.aliases.assign(aliases.begin(), aliases.end());
    if (followed)
      result.lastUse = last;
    return result;
  }

private:
  /// Records a use of `use`'s alias by `user`; false when it cannot be
  /// followed.
  bool follow(Operation *user, OpOperand &use,
              llvm::SetVector<Value> &aliases) {
    if (user->hasTrait<OpTrait::IsTerminator>()) {
      // Yielded to the parent op's results; returned, or passed to another
      // block, it is out of sight.
      Operation *parent = user->getParentOp();
      if (user->getNumSuccessors() != 0 || !parent ||
          isa<FunctionOpInterface>(parent))
        return false;
      for (Value result : parent->getResults())
        if (mayHoldBuffer(result.getType()))
          aliases.insert(result);
      return note(user);
    }
    if (auto call = dyn_cast<func::CallOp>(user))
      return followCall(call);
    if (isa<CallOpInterface>(user))
      return false;
    bool view = isa<memref::TransposeOp>(user);
    if (auto viewLike = dyn_cast<ViewLikeOpInterface>(user))
      view = viewLike.getViewSource() == use.get();
    if (view) {
      for (Value result : user->getResults())
        if (mayHoldBuffer(result.getType()))
          aliases.insert(result);
      return note(user);
    }
    // The buffer itself stored, its address taken as a number, or results
    // that may alias it.
    if (isa<memref::ExtractAlignedPointerAsIndexOp>(user) ||
        hasBufferResult(user))
      return false;
    if (auto store = dyn_cast<memref::StoreOp>(user);
        store && store.getValue() == use.get())
      return false;
    return note(user);
  }

  /// A call with a buffer operand: a push, used by the next runtime call
  /// that takes the queue; or a runtime call. Any other callee may keep it.
  bool followCall(func::CallOp call) {
    if (hasBufferResult(call))
      return false;
    StringRef callee = call.getCallee();
    if (!callee.starts_with(kPushBufferPrefix))
      return callee.starts_with(kRuntimePrefix) && note(call) &&
             noteWaits(call);
    for (Operation *next = call->getNextNode(); next;
         next = next->getNextNode()) {
      auto consumer = dyn_cast<func::CallOp>(next);
      if (!consumer)
        continue;
      StringRef name = consumer.getCallee();
      if (name.starts_with(kPushBufferPrefix) || name == kCollectiveSite)
        continue;
      return takesQueuedBuffers(name) && note(consumer) && noteWaits(consumer);
    }
    return false;
  }

  /// An asynchronous runtime call's handle goes to dtensor_rt_wait, which
  /// is then a use; a handle used otherwise cannot be followed.
  bool noteWaits(func::CallOp call) {
    for (Value result : call.getResults())
      for (Operation *user : result.getUsers()) {
        auto wait = dyn_cast<func::CallOp>(user);
        if (!wait || wait.getCallee() != kWait || !note(wait))
          return false;
      }
    return true;
  }

  /// `op` uses the buffer where its ancestor in the block is.
  bool note(Operation *op) {
    Operation *ancestor = block.findAncestorOpInBlock(*op);
    if (!ancestor)
      return false;
    if (!last || last->isBeforeInBlock(ancestor))
      last = ancestor;
    return true;
  }

  Block &block;
  Operation *last = nullptr;
  bool followed = true;
};

} // namespace

BufferLastUse dtensor::findBufferLastUse(Value buffer, Block &block) {
  return LastUseFinder(block).find(buffer);
}

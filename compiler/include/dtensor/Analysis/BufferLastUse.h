//===- BufferLastUse.h - The last use of a buffer ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One definition of a buffer's last use in a bufferized program, for the
// pass that frees each step buffer there (--dtensor-free-after-last-use)
// and for the memory report's last-use peak (docs/memory-report.md).
//
// A buffer is used by the ops that use it or an alias of it: a view
// (ViewLikeOpInterface, memref.transpose) or the result of a region op
// whose region yields it. An op nested in a region uses it where its
// ancestor in the block is. Buffers reach the runtime through
// dtensor_rt_push_buffer, which only queues them: the next runtime call
// that takes the queue is the use, and when that call's handle goes to
// dtensor_rt_wait (an asynchronous collective) the wait is too. (The
// futures of dtensor.start and dtensor.wait hold tensors: they are runtime
// calls by the time there are buffers.)
// Where a use cannot be followed (a call of unknown effect, a result of an
// op that may alias it, a return, a branch, a store of the buffer itself or
// its address taken as an integer) the buffer has no known last use.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_ANALYSIS_BUFFERLASTUSE_H
#define DTENSOR_ANALYSIS_BUFFERLASTUSE_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

namespace dtensor {

struct BufferLastUse {
  /// The buffer and the values through which it is reachable (above),
  /// followed whether or not the buffer escapes.
  llvm::SmallVector<mlir::Value> aliases;
  /// The op of the block after which nothing uses the buffer: the last op
  /// that uses it (frees excluded), or the op that defines it when nothing
  /// does (null for a block argument nothing uses); null when a use cannot
  /// be followed.
  mlir::Operation *lastUse = nullptr;
  /// The memref.dealloc ops of the buffer or of an alias, in any block.
  llvm::SmallVector<mlir::Operation *> frees;
};

/// Where `block` last uses `buffer`: a memref defined in `block` or in a
/// region of one of its ops, or an argument of `block`. A use outside
/// `block` (a result that leaves it) cannot be followed.
BufferLastUse findBufferLastUse(mlir::Value buffer, mlir::Block &block);

} // namespace dtensor

#endif // DTENSOR_ANALYSIS_BUFFERLASTUSE_H

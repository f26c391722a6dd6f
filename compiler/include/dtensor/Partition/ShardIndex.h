//===- ShardIndex.h - which piece of a sharded dim a rank holds -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The per-rank program is the same on every rank; what differs is the piece
// of each sharded dim a rank holds. ShardIndex builds, once per function and
// at its entry, the index arithmetic that turns the rank's mesh coordinates
// into the offset and size of that piece (torch.chunk, nested over several
// mesh dims in the order the layout lists them).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_PARTITION_SHARDINDEX_H
#define DTENSOR_PARTITION_SHARDINDEX_H

#include "dtensor/Dialect/DTensor/DTensorOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <utility>
#include <vector>

namespace dtensor {

/// The piece of a dim one rank holds: its global offset and its size. The
/// size is also given statically when every rank holds the same size.
struct ShardExtent {
  mlir::Value offset;
  mlir::Value size;
  /// The size when it is the same on every rank, else ShapedType::kDynamic.
  int64_t staticSize = mlir::ShapedType::kDynamic;
  /// A head-tail dim only (Placement::headTail): the rank holds `headSize`
  /// indices from `offset`, then `size - headSize` from `tailOffset`. Null
  /// for a dim held in one piece.
  mlir::Value tailOffset;
  mlir::Value headSize;
  /// tailOffset - headSize: added to a local index past the first piece
  /// gives its global index.
  mlir::Value tailShift;
  /// True when the rank holds the dim in two pieces.
  bool isHeadTail() const { return static_cast<bool>(tailOffset); }
};

/// Builds rank-dependent index values of one function, at its entry block's
/// start (before any other op), so they dominate every use. Values are
/// cached: asking twice for the same extent returns the same SSA values.
class ShardIndex {
public:
  ShardIndex(MeshOp mesh, mlir::Block &entry);
  ShardIndex(const ShardIndex &) = delete;
  ShardIndex &operator=(const ShardIndex &) = delete;

  /// This rank's coordinate along `meshDim`.
  mlir::Value getCoord(int64_t meshDim);

  /// This rank's index in its group over `meshDims` (row-major, first listed
  /// most significant), as the collectives order a group.
  mlir::Value getGroupIndex(llvm::ArrayRef<int64_t> meshDims);

  /// The piece of a dim of static `globalSize` sharded over `meshDims`
  /// (outermost first) that this rank holds.
  ShardExtent getExtent(int64_t globalSize, llvm::ArrayRef<int64_t> meshDims);

  /// The two pieces of a dim of static `globalSize` split head-tail over
  /// `meshDim` that this rank holds.
  ShardExtent getHeadTailExtent(int64_t globalSize, int64_t meshDim);

  /// An index constant.
  mlir::Value getIndex(int64_t value);

  MeshOp getMesh() { return mesh; }

  /// Erases the index ops nobody ended up using (offsets computed along with
  /// a size, for instance).
  void eraseUnused();

private:
  /// Remembers the last op the builder inserted.
  struct LastInserted : mlir::OpBuilder::Listener {
    mlir::Operation *last = nullptr;
    std::vector<mlir::Operation *> created;
    void notifyOperationInserted(mlir::Operation *op,
                                 mlir::OpBuilder::InsertPoint) override;
  };

  mlir::OpBuilder &builder();

  MeshOp mesh;
  mlir::Block &entry;
  mlir::Location loc;
  /// Inserts after the last op this class created, so the index ops keep
  /// their creation order at the top of the entry block.
  LastInserted tracker;
  mlir::OpBuilder insertion;
  llvm::SmallVector<mlir::Value> coords;
  llvm::DenseMap<int64_t, mlir::Value> constants;
  std::map<std::pair<int64_t, std::vector<int64_t>>, ShardExtent> extents;
  std::map<std::pair<int64_t, int64_t>, ShardExtent> headTailExtents;
  std::map<std::vector<int64_t>, mlir::Value> groupIndices;
};

} // namespace dtensor

#endif // DTENSOR_PARTITION_SHARDINDEX_H

//===- LayoutMath.h - DTensor sharding layout arithmetic --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pure C++17 model of PyTorch DTensor layouts: device meshes, placements
// (Shard / Replicate / Partial), torch.chunk-style splitting, nested sharding
// and collective groups. It has no MLIR/LLVM dependency so that both the
// compiler passes and the runtime can share one definition of "who holds
// what". Nothing here throws; preconditions are checked with assert().
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_LAYOUT_LAYOUTMATH_H
#define DTENSOR_LAYOUT_LAYOUTMATH_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtensor::layout {

//===----------------------------------------------------------------------===//
// Reductions and placements
//===----------------------------------------------------------------------===//

/// Reduction applied to resolve a Partial placement.
enum class ReduceKind { Sum, Avg, Max, Min };

/// Lower-case name of a reduction: "sum", "avg", "max" or "min".
const char *stringifyReduceKind(ReduceKind kind);

/// Inverse of stringifyReduceKind; std::nullopt for any other spelling.
std::optional<ReduceKind> parseReduceKind(std::string_view text);

/// How a tensor is laid out along one mesh dimension.
struct Placement {
  /// The three DTensor placement kinds.
  enum class Kind { Replicate, Shard, Partial };

  /// Which kind of placement this is.
  Kind kind = Kind::Replicate;
  /// Tensor dim split across the mesh dim (meaningful for Shard only).
  int64_t dim = 0;
  /// Pending reduction (meaningful for Partial only).
  ReduceKind reduce = ReduceKind::Sum;
  /// Shard only: the head-tail (load-balanced) split of context
  /// parallelism. The dim is cut into 2n torch.chunk pieces over a mesh dim
  /// of n ranks and rank r holds pieces r and 2n-1-r, in that order, so
  /// that under a causal mask every rank gets a similar share of the work.
  /// Such a dim is sharded over this one mesh dim only.
  bool headTail = false;

  /// Every device holds the full tensor.
  static Placement replicate();
  /// Tensor dim `dim` is chunked across the mesh dim.
  static Placement shard(int64_t dim);
  /// Tensor dim `dim` is split head-tail across the mesh dim.
  static Placement shardHeadTail(int64_t dim);
  /// Every device holds a partial value still to be reduced with `kind`.
  static Placement partial(ReduceKind kind = ReduceKind::Sum);

  /// True for Shard placements.
  bool isShard() const { return kind == Kind::Shard; }
  /// True for head-tail Shard placements.
  bool isHeadTail() const { return kind == Kind::Shard && headTail; }
  /// True for Replicate placements.
  bool isReplicate() const { return kind == Kind::Replicate; }
  /// True for Partial placements.
  bool isPartial() const { return kind == Kind::Partial; }

  /// DTensor's short notation: "S(0)", "R", "P(sum)"; a head-tail shard is
  /// "S(1,head_tail)".
  std::string str() const;

  /// Equality on the meaningful fields only (e.g. all Replicates are equal).
  friend bool operator==(const Placement &lhs, const Placement &rhs);
  /// Negation of operator==.
  friend bool operator!=(const Placement &lhs, const Placement &rhs) {
    return !(lhs == rhs);
  }
};

/// Parses "S(0)", "S(-1)", "Shard(1)", "Shard(dim=1)", "S(1,head_tail)",
/// "Shard(dim=1, head_tail)", "R", "Replicate",
/// "Replicate()", "P", "P(sum)", "Partial(max)" (surrounding whitespace
/// allowed); std::nullopt on anything else.
std::optional<Placement> parsePlacement(std::string_view text);

/// "[S(0), R]"-style rendering of a placement list.
std::string str(const std::vector<Placement> &placements);

//===----------------------------------------------------------------------===//
// Chunking arithmetic
//===----------------------------------------------------------------------===//

/// Half-open index interval [begin, end).
struct Range {
  /// First index held.
  int64_t begin = 0;
  /// One past the last index held.
  int64_t end = 0;
  /// Number of indices held.
  int64_t size() const { return end - begin; }
  /// Field-wise equality.
  friend bool operator==(const Range &lhs, const Range &rhs) {
    return lhs.begin == rhs.begin && lhs.end == rhs.end;
  }
  /// Negation of operator==.
  friend bool operator!=(const Range &lhs, const Range &rhs) {
    return !(lhs == rhs);
  }
};

/// ceil(a / b) for a >= 0, b > 0.
int64_t ceilDiv(int64_t a, int64_t b);

/// torch.chunk piece `index` of [0,size) split into `parts` pieces (index in
/// [0,parts)); pieces past the data are empty ranges pinned at `size`.
Range chunkRange(int64_t size, int64_t parts, int64_t index);

/// The head-tail split (Placement::headTail) of [0,size) over `parts` ranks:
/// the two torch.chunk pieces `index` and 2*parts-1-`index` of [0,size) cut
/// into 2*parts pieces, in the order the rank holds them (index in
/// [0,parts)).
std::vector<Range> headTailRanges(int64_t size, int64_t parts, int64_t index);

/// The global index of index `local` of a rank's piece made of `pieces` (in
/// the rank's order; `local` below the sum of their sizes).
int64_t globalIndexOf(const std::vector<Range> &pieces, int64_t local);

/// Python-style dim normalisation; std::nullopt when out of [-rank, rank).
std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank);

//===----------------------------------------------------------------------===//
// Device mesh
//===----------------------------------------------------------------------===//

/// N-D array of device ranks.
class Mesh {
public:
  /// Empty (rank-0, invalid) mesh.
  Mesh() = default;
  /// Mesh of `shape`; `deviceIds` (row-major over the mesh) defaults to the
  /// identity, i.e. the device at a coord is its row-major linear index.
  explicit Mesh(std::vector<int64_t> shape,
                std::vector<int64_t> deviceIds = {});

  /// Size of each mesh dim.
  const std::vector<int64_t> &shape() const { return shape_; }
  /// Explicit device ids, row-major; empty when the identity is implied.
  const std::vector<int64_t> &deviceIds() const { return deviceIds_; }
  /// Number of mesh dims.
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// Number of devices (product of shape).
  int64_t size() const;
  /// Size of mesh dim `meshDim`.
  int64_t dimSize(int64_t meshDim) const;

  /// Empty string when valid; otherwise a human-readable reason (no dims,
  /// non-positive size, wrong count of ids, ids not a permutation of
  /// 0..size-1).
  std::string validate() const;

  /// Row-major coordinate of linear index `linearIndex`.
  std::vector<int64_t> coordOfIndex(int64_t linearIndex) const;
  /// Row-major linear index of `coord`.
  int64_t indexOfCoord(const std::vector<int64_t> &coord) const;
  /// Device id at `coord`, honouring explicit device ids.
  int64_t deviceAt(const std::vector<int64_t> &coord) const;
  /// Coordinate of device `device`; std::nullopt when it is not in the mesh.
  std::optional<std::vector<int64_t>> coordOfDevice(int64_t device) const;

  /// Product of sizes of the listed mesh dims.
  int64_t groupSize(const std::vector<int64_t> &meshDims) const;
  /// Index of `coord` within its group over `meshDims` (row-major, first
  /// listed most significant).
  int64_t groupIndex(const std::vector<int64_t> &meshDims,
                     const std::vector<int64_t> &coord) const;
  /// All device coords of the group over `meshDims` that contains `coord`,
  /// ordered by group index.
  std::vector<std::vector<int64_t>>
  groupMembers(const std::vector<int64_t> &meshDims,
               const std::vector<int64_t> &coord) const;

private:
  void assertCoord(const std::vector<int64_t> &coord) const;
  void assertMeshDims(const std::vector<int64_t> &meshDims) const;

  std::vector<int64_t> shape_;
  std::vector<int64_t> deviceIds_;
};

//===----------------------------------------------------------------------===//
// Sharded layouts
//===----------------------------------------------------------------------===//

/// Marker for a local extent that differs across ranks; same value as
/// mlir::ShapedType::kDynamic.
constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

/// Mesh dims that shard tensor dim `tensorDim` (placements already
/// normalised), outermost first (default nesting: ascending mesh dim).
std::vector<int64_t> shardingMeshDims(const std::vector<Placement> &placements,
                                      int64_t tensorDim);

/// Range of a tensor dim of global size `globalSize` held at `coord` when
/// sharded over `meshDims` (outermost first).
Range shardRange(int64_t globalSize, const Mesh &mesh,
                 const std::vector<int64_t> &meshDims,
                 const std::vector<int64_t> &coord);

/// Largest local size over all coordinates (the buffer bound).
int64_t maxShardSize(int64_t globalSize, const Mesh &mesh,
                     const std::vector<int64_t> &meshDims);

/// Local size when every coordinate holds the same size; std::nullopt when
/// sizes differ across coords or `globalSize` is kDynamic.
std::optional<int64_t> uniformShardSize(int64_t globalSize, const Mesh &mesh,
                                        const std::vector<int64_t> &meshDims);

/// The mesh dim that shards tensor dim `tensorDim` head-tail, or nullopt.
std::optional<int64_t> headTailMeshDim(const std::vector<Placement> &placements,
                                       int64_t tensorDim);

/// The global index ranges of tensor dim `tensorDim` (of `globalSize`) held
/// at `coord`, in local order: one range, or for a head-tail dim its two
/// pieces (placements already normalised and valid).
std::vector<Range> heldRanges(int64_t globalSize,
                              const std::vector<Placement> &placements,
                              const Mesh &mesh, int64_t tensorDim,
                              const std::vector<int64_t> &coord);

/// Largest local size of a dim of `globalSize` split head-tail over `parts`
/// ranks.
int64_t maxHeadTailSize(int64_t globalSize, int64_t parts);

/// Local size of a dim of `globalSize` split head-tail over `parts` ranks
/// when every rank holds the same size; nullopt when sizes differ or
/// `globalSize` is kDynamic.
std::optional<int64_t> uniformHeadTailSize(int64_t globalSize, int64_t parts);

/// Block of the global tensor held by one device. Along a head-tail dim the
/// block is two pieces of the global dim, one after the other.
struct Shard {
  /// Global index of the block's first element, per tensor dim (of the
  /// first piece along a head-tail dim).
  std::vector<int64_t> offset;
  /// Extent of the block, per tensor dim.
  std::vector<int64_t> shape;
  /// Per tensor dim, the global ranges held, in local order: one, or the
  /// two pieces of a head-tail dim (empty pieces included).
  std::vector<std::vector<Range>> pieces;
  /// True when some dim is held as two pieces.
  bool isSplit() const;
};

/// The block of the global tensor held at `coord` (Partial/Replicate dims
/// are held whole). Negative shard dims are normalised internally.
Shard localShard(const std::vector<int64_t> &globalShape,
                 const std::vector<Placement> &placements, const Mesh &mesh,
                 const std::vector<int64_t> &coord);

/// Static local shape: per tensor dim the uniform shard size, or kDynamic
/// when it differs across ranks. Negative shard dims are normalised
/// internally.
std::vector<int64_t> localShapeType(const std::vector<int64_t> &globalShape,
                                    const std::vector<Placement> &placements,
                                    const Mesh &mesh);

/// Normalises negative shard dims in place given the tensor rank; returns ""
/// or an error message (placements are left untouched on error). A
/// head-tail dim may be sharded by no other mesh dim.
std::string normalizeAndValidate(std::vector<Placement> &placements,
                                 const Mesh &mesh, int64_t tensorRank);

} // namespace dtensor::layout

#endif // DTENSOR_LAYOUT_LAYOUTMATH_H

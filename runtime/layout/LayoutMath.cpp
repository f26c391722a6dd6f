//===- LayoutMath.cpp - DTensor sharding layout arithmetic ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Layout/LayoutMath.h"

#include <algorithm>
#include <cassert>
#include <charconv>

namespace dtensor::layout {

//===----------------------------------------------------------------------===//
// Reductions and placements
//===----------------------------------------------------------------------===//

const char *stringifyReduceKind(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Sum:
    return "sum";
  case ReduceKind::Avg:
    return "avg";
  case ReduceKind::Max:
    return "max";
  case ReduceKind::Min:
    return "min";
  }
  return "sum"; // Unreachable; keeps -Wreturn-type quiet.
}

std::optional<ReduceKind> parseReduceKind(std::string_view text) {
  for (ReduceKind kind :
       {ReduceKind::Sum, ReduceKind::Avg, ReduceKind::Max, ReduceKind::Min})
    if (text == stringifyReduceKind(kind))
      return kind;
  return std::nullopt;
}

Placement Placement::replicate() { return Placement{}; }

Placement Placement::shard(int64_t dim) {
  Placement p;
  p.kind = Kind::Shard;
  p.dim = dim;
  return p;
}

Placement Placement::shardHeadTail(int64_t dim) {
  Placement p = shard(dim);
  p.headTail = true;
  return p;
}

Placement Placement::partial(ReduceKind kind) {
  Placement p;
  p.kind = Kind::Partial;
  p.reduce = kind;
  return p;
}

std::string Placement::str() const {
  switch (kind) {
  case Kind::Replicate:
    return "R";
  case Kind::Shard:
    return "S(" + std::to_string(dim) + (headTail ? ",head_tail)" : ")");
  case Kind::Partial:
    return std::string("P(") + stringifyReduceKind(reduce) + ")";
  }
  return "R"; // Unreachable.
}

bool operator==(const Placement &lhs, const Placement &rhs) {
  if (lhs.kind != rhs.kind)
    return false;
  // Fields that do not apply to the kind carry no meaning, so ignore them.
  switch (lhs.kind) {
  case Placement::Kind::Replicate:
    return true;
  case Placement::Kind::Shard:
    return lhs.dim == rhs.dim && lhs.headTail == rhs.headTail;
  case Placement::Kind::Partial:
    return lhs.reduce == rhs.reduce;
  }
  return false; // Unreachable.
}

namespace {

std::string_view trim(std::string_view s) {
  auto isSpace = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  while (!s.empty() && isSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back()))
    s.remove_suffix(1);
  return s;
}

/// Strips "key=" from the front of `s` when present.
std::string_view dropKeyword(std::string_view s, std::string_view key) {
  if (s.size() > key.size() && s.substr(0, key.size()) == key &&
      s[key.size()] == '=')
    return trim(s.substr(key.size() + 1));
  return s;
}

/// Whole-string signed decimal integer; std::nullopt on junk or overflow.
std::optional<int64_t> parseInt(std::string_view s) {
  if (s.empty())
    return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size())
    return std::nullopt;
  return value;
}

} // namespace

std::optional<Placement> parsePlacement(std::string_view text) {
  text = trim(text);

  // Split into `name` and optional parenthesised `args`.
  std::string_view name = text;
  std::optional<std::string_view> args;
  if (size_t open = text.find('('); open != std::string_view::npos) {
    if (text.back() != ')')
      return std::nullopt;
    name = trim(text.substr(0, open));
    args = trim(text.substr(open + 1, text.size() - open - 2));
    if (args->find_first_of("()") != std::string_view::npos)
      return std::nullopt;
  }

  if (name == "R" || name == "Replicate") {
    // "Replicate()" is PyTorch's repr; any argument is an error.
    if (args && !args->empty())
      return std::nullopt;
    return Placement::replicate();
  }
  if (name == "S" || name == "Shard") {
    if (!args)
      return std::nullopt;
    std::string_view dimText = *args;
    bool headTail = false;
    if (size_t comma = args->find(','); comma != std::string_view::npos) {
      if (trim(args->substr(comma + 1)) != "head_tail")
        return std::nullopt;
      dimText = trim(args->substr(0, comma));
      headTail = true;
    }
    std::optional<int64_t> dim = parseInt(dropKeyword(dimText, "dim"));
    if (!dim)
      return std::nullopt;
    return headTail ? Placement::shardHeadTail(*dim) : Placement::shard(*dim);
  }
  if (name == "P" || name == "Partial") {
    if (!args || args->empty())
      return Placement::partial();
    std::optional<ReduceKind> kind =
        parseReduceKind(dropKeyword(*args, "reduce_op"));
    if (!kind)
      return std::nullopt;
    return Placement::partial(*kind);
  }
  return std::nullopt;
}

std::string str(const std::vector<Placement> &placements) {
  std::string out = "[";
  for (size_t i = 0; i < placements.size(); ++i) {
    if (i)
      out += ", ";
    out += placements[i].str();
  }
  return out + "]";
}

//===----------------------------------------------------------------------===//
// Chunking arithmetic
//===----------------------------------------------------------------------===//

int64_t ceilDiv(int64_t a, int64_t b) {
  assert(a >= 0 && b > 0 && "ceilDiv expects a >= 0, b > 0");
  return a / b + (a % b != 0);
}

Range chunkRange(int64_t size, int64_t parts, int64_t index) {
  assert(size >= 0 && "negative size");
  assert(parts > 0 && index >= 0 && index < parts &&
         "chunk index out of range");
  // torch.chunk: every piece has ceil(size/parts) elements except the tail;
  // pieces starting past the data are empty (DTensor pads them).
  // Written so that no intermediate value exceeds `size` (no overflow near
  // INT64_MAX).
  int64_t chunk = ceilDiv(size, parts);
  if (chunk == 0)
    return {0, 0};
  int64_t begin = index < ceilDiv(size, chunk) ? index * chunk : size;
  return {begin, begin + std::min(chunk, size - begin)};
}

std::vector<Range> headTailRanges(int64_t size, int64_t parts, int64_t index) {
  assert(parts > 0 && index >= 0 && index < parts &&
         "head-tail index out of range");
  return {chunkRange(size, 2 * parts, index),
          chunkRange(size, 2 * parts, 2 * parts - 1 - index)};
}

int64_t globalIndexOf(const std::vector<Range> &pieces, int64_t local) {
  assert(local >= 0 && "negative local index");
  for (const Range &piece : pieces) {
    if (local < piece.size())
      return piece.begin + local;
    local -= piece.size();
  }
  assert(false && "local index past the pieces");
  return -1;
}

std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= rank)
    return std::nullopt;
  return dim < 0 ? dim + rank : dim;
}

//===----------------------------------------------------------------------===//
// Device mesh
//===----------------------------------------------------------------------===//

Mesh::Mesh(std::vector<int64_t> shape, std::vector<int64_t> deviceIds)
    : shape_(std::move(shape)), deviceIds_(std::move(deviceIds)) {}

/// Product of `values`, or std::nullopt when it overflows int64_t.
static std::optional<int64_t> checkedProduct(const std::vector<int64_t> &values) {
  int64_t product = 1;
  for (int64_t value : values)
    if (__builtin_mul_overflow(product, value, &product))
      return std::nullopt;
  return product;
}

int64_t Mesh::size() const {
  std::optional<int64_t> n = checkedProduct(shape_);
  assert(n && "mesh size overflows int64_t; validate() rejects such meshes");
  return *n;
}

int64_t Mesh::dimSize(int64_t meshDim) const {
  assert(meshDim >= 0 && meshDim < rank() && "mesh dim out of range");
  return shape_[meshDim];
}

std::string Mesh::validate() const {
  if (shape_.empty())
    return "mesh has no dimensions";
  for (size_t i = 0; i < shape_.size(); ++i)
    if (shape_[i] <= 0)
      return "mesh dim " + std::to_string(i) + " has non-positive size " +
             std::to_string(shape_[i]);
  if (!checkedProduct(shape_))
    return "mesh has more devices than int64_t can count";
  if (deviceIds_.empty())
    return "";
  int64_t n = size();
  if (static_cast<int64_t>(deviceIds_.size()) != n)
    return "mesh has " + std::to_string(n) + " devices but " +
           std::to_string(deviceIds_.size()) + " device ids were given";
  std::vector<bool> seen(n, false);
  for (int64_t id : deviceIds_) {
    if (id < 0 || id >= n)
      return "device id " + std::to_string(id) + " out of range [0, " +
             std::to_string(n) + ")";
    if (seen[id])
      return "device id " + std::to_string(id) + " appears more than once";
    seen[id] = true;
  }
  return "";
}

void Mesh::assertCoord(const std::vector<int64_t> &coord) const {
  assert(static_cast<int64_t>(coord.size()) == rank() &&
         "coord length must equal mesh rank");
  for (size_t i = 0; i < coord.size(); ++i)
    assert(coord[i] >= 0 && coord[i] < shape_[i] && "coord out of range");
  (void)coord;
}

void Mesh::assertMeshDims(const std::vector<int64_t> &meshDims) const {
#ifndef NDEBUG
  std::vector<bool> seen(shape_.size(), false);
  for (int64_t d : meshDims) {
    assert(d >= 0 && d < rank() && "mesh dim out of range");
    assert(!seen[d] && "mesh dim listed twice");
    seen[d] = true;
  }
#endif
  (void)meshDims;
}

std::vector<int64_t> Mesh::coordOfIndex(int64_t linearIndex) const {
  assert(linearIndex >= 0 && linearIndex < size() && "index out of range");
  std::vector<int64_t> coord(shape_.size());
  for (size_t i = shape_.size(); i-- > 0;) {
    coord[i] = linearIndex % shape_[i];
    linearIndex /= shape_[i];
  }
  return coord;
}

int64_t Mesh::indexOfCoord(const std::vector<int64_t> &coord) const {
  assertCoord(coord);
  int64_t index = 0;
  for (size_t i = 0; i < shape_.size(); ++i)
    index = index * shape_[i] + coord[i];
  return index;
}

int64_t Mesh::deviceAt(const std::vector<int64_t> &coord) const {
  int64_t index = indexOfCoord(coord);
  return deviceIds_.empty() ? index : deviceIds_[index];
}

std::optional<std::vector<int64_t>> Mesh::coordOfDevice(int64_t device) const {
  if (deviceIds_.empty()) {
    if (device < 0 || device >= size())
      return std::nullopt;
    return coordOfIndex(device);
  }
  auto it = std::find(deviceIds_.begin(), deviceIds_.end(), device);
  if (it == deviceIds_.end())
    return std::nullopt;
  return coordOfIndex(it - deviceIds_.begin());
}

int64_t Mesh::groupSize(const std::vector<int64_t> &meshDims) const {
  assertMeshDims(meshDims);
  int64_t n = 1;
  for (int64_t d : meshDims)
    n *= shape_[d];
  return n;
}

int64_t Mesh::groupIndex(const std::vector<int64_t> &meshDims,
                         const std::vector<int64_t> &coord) const {
  assertMeshDims(meshDims);
  assertCoord(coord);
  int64_t index = 0;
  for (int64_t d : meshDims)
    index = index * shape_[d] + coord[d];
  return index;
}

std::vector<std::vector<int64_t>>
Mesh::groupMembers(const std::vector<int64_t> &meshDims,
                   const std::vector<int64_t> &coord) const {
  assertMeshDims(meshDims);
  assertCoord(coord);
  int64_t n = groupSize(meshDims);
  std::vector<std::vector<int64_t>> members;
  members.reserve(n);
  for (int64_t index = 0; index < n; ++index) {
    // Decode `index` in mixed radix, last listed dim least significant.
    std::vector<int64_t> member = coord;
    int64_t rest = index;
    for (size_t i = meshDims.size(); i-- > 0;) {
      int64_t d = meshDims[i];
      member[d] = rest % shape_[d];
      rest /= shape_[d];
    }
    members.push_back(std::move(member));
  }
  return members;
}

//===----------------------------------------------------------------------===//
// Sharded layouts
//===----------------------------------------------------------------------===//

std::vector<int64_t> shardingMeshDims(const std::vector<Placement> &placements,
                                      int64_t tensorDim) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < placements.size(); ++i)
    if (placements[i].isShard() && placements[i].dim == tensorDim)
      dims.push_back(static_cast<int64_t>(i));
  return dims;
}

Range shardRange(int64_t globalSize, const Mesh &mesh,
                 const std::vector<int64_t> &meshDims,
                 const std::vector<int64_t> &coord) {
  assert(globalSize >= 0 && "negative global size");
  assert(static_cast<int64_t>(coord.size()) == mesh.rank() &&
         "coord length must equal mesh rank");
  // Each mesh dim chunks the piece left by the enclosing (outer) ones.
  Range range{0, globalSize};
  for (int64_t d : meshDims) {
    assert(d >= 0 && d < mesh.rank() && "mesh dim out of range");
    Range sub = chunkRange(range.size(), mesh.dimSize(d), coord[d]);
    range = {range.begin + sub.begin, range.begin + sub.end};
  }
  return range;
}

std::optional<int64_t> headTailMeshDim(const std::vector<Placement> &placements,
                                       int64_t tensorDim) {
  for (size_t i = 0; i < placements.size(); ++i)
    if (placements[i].isHeadTail() && placements[i].dim == tensorDim)
      return static_cast<int64_t>(i);
  return std::nullopt;
}

std::vector<Range> heldRanges(int64_t globalSize,
                              const std::vector<Placement> &placements,
                              const Mesh &mesh, int64_t tensorDim,
                              const std::vector<int64_t> &coord) {
  if (std::optional<int64_t> meshDim = headTailMeshDim(placements, tensorDim))
    return headTailRanges(globalSize, mesh.dimSize(*meshDim), coord[*meshDim]);
  return {shardRange(globalSize, mesh, shardingMeshDims(placements, tensorDim),
                     coord)};
}

bool Shard::isSplit() const {
  return std::any_of(pieces.begin(), pieces.end(),
                     [](const std::vector<Range> &p) { return p.size() > 1; });
}

int64_t maxShardSize(int64_t globalSize, const Mesh &mesh,
                     const std::vector<int64_t> &meshDims) {
  // Piece 0 of a chunking is never smaller than any other piece, and piece
  // sizes grow monotonically with the input size, so the all-zero coord
  // holds the largest block at every nesting level.
  return shardRange(globalSize, mesh, meshDims,
                    std::vector<int64_t>(mesh.rank(), 0))
      .size();
}

std::optional<int64_t> uniformShardSize(int64_t globalSize, const Mesh &mesh,
                                        const std::vector<int64_t> &meshDims) {
  // Equal leaves imply equal subtree totals, so every nesting level must
  // split evenly; conversely even splits at every level give equal leaves.
  if (globalSize == kDynamic)
    return std::nullopt;
  int64_t size = globalSize;
  for (int64_t d : meshDims) {
    int64_t parts = mesh.dimSize(d);
    if (size % parts != 0)
      return std::nullopt;
    size /= parts;
  }
  return size;
}

int64_t maxHeadTailSize(int64_t globalSize, int64_t parts) {
  int64_t most = 0;
  for (int64_t r = 0; r < parts; ++r) {
    std::vector<Range> held = headTailRanges(globalSize, parts, r);
    most = std::max(most, held[0].size() + held[1].size());
  }
  return most;
}

std::optional<int64_t> uniformHeadTailSize(int64_t globalSize, int64_t parts) {
  if (globalSize == kDynamic)
    return std::nullopt;
  std::optional<int64_t> size;
  for (int64_t r = 0; r < parts; ++r) {
    std::vector<Range> held = headTailRanges(globalSize, parts, r);
    int64_t here = held[0].size() + held[1].size();
    if (size && *size != here)
      return std::nullopt;
    size = here;
  }
  return size;
}

namespace {

/// Copy of `placements` with shard dims normalised; asserts validity.
std::vector<Placement> normalized(const std::vector<Placement> &placements,
                                  const Mesh &mesh, int64_t tensorRank) {
  std::vector<Placement> result = placements;
  std::string error = normalizeAndValidate(result, mesh, tensorRank);
  assert(error.empty() && "invalid placements for mesh/tensor");
  (void)error;
  return result;
}

} // namespace

Shard localShard(const std::vector<int64_t> &globalShape,
                 const std::vector<Placement> &placements, const Mesh &mesh,
                 const std::vector<int64_t> &coord) {
  int64_t rank = static_cast<int64_t>(globalShape.size());
  std::vector<Placement> norm = normalized(placements, mesh, rank);
  Shard shard;
  shard.offset.reserve(rank);
  shard.shape.reserve(rank);
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<Range> held = heldRanges(globalShape[d], norm, mesh, d, coord);
    int64_t size = 0;
    for (const Range &r : held)
      size += r.size();
    shard.offset.push_back(held.front().begin);
    shard.shape.push_back(size);
    shard.pieces.push_back(std::move(held));
  }
  return shard;
}

std::vector<int64_t> localShapeType(const std::vector<int64_t> &globalShape,
                                    const std::vector<Placement> &placements,
                                    const Mesh &mesh) {
  int64_t rank = static_cast<int64_t>(globalShape.size());
  std::vector<Placement> norm = normalized(placements, mesh, rank);
  std::vector<int64_t> shape;
  shape.reserve(rank);
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> meshDim = headTailMeshDim(norm, d);
    std::optional<int64_t> size =
        meshDim
            ? uniformHeadTailSize(globalShape[d], mesh.dimSize(*meshDim))
            : uniformShardSize(globalShape[d], mesh, shardingMeshDims(norm, d));
    shape.push_back(size ? *size : kDynamic);
  }
  return shape;
}

std::string normalizeAndValidate(std::vector<Placement> &placements,
                                 const Mesh &mesh, int64_t tensorRank) {
  if (std::string meshError = mesh.validate(); !meshError.empty())
    return "invalid mesh: " + meshError;
  if (static_cast<int64_t>(placements.size()) != mesh.rank())
    return "placement count " + std::to_string(placements.size()) +
           " does not match mesh rank " + std::to_string(mesh.rank());
  // Work on a copy so a failing call leaves the caller's list untouched.
  std::vector<Placement> result = placements;
  for (Placement &p : result) {
    if (!p.isShard())
      continue;
    std::optional<int64_t> dim = normalizeDim(p.dim, tensorRank);
    if (!dim)
      return "shard dim " + std::to_string(p.dim) + " out of range for rank-" +
             std::to_string(tensorRank) + " tensor";
    p.dim = *dim;
  }
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].isHeadTail())
      continue;
    for (size_t j = 0; j < result.size(); ++j)
      if (j != i && result[j].isShard() && result[j].dim == result[i].dim)
        return "head-tail shard dim " + std::to_string(result[i].dim) +
               " on mesh dim " + std::to_string(i) +
               " is also sharded over mesh dim " + std::to_string(j);
  }
  placements = std::move(result);
  return "";
}

} // namespace dtensor::layout

//===- ShapeOps.cpp - transpose, reshape, expand, concat, split, slice ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Data movement as the ops the sharding rules know: linalg.transpose,
// tensor.collapse_shape / expand_shape (reshape, squeeze, unsqueeze),
// broadcasting generics (expand, repeat_interleave), tensor.concat and
// tensor.extract_slice.
//
//===----------------------------------------------------------------------===//

#include "OpKinds.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::ops;

EmitResult ops::emitTranspose(OpEmitter &emitter) {
  int64_t rank = emitter.inputType(0).getRank();
  FailureOr<int64_t> dim0 = emitter.getDim("dim0", rank);
  if (failed(dim0))
    return failure();
  FailureOr<int64_t> dim1 = emitter.getDim("dim1", rank);
  if (failed(dim1))
    return failure();
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[*dim0], permutation[*dim1]);
  return SmallVector<Value>{createTranspose(emitter.builder, emitter.loc,
                                            emitter.input(0), permutation)};
}

EmitResult ops::emitPermute(OpEmitter &emitter) {
  int64_t rank = emitter.inputType(0).getRank();
  FailureOr<SmallVector<int64_t>> dims = emitter.getIntList("dims");
  if (failed(dims))
    return failure();
  SmallVector<int64_t> permutation;
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(dims->size()) == rank;
  for (int64_t dim : *dims) {
    if (!valid || dim < -rank || dim >= rank) {
      valid = false;
      break;
    }
    int64_t normalized = dim < 0 ? dim + rank : dim;
    valid = !seen[normalized];
    seen[normalized] = true;
    permutation.push_back(normalized);
  }
  if (!valid)
    return emitter.emitAttrError("dims")
           << "dims " << formatShape(*dims)
           << " is not a permutation of the dims of input '"
           << emitter.inputName(0) << "' "
           << formatShape(emitter.inputType(0).getShape()) << " (rank " << rank
           << ")";
  return SmallVector<Value>{createTranspose(emitter.builder, emitter.loc,
                                            emitter.input(0), permutation)};
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

namespace {
/// A reshape as a collapse of `source` groups into one dim each, then an
/// expansion of each such dim into a `target` group.
struct ReshapeGroups {
  SmallVector<ReassociationIndices> source;
  SmallVector<ReassociationIndices> target;
};
} // namespace

/// The finest grouping of both shapes into runs of equal element counts
/// (size-1 dims join the run before them). With zero-size dims, counts do
/// not tell runs apart, and everything is one group.
static ReshapeGroups groupReshape(ArrayRef<int64_t> from,
                                  ArrayRef<int64_t> to) {
  ReshapeGroups groups;
  auto everything = [](int64_t rank) {
    ReassociationIndices all;
    for (int64_t dim = 0; dim < rank; ++dim)
      all.push_back(dim);
    return all;
  };
  if (llvm::is_contained(from, 0) || llvm::is_contained(to, 0)) {
    groups.source.push_back(everything(from.size()));
    groups.target.push_back(everything(to.size()));
    return groups;
  }
  size_t i = 0, j = 0;
  while (i < from.size() && j < to.size()) {
    ReassociationIndices source{static_cast<int64_t>(i)};
    ReassociationIndices target{static_cast<int64_t>(j)};
    int64_t p = from[i++], q = to[j++];
    while (p != q) {
      if (p < q) {
        source.push_back(i);
        p *= from[i++];
      } else {
        target.push_back(j);
        q *= to[j++];
      }
    }
    groups.source.push_back(source);
    groups.target.push_back(target);
  }
  // Trailing size-1 dims join the last group.
  for (; i < from.size(); ++i)
    if (!groups.source.empty())
      groups.source.back().push_back(i);
  for (; j < to.size(); ++j)
    if (!groups.target.empty())
      groups.target.back().push_back(j);
  return groups;
}

/// True when every group has one dim: no reshape is needed on that side.
static bool isTrivial(ArrayRef<ReassociationIndices> groups, int64_t rank) {
  return static_cast<int64_t>(groups.size()) == rank &&
         llvm::all_of(groups, [](const ReassociationIndices &group) {
           return group.size() == 1;
         });
}

/// `value` reshaped to `shape` (of as many elements): the finest collapse
/// of its groups, then their expansion to the new shape.
static Value createReshape(OpBuilder &b, Location loc, Value value,
                           ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  ReshapeGroups groups = groupReshape(type.getShape(), shape);
  Type element = type.getElementType();
  if (!isTrivial(groups.source, type.getRank())) {
    SmallVector<int64_t> collapsed;
    for (const ReassociationIndices &group : groups.source) {
      int64_t size = 1;
      for (int64_t dim : group)
        size *= type.getDimSize(dim);
      collapsed.push_back(size);
    }
    value = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(collapsed, element), value,
        groups.source);
  }
  if (!isTrivial(groups.target, shape.size()))
    value = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, element), value, groups.target);
  return value;
}

EmitResult ops::emitReshape(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  FailureOr<SmallVector<int64_t>> requested = emitter.getIntList("shape");
  if (failed(requested))
    return failure();
  SmallVector<int64_t> shape = *requested;
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (auto [position, size] : llvm::enumerate(shape)) {
    if (size == -1 && !inferred) {
      inferred = position;
      continue;
    }
    if (size < 0)
      return emitter.emitAttrError("shape")
             << "shape " << formatShape(shape)
             << (size == -1 ? " has more than one -1" : " has a negative size");
    known *= size;
  }
  int64_t count = product(type.getShape());
  if (inferred) {
    if (known == 0)
      return emitter.emitAttrError("shape")
             << "the -1 in shape " << formatShape(shape)
             << " is ambiguous: the other sizes have 0 elements";
    if (count % known != 0)
      return emitter.emitAttrError("shape")
             << "shape " << formatShape(shape) << " cannot hold the " << count
             << " elements of input '" << emitter.inputName(0) << "' "
             << formatShape(type.getShape());
    shape[*inferred] = count / known;
  } else if (known != count) {
    return emitter.emitAttrError("shape")
           << "shape " << formatShape(shape) << " has " << known
           << " elements but input '" << emitter.inputName(0) << "' "
           << formatShape(type.getShape()) << " has " << count;
  }

  return SmallVector<Value>{
      createReshape(emitter.builder, emitter.loc, emitter.input(0), shape)};
}

//===----------------------------------------------------------------------===//
// unsqueeze, squeeze
//===----------------------------------------------------------------------===//

EmitResult ops::emitUnsqueeze(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  int64_t rank = type.getRank();
  FailureOr<int64_t> dim = emitter.getInt("dim");
  if (failed(dim))
    return failure();
  // The dim of the result: rank + 1 places.
  if (*dim < -rank - 1 || *dim > rank)
    return emitter.emitAttrError("dim")
           << "dim " << *dim << " is out of range for unsqueezing a tensor of "
           << "rank " << rank << " (expected " << -rank - 1 << " to " << rank
           << ")";
  int64_t position = *dim < 0 ? *dim + rank + 1 : *dim;
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + position, 1);
  return SmallVector<Value>{
      createReshape(emitter.builder, emitter.loc, emitter.input(0), shape)};
}

EmitResult ops::emitSqueeze(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> dims;
  if (emitter.has("dim")) {
    FailureOr<SmallVector<int64_t>> listed =
        emitter.getIntList("dim", /*allowScalar=*/true);
    if (failed(listed))
      return failure();
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeDims(emitter, "dim", *listed, rank);
    if (failed(normalized))
      return failure();
    dims = std::move(*normalized);
  } else {
    dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  // A listed dim whose size is not 1 stays, as torch.squeeze.
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    if (size != 1 || !llvm::is_contained(dims, static_cast<int64_t>(dim)))
      shape.push_back(size);
  return SmallVector<Value>{
      createReshape(emitter.builder, emitter.loc, emitter.input(0), shape)};
}

//===----------------------------------------------------------------------===//
// expand, repeat_interleave
//===----------------------------------------------------------------------===//

/// `input` broadcast to `shape` (NumPy rules, which the caller checked):
/// one generic reading it through its broadcast map, so the dims that keep
/// their size keep their sharding.
static Value createBroadcast(OpBuilder &b, Location loc, Value input,
                             ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  return createMap(b, loc, shape, type.getElementType(), input,
                   getBroadcastMap(b.getContext(), type.getShape(), shape),
                   [](OpBuilder &, Location, ValueRange args) {
                     return SmallVector<Value>{args[0]};
                   });
}

EmitResult ops::emitExpand(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  ArrayRef<int64_t> old = type.getShape();
  FailureOr<SmallVector<int64_t>> sizes = emitter.getIntList("shape");
  if (failed(sizes))
    return failure();
  int64_t rank = type.getRank();
  int64_t count = sizes->size();
  if (count < rank)
    return emitter.emitAttrError("shape")
           << "shape " << formatShape(*sizes) << " has fewer dims than input '"
           << emitter.inputName(0) << "' " << formatShape(old)
           << "; expand adds leading dims, it cannot remove any";
  int64_t added = count - rank;
  SmallVector<int64_t> shape;
  for (auto [position, size] : llvm::enumerate(*sizes)) {
    int64_t at = position;
    if (at < added) {
      if (size < 0)
        return emitter.emitAttrError("shape")
               << "shape " << formatShape(*sizes) << " gives the new leading "
               << "dim " << at << " size " << size
               << "; a new dim needs a size (at least 0)";
      shape.push_back(size);
      continue;
    }
    int64_t current = old[at - added];
    if (size == -1) {
      shape.push_back(current);
      continue;
    }
    if (size < 0)
      return emitter.emitAttrError("shape")
             << "shape " << formatShape(*sizes) << " has a negative size "
             << size << " (only -1, keep the size, is allowed)";
    if (current != 1 && size != current)
      return emitter.emitAttrError("shape")
             << "shape " << formatShape(*sizes) << " asks for size " << size
             << " in dim " << at << ", but dim " << at - added << " of input '"
             << emitter.inputName(0) << "' " << formatShape(old) << " has size "
             << current << "; only size-1 dims expand";
    shape.push_back(size);
  }
  return SmallVector<Value>{
      createBroadcast(emitter.builder, emitter.loc, emitter.input(0), shape)};
}

EmitResult ops::emitRepeatInterleave(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  FailureOr<int64_t> repeats = emitter.getInt("repeats");
  if (failed(repeats))
    return failure();
  if (*repeats < 0)
    return emitter.emitAttrError("repeats")
           << "repeats " << *repeats << " must be at least 0";
  FailureOr<int64_t> dim = emitter.getDim("dim", type.getRank());
  if (failed(dim))
    return failure();
  if (*repeats == 1)
    return SmallVector<Value>{emitter.input(0)};
  // [..., n, ...] -> [..., n, 1, ...] -> [..., n, repeats, ...] ->
  // [..., n * repeats, ...]: element j of `dim` reads x[j / repeats]. The
  // reshapes keep n the major dim of its group, so a sharding of `dim`
  // carries through (Hugging Face's repeat_kv on sharded KV heads).
  OpBuilder &b = emitter.builder;
  Location loc = emitter.loc;
  Value unit = insertUnitDims(b, loc, emitter.input(0), {*dim + 1});
  SmallVector<int64_t> repeated(
      cast<RankedTensorType>(unit.getType()).getShape());
  repeated[*dim + 1] = *repeats;
  Value broadcast = createBroadcast(b, loc, unit, repeated);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    ReassociationIndices group{d < *dim ? d : d + (d > *dim)};
    if (d == *dim)
      group.push_back(d + 1);
    groups.push_back(group);
  }
  SmallVector<int64_t> shape(type.getShape());
  shape[*dim] *= *repeats;
  return SmallVector<Value>{tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), broadcast,
      groups)};
}

//===----------------------------------------------------------------------===//
// concat, split, slice
//===----------------------------------------------------------------------===//

EmitResult ops::emitConcat(OpEmitter &emitter) {
  RankedTensorType first = emitter.inputType(0);
  FailureOr<int64_t> dim = emitter.getDim("dim", first.getRank(), 0);
  if (failed(dim))
    return failure();
  for (unsigned i = 1; i < emitter.inputs().size(); ++i) {
    if (failed(checkSameDtype(emitter, i, 0)))
      return failure();
    RankedTensorType type = emitter.inputType(i);
    bool matches = type.getRank() == first.getRank();
    for (int64_t d = 0; matches && d < first.getRank(); ++d)
      matches = d == *dim || type.getDimSize(d) == first.getDimSize(d);
    if (!matches)
      return emitter.emitInputError(i)
             << "input '" << emitter.inputName(i) << "' has shape "
             << formatShape(type.getShape()) << " but '" << emitter.inputName(0)
             << "' has " << formatShape(first.getShape())
             << "; inputs must have equal sizes except in dim " << *dim;
  }
  // An input with no elements adds nothing; a result with no elements is an
  // empty tensor (bufferization would otherwise cut views of size 0 at
  // offset 0 out of a dim of size 0, which memref.subview refuses).
  SmallVector<Value> inputs;
  SmallVector<int64_t> shape(first.getShape());
  shape[*dim] = 0;
  for (Value input : emitter.inputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    shape[*dim] += type.getDimSize(*dim);
    if (type.getNumElements() != 0)
      inputs.push_back(input);
  }
  if (inputs.empty())
    return SmallVector<Value>{tensor::EmptyOp::create(
        emitter.builder, emitter.loc, shape, first.getElementType())};
  if (inputs.size() == 1)
    return SmallVector<Value>{inputs.front()};
  return SmallVector<Value>{
      tensor::ConcatOp::create(emitter.builder, emitter.loc, *dim, inputs)};
}

/// The slice [offset, offset + size) of `dim` of `input`, every `stride`.
static Value createSlice(OpBuilder &b, Location loc, Value input, int64_t dim,
                         int64_t offset, int64_t size, int64_t stride) {
  auto type = cast<RankedTensorType>(input.getType());
  if (offset == 0 && size == type.getDimSize(dim) && stride == 1)
    return input;
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  offsets[dim] = b.getIndexAttr(offset);
  sizes[dim] = b.getIndexAttr(size);
  strides[dim] = b.getIndexAttr(stride);
  // A slice of a tensor with a dim of size 0 is empty, and
  // tensor.extract_slice's verifier refuses offset 0 in a dim of size 0.
  if (llvm::is_contained(type.getShape(), 0)) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size;
    return tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  }
  return tensor::ExtractSliceOp::create(b, loc, input, offsets, sizes, strides);
}

EmitResult ops::emitSplit(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  FailureOr<SmallVector<int64_t>> sections =
      emitter.getIntList("split_size_or_sections", /*allowScalar=*/true);
  if (failed(sections))
    return failure();
  FailureOr<int64_t> dim = emitter.getDim("dim", type.getRank(), 0);
  if (failed(dim))
    return failure();
  int64_t size = type.getDimSize(*dim);
  unsigned outputs = emitter.numOutputs();
  // An int is a chunk size; the last chunk may be smaller.
  bool isList = emitter.getNode("split_size_or_sections")->isArray();
  SmallVector<int64_t> sizes;
  if (!isList) {
    int64_t chunk = sections->front();
    if (chunk <= 0)
      return emitter.emitAttrError("split_size_or_sections")
             << "split size " << chunk << " must be positive";
    for (int64_t offset = 0; offset < size; offset += chunk)
      sizes.push_back(std::min(chunk, size - offset));
    if (sizes.empty())
      sizes.push_back(0);
    if (sizes.size() != outputs)
      return emitter.emitError()
             << "splitting dim " << *dim << " of size " << size
             << " into pieces of " << chunk << " gives " << sizes.size()
             << " outputs, but the op lists " << outputs;
  } else {
    int64_t total = 0;
    for (int64_t section : *sections) {
      if (section < 0)
        return emitter.emitAttrError("split_size_or_sections")
               << "sections " << formatShape(*sections)
               << " has a negative size";
      total += section;
    }
    if (total != size)
      return emitter.emitAttrError("split_size_or_sections")
             << "sections " << formatShape(*sections) << " add up to " << total
             << " but dim " << *dim << " of input '" << emitter.inputName(0)
             << "' " << formatShape(type.getShape()) << " has size " << size;
    if (sections->size() != outputs)
      return emitter.emitError()
             << "sections " << formatShape(*sections) << " give "
             << sections->size() << " outputs, but the op lists " << outputs;
    sizes = *sections;
  }
  SmallVector<Value> pieces;
  int64_t offset = 0;
  for (int64_t piece : sizes) {
    pieces.push_back(createSlice(emitter.builder, emitter.loc, emitter.input(0),
                                 *dim, piece == 0 ? 0 : offset, piece, 1));
    offset += piece;
  }
  return pieces;
}

EmitResult ops::emitSlice(OpEmitter &emitter) {
  RankedTensorType type = emitter.inputType(0);
  FailureOr<int64_t> dim = emitter.getDim("dim", type.getRank(), 0);
  if (failed(dim))
    return failure();
  int64_t size = type.getDimSize(*dim);
  FailureOr<int64_t> start = emitter.getInt("start", 0);
  FailureOr<int64_t> end = emitter.getInt("end", size);
  FailureOr<int64_t> step = emitter.getInt("step", 1);
  if (failed(start) || failed(end) || failed(step))
    return failure();
  if (*step < 1)
    return emitter.emitAttrError("step")
           << "step " << *step << " must be at least 1";
  // Python: negative bounds count from the end; bounds are clamped.
  auto clamp = [&](int64_t bound) {
    if (bound < 0)
      bound += size;
    return std::clamp<int64_t>(bound, 0, size);
  };
  int64_t begin = clamp(*start), stop = clamp(*end);
  int64_t count = stop > begin ? (stop - begin + *step - 1) / *step : 0;
  return SmallVector<Value>{createSlice(emitter.builder, emitter.loc,
                                        emitter.input(0), *dim,
                                        count == 0 ? 0 : begin, count, *step)};
}

//===- TensorIO.cpp - Moving tensors between the host and a program -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// set / fill / init_weights / load_weights / get. A Partial placement holds the
// global value as the sum (or max, min, avg) over its mesh dim; the value
// written from the host is held by the group's first member for sum (zeros
// elsewhere, so the sum is the value) and by every member for the others.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "Program.h"

#include "dtensor/Formats/Box.h"
#include "dtensor/Formats/Init.h"
#include "dtensor/Formats/Random.h"
#include "dtensor/Formats/Safetensors.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <unistd.h>

namespace dtensor::rt {

namespace {

Status lookup(dtensor_program &program, const char *name, Tensor *&tensor) {
  int32_t index = 0;
  if (Status s = findTensor(program, name, index))
    return s;
  tensor = &program.tensors[index];
  return Status::success();
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string quoted(const Tensor &tensor) {
  return "tensor \"" + tensor.info.name + "\"";
}

/// False when this rank must hold zeros of a value written from the host:
/// it is not the first member on a Partial(sum) mesh dim.
bool holdsWrittenValue(const dtensor_program &program, const Tensor &tensor) {
  if (program.reference || !tensor.held)
    return true;
  const std::vector<int64_t> &coord = *program.meshes[tensor.info.mesh].coord;
  for (size_t dim = 0; dim < tensor.placements.size(); ++dim) {
    const layout::Placement &placement = tensor.placements[dim];
    if (placement.isPartial() && placement.reduce == layout::ReduceKind::Sum &&
        coord[dim] != 0)
      return false;
  }
  return true;
}

void zeroUnlessHolder(const dtensor_program &program, Tensor &tensor) {
  if (!holdsWrittenValue(program, tensor) && tensor.localBytes() > 0)
    std::memset(tensor.buffer.data(), 0, tensor.localBytes());
}

Status checkWritable(const Tensor &tensor) {
  if (tensor.info.role == TensorRole::Output)
    return invalidArgument(quoted(tensor) +
                           " is an output; only inputs, weights and state are set");
  return Status::success();
}

/// Writes the rank's block of `tensor` into its host buffer with
/// `fill(offset, shape, out)`, which writes the box [offset, offset + shape)
/// of the global tensor to `out`: at once for a block held in one piece,
/// box by box through a scratch buffer for one held in pieces (a head-tail
/// dim). "" or the first error.
std::string
fillBlock(Tensor &tensor,
          const std::function<std::string(const std::vector<int64_t> &offset,
                                          const std::vector<int64_t> &shape,
                                          void *out)> &fill) {
  if (!tensor.heldInPieces())
    return fill(tensor.localOffset, tensor.localShape, tensor.buffer.data());
  std::vector<char> box;
  for (const BoxPiece &piece : boxPieces(tensor.localPieces)) {
    box.resize(static_cast<size_t>(numElements(piece.shape)) *
               tensor.elemSize());
    if (std::string error = fill(piece.globalOffset, piece.shape, box.data());
        !error.empty())
      return error;
    copyBoxIn(box.data(), tensor.localShape, piece.localOffset, piece.shape,
              tensor.elemSize(), tensor.buffer.data());
  }
  return "";
}

/// The block a rank holds of `tensor` (empty when outside the mesh) and
/// whether it is the rank that sends it in a GLOBAL get: the first member
/// on every mesh dim that does not shard the tensor, so that each element
/// is sent once.
struct RankBlock {
  bool sends = false;
  layout::Shard shard;
};

RankBlock blockOfRank(const dtensor_program &program, const Tensor &tensor,
                      int rank) {
  RankBlock block;
  if (program.reference) {
    block.sends = true;
    block.shard.shape = tensor.info.shape;
    block.shard.offset.assign(tensor.info.shape.size(), 0);
    for (int64_t size : tensor.info.shape)
      block.shard.pieces.push_back({layout::Range{0, size}});
    return block;
  }
  const MeshPlace &place = program.meshes[tensor.info.mesh];
  std::optional<std::vector<int64_t>> coord = place.mesh.coordOfDevice(rank);
  if (!coord)
    return block;
  block.sends = true;
  for (size_t dim = 0; dim < tensor.placements.size(); ++dim)
    if (!tensor.placements[dim].isShard() && (*coord)[dim] != 0)
      block.sends = false;
  block.shard = layout::localShard(tensor.info.shape, tensor.placements,
                                   place.mesh, *coord);
  return block;
}

} // namespace

Status setTensor(dtensor_program &program, const char *name, dtensor_view view,
                 dtensor_dtype dtype, int32_t ndim, const int64_t *shape,
                 const void *data, size_t bytes) {
  Tensor *tensor = nullptr;
  if (Status s = lookup(program, name, tensor))
    return s;
  if (Status s = checkWritable(*tensor))
    return s;
  if (view != DTENSOR_GLOBAL && view != DTENSOR_LOCAL)
    return invalidArgument("set " + quoted(*tensor) + ": unknown view " +
                           std::to_string(view));
  if (static_cast<int32_t>(dtype) != static_cast<int32_t>(tensor->info.dtype))
    return invalidArgument(
        "set " + quoted(*tensor) + ": dtype " +
        (dtypeFromInt(dtype) ? dtypeName(*dtypeFromInt(dtype))
                             : std::to_string(dtype)) +
        " given, the tensor is " + dtypeName(tensor->info.dtype));
  if (ndim < 0 || (ndim > 0 && !shape))
    return invalidArgument("set " + quoted(*tensor) + ": shape is NULL");
  std::vector<int64_t> given(shape, shape + ndim);
  const std::vector<int64_t> &expected =
      view == DTENSOR_GLOBAL ? tensor->info.shape : tensor->localShape;
  if (given != expected)
    return invalidArgument("set " + quoted(*tensor) + ": shape " +
                           shapeText(given) + " given, expected " +
                           shapeText(expected) +
                           (view == DTENSOR_GLOBAL ? " (global)" : " (local)"));
  size_t expectedBytes =
      static_cast<size_t>(numElements(expected)) * tensor->elemSize();
  if (bytes != expectedBytes)
    return invalidArgument("set " + quoted(*tensor) + ": " +
                           std::to_string(bytes) + " bytes given, expected " +
                           std::to_string(expectedBytes));
  if (!data && bytes > 0)
    return invalidArgument("set " + quoted(*tensor) + ": data is NULL");
  tensor->hostWritten();
  if (view == DTENSOR_LOCAL) {
    if (bytes > 0)
      std::memcpy(tensor->buffer.data(), data, bytes);
    return Status::success();
  }
  if (tensor->held)
    copyPiecesOut(data, tensor->info.shape, tensor->localPieces,
                  tensor->elemSize(), tensor->buffer.data());
  zeroUnlessHolder(program, *tensor);
  return Status::success();
}

Status fillTensors(dtensor_program &program, const char *name,
                   dtensor_factory factory, double value, uint64_t seed) {
  if (factory < DTENSOR_ZEROS || factory > DTENSOR_RANDN)
    return invalidArgument("fill: unknown factory " + std::to_string(factory));
  Factory kind = static_cast<Factory>(factory);
  std::vector<Tensor *> targets;
  if (name) {
    Tensor *tensor = nullptr;
    if (Status s = lookup(program, name, tensor))
      return s;
    if (Status s = checkWritable(*tensor))
      return s;
    targets.push_back(tensor);
  } else {
    // Inputs and weights; state starts at zero and changes only by steps,
    // sets and resets that name it.
    for (Tensor &tensor : program.tensors)
      if (tensor.info.role == TensorRole::Input ||
          isWeightRole(tensor.info.role))
        targets.push_back(&tensor);
  }
  for (Tensor *tensor : targets) {
    // Each tensor of a fill-all draws from its own stream: the seed mixed
    // with the tensor's position.
    uint64_t tensorSeed = seed;
    if (!name) {
      uint64_t position =
          static_cast<uint64_t>(tensor - program.tensors.data());
      tensorSeed = seed ^ ((position + 1) * 0x9e3779b97f4a7c15ull);
      tensorSeed ^= tensorSeed >> 31;
    }
    tensor->hostWritten();
    std::string error =
        fillBlock(*tensor, [&](const std::vector<int64_t> &offset,
                               const std::vector<int64_t> &shape, void *out) {
          return fillBox(kind, value, tensorSeed, tensor->info.dtype,
                         tensor->info.shape, offset, shape, out);
        });
    if (!error.empty())
      return invalidArgument("fill " + quoted(*tensor) + ": " + error);
    zeroUnlessHolder(program, *tensor);
  }
  return Status::success();
}

Status initWeights(dtensor_program &program, uint64_t seed,
                   int32_t *uninitialized) {
  int32_t without = 0;
  for (Tensor &tensor : program.tensors) {
    if (!isWeightRole(tensor.info.role))
      continue;
    if (!tensor.info.init) {
      ++without;
      continue;
    }
    tensor.hostWritten();
    std::string error =
        fillBlock(tensor, [&](const std::vector<int64_t> &offset,
                              const std::vector<int64_t> &shape, void *out) {
          return fillInitializer(
              *tensor.info.init, initializerSeed(seed, tensor.info.name),
              tensor.info.dtype, tensor.info.shape, offset, shape, out);
        });
    if (!error.empty())
      return invalidArgument("init " + quoted(tensor) + ": " + error);
    zeroUnlessHolder(program, tensor);
  }
  if (uninitialized)
    *uninitialized = without;
  return Status::success();
}

namespace {

/// The checks of a load that write nothing: every weight without an
/// initializer is in the file, with the program's dtype and shape.
Status checkWeightEntries(const dtensor_program &program,
                          const SafetensorsFile &file, const char *path) {
  for (const Tensor &tensor : program.tensors) {
    if (!isWeightRole(tensor.info.role))
      continue;
    const SafetensorsEntry *entry = file.find(tensor.info.name);
    // A weight with an initializer may come from it instead.
    if (!entry && tensor.info.init)
      continue;
    if (!entry)
      return Status(DTENSOR_ERR_WEIGHTS, std::string(path) + ": weight \"" +
                                             tensor.info.name +
                                             "\" is missing");
    if (entry->dtype != tensor.info.dtype || entry->shape != tensor.info.shape)
      return Status(DTENSOR_ERR_WEIGHTS,
                    std::string(path) + ": weight \"" + tensor.info.name +
                        "\" is " + dtypeName(entry->dtype) +
                        shapeText(entry->shape) + ", the program expects " +
                        dtypeName(tensor.info.dtype) +
                        shapeText(tensor.info.shape));
  }
  return Status::success();
}

/// COLLECTIVE. Whether `values` are equal on every member of `group`.
Status allEqual(Communicator &group, const int64_t *values, size_t count,
                bool &equal) {
  std::vector<int64_t> lowest(count), highest(count);
  if (Status s = group.allReduce(values, lowest.data(), count, DType::I64,
                                 dtensor::layout::ReduceKind::Min))
    return s;
  if (Status s = group.allReduce(values, highest.data(), count, DType::I64,
                                 dtensor::layout::ReduceKind::Max))
    return s;
  equal = lowest == highest;
  return Status::success();
}

/// COLLECTIVE. Every rank opened the same version of the file: equal sizes
/// and header hashes everywhere, and equal modification times among the
/// ranks of one node (a file replaced between two ranks' opens differs in
/// one of them; copies of the file on different nodes may have different
/// times).
Status agreeOnVersion(Communicator &world, const FileVersion &version,
                      const char *path) {
  int64_t everywhere[2] = {static_cast<int64_t>(version.size),
                           static_cast<int64_t>(version.headerHash)};
  bool same = false, sameTime = false;
  if (Status s = allEqual(world, everywhere, 2, same))
    return s;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  uint32_t color = 2166136261u;
  for (const char *c = host; *c; ++c)
    color = (color ^ static_cast<unsigned char>(*c)) * 16777619u;
  std::unique_ptr<Communicator> node;
  if (Status s = world.split(static_cast<int>(color & 0x7fffffff),
                             world.rank(), node))
    return s;
  if (Status s = allEqual(*node, &version.modifiedNs, 1, sameTime))
    return s;
  // Every rank decides alike: the nodes' answers must all be yes.
  int64_t nodeAnswer = sameTime ? 1 : 0;
  bool answersEqual = false;
  if (Status s = allEqual(world, &nodeAnswer, 1, answersEqual))
    return s;
  sameTime = sameTime && answersEqual;
  if (same && sameTime)
    return Status::success();
  std::string what = !same ? "different sizes or headers"
                           : "different modification times on one node";
  return Status(DTENSOR_ERR_WEIGHTS,
                std::string(path) + ": the ranks opened different versions of "
                                    "the file (" +
                    what +
                    "): it was replaced or rewritten during the load; "
                    "nothing was read");
}

} // namespace

Status loadWeights(dtensor_program &program, const char *path) {
  Communicator &world = *program.context->world;
  Status local;
  if (!path)
    local = invalidArgument("load_weights: path is NULL");
  else if (access(path, R_OK) != 0)
    local = Status(DTENSOR_ERR_IO, std::string(path) + ": " +
                                       std::strerror(errno));
  SafetensorsFile file;
  if (local.ok())
    if (std::string error = file.open(path); !error.empty())
      local = Status(DTENSOR_ERR_WEIGHTS, error);
  if (local.ok())
    local = checkWeightEntries(program, file, path);
  // Nothing is written before every rank has the same, whole file.
  if (Status s = world.agree(local))
    return s;
  if (Status s = agreeOnVersion(world, file.version(), path))
    return s;

  for (Tensor &tensor : program.tensors) {
    if (!isWeightRole(tensor.info.role) || !tensor.held)
      continue;
    const SafetensorsEntry *entry = file.find(tensor.info.name);
    if (!entry)
      continue;
    tensor.hostWritten();
    if (std::string error =
            fillBlock(tensor,
                      [&](const std::vector<int64_t> &offset,
                          const std::vector<int64_t> &shape, void *out) {
                        return file.readBox(*entry, offset, shape, out);
                      });
        !error.empty())
      local = Status(DTENSOR_ERR_WEIGHTS, error);
    if (!local.ok())
      break;
    zeroUnlessHolder(program, tensor);
  }
  // Bytes read while the file was rewritten or truncated may mix versions.
  if (local.ok())
    if (std::string error = file.checkUnchanged(); !error.empty())
      local = Status(DTENSOR_ERR_WEIGHTS,
                     error + "; the weights read may mix two versions");
  Status agreed = world.agree(local);
  // Some ranks' weights are overwritten in part: every rank refuses to run
  // until a load succeeds (Program.cpp, runProgram).
  if (agreed.ok())
    program.weightsIncomplete.reset();
  else
    program.weightsIncomplete = std::string(path ? path : "");
  return agreed;
}

Status saveWeights(dtensor_program &program, const char *path) {
  Communicator &world = *program.context->world;
  if (!path)
    return invalidArgument("save_weights: path is NULL");
  bool root = world.rank() == 0;
  // Each tensor is assembled on rank 0 (its Partial dims reduced), which
  // alone writes the file.
  std::vector<const Tensor *> weights;
  std::vector<std::vector<char>> values;
  for (const Tensor &tensor : program.tensors) {
    if (!isWeightRole(tensor.info.role))
      continue;
    size_t bytes =
        static_cast<size_t>(numElements(tensor.info.shape)) * tensor.elemSize();
    std::vector<char> &value = values.emplace_back(root ? bytes : 0);
    if (Status s =
            getTensor(program, tensor.info.name.c_str(), DTENSOR_GLOBAL, 0,
                      root ? value.data() : nullptr, root ? bytes : 0))
      return s;
    weights.push_back(&tensor);
  }
  Status local;
  if (root) {
    std::vector<SafetensorsTensor> entries;
    for (size_t i = 0; i < weights.size(); ++i)
      entries.push_back({weights[i]->info.name, weights[i]->info.dtype,
                         weights[i]->info.shape, values[i].data()});
    if (std::string error = writeSafetensors(path, entries); !error.empty())
      local = Status(DTENSOR_ERR_IO, error);
  }
  return world.agree(local);
}

Status getTensor(dtensor_program &program, const char *name, dtensor_view view,
                 int32_t root, void *data, size_t bytes) {
  Communicator &world = *program.context->world;
  Tensor *tensor = nullptr;
  Status local = lookup(program, name, tensor);
  // A GPU program's last step wrote the device copy.
  if (local.ok())
    local = syncHost(program, *tensor);
  bool receives = false;
  size_t expectedBytes = 0;
  if (local.ok() && view != DTENSOR_GLOBAL && view != DTENSOR_LOCAL)
    local = invalidArgument("get " + quoted(*tensor) + ": unknown view " +
                            std::to_string(view));
  if (local.ok() && view == DTENSOR_GLOBAL &&
      (root < -1 || root >= world.size()))
    local = invalidArgument("get " + quoted(*tensor) + ": root " +
                            std::to_string(root) + " is not -1 or a rank of " +
                            std::to_string(world.size()));
  if (local.ok()) {
    receives = view == DTENSOR_LOCAL || root == -1 || root == world.rank();
    expectedBytes = view == DTENSOR_LOCAL
                        ? tensor->localBytes()
                        : static_cast<size_t>(numElements(tensor->info.shape)) *
                              tensor->elemSize();
    if (receives && bytes != expectedBytes)
      local = invalidArgument(
          "get " + quoted(*tensor) + ": " + std::to_string(bytes) +
          " bytes given, expected " + std::to_string(expectedBytes));
    else if (receives && !data && bytes > 0)
      local = invalidArgument("get " + quoted(*tensor) + ": data is NULL");
  }
  // The arguments decide which collectives follow: agree on them first.
  if (Status s = world.agree(local))
    return s;
  if (view == DTENSOR_LOCAL) {
    if (bytes > 0)
      std::memcpy(data, tensor->buffer.data(), bytes);
    return Status::success();
  }

  // Reduce the Partial mesh dims, one at a time, within the mesh.
  std::vector<char> block(tensor->buffer.data(),
                          tensor->buffer.data() + tensor->localBytes());
  if (tensor->held && !program.reference) {
    for (size_t dim = 0; dim < tensor->placements.size(); ++dim) {
      const layout::Placement &placement = tensor->placements[dim];
      if (!placement.isPartial())
        continue;
      Group &group = program.dimGroups.at({tensor->info.mesh, dim});
      if (Status s = group.comm->allReduce(
              block.data(), block.data(),
              static_cast<size_t>(numElements(tensor->localShape)),
              tensor->info.dtype, placement.reduce))
        return s;
    }
  }

  // Gather one copy of every block and place each where it belongs.
  std::vector<RankBlock> blocks;
  std::vector<size_t> blockBytes;
  size_t total = 0;
  for (int rank = 0; rank < world.size(); ++rank) {
    blocks.push_back(blockOfRank(program, *tensor, rank));
    size_t size =
        blocks.back().sends
            ? static_cast<size_t>(numElements(blocks.back().shard.shape)) *
                  tensor->elemSize()
            : 0;
    blockBytes.push_back(size);
    total += size;
  }
  std::vector<char> gathered(receives ? total : 0);
  const char *send = blocks[world.rank()].sends ? block.data() : nullptr;
  Status status = root == -1 ? world.allGatherV(send, blockBytes[world.rank()],
                                                gathered.data(), blockBytes)
                             : world.gatherV(send, blockBytes[world.rank()],
                                             gathered.data(), blockBytes, root);
  if (status || !receives)
    return status;
  size_t offset = 0;
  for (int rank = 0; rank < world.size(); ++rank) {
    if (!blocks[rank].sends)
      continue;
    copyPiecesIn(gathered.data() + offset, tensor->info.shape,
                 blocks[rank].shard.pieces, tensor->elemSize(), data);
    offset += blockBytes[rank];
  }
  return Status::success();
}

} // namespace dtensor::rt

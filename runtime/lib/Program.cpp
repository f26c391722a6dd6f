//===- Program.cpp - Loading and running artifacts ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "Program.h"
#include "Context.h"
#include "CpuBackend.h"
#include "CudaPlugin.h"
#include "FaultInjection.h"
#include "RowBounds.h"

#include "dtensor/Formats/Box.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>

namespace dtensor::rt {

static thread_local dtensor_program *runningProgram = nullptr;

dtensor_program *currentProgram() { return runningProgram; }

Status TensorBuffer::allocate(size_t size) {
  size_t rounded = (std::max<size_t>(size, 1) + 63) / 64 * 64;
  char *memory = static_cast<char *>(std::aligned_alloc(64, rounded));
  if (!memory)
    return runtimeError("out of memory allocating " + std::to_string(size) +
                        " bytes");
  std::memset(memory, 0, rounded);
  storage.reset(memory);
  bytes = size;
  return Status::success();
}

size_t Tensor::localBytes() const {
  int64_t count = numElements(localShape);
  return static_cast<size_t>(count) * elemSize();
}

} // namespace dtensor::rt

dtensor_program::~dtensor_program() {
  // The backend's memory and communicators go before the groups it was
  // built on; the code is unloaded last.
  collectiveQueue.reset();
  for (dtensor::rt::Tensor &tensor : tensors)
    if (tensor.device)
      backend->freeTensor(tensor.device);
  backend.reset();
  groups.clear();
  dimGroups.clear();
  if (library)
    dlclose(library);
}

namespace dtensor::rt {

namespace {

Status artifactError(const std::string &message) {
  return Status(DTENSOR_ERR_ARTIFACT, message);
}

/// Makes this library's symbols visible to the code about to be loaded.
Status promoteRuntimeSymbols() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&dtensor_version), &info) ||
      !info.dli_fname)
    return runtimeError("cannot locate the dtensor runtime library");
  void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  if (!self)
    return runtimeError(std::string("cannot make the dtensor runtime's "
                                    "symbols global: ") +
                        dlerror());
  dlclose(self);
  return Status::success();
}

/// Reads and checks the manifest and loads the code: the steps that may fail
/// on one rank only.
/// The target the program's code was built for: the manifest's, or for the
/// reference program its "reference_target" (default: the same).
const std::string &codeTarget(const dtensor_program &program) {
  const Manifest &manifest = program.manifest;
  if (program.reference && !manifest.referenceTarget.empty())
    return manifest.referenceTarget;
  return manifest.target;
}

/// The backend of the program's target.
Status createBackend(dtensor_program &program,
                     const dtensor_load_options *options) {
  const std::string &target = codeTarget(program);
  if (target == "cpu") {
    program.backend = std::make_unique<CpuBackend>();
    return Status::success();
  }
  if (target != "cuda")
    return artifactError(program.artifact + ": built for target \"" + target +
                         "\", this runtime runs \"cpu\" and \"cuda\"");
  auto field = [&](size_t offset, size_t size) {
    return options && options->struct_size >= offset + size;
  };
  BackendOptions backendOptions;
  const dtensor_context &context = *program.context;
  backendOptions.worldRank = context.world->rank();
  backendOptions.worldSize = context.world->size();
  backendOptions.localRank = context.localRank;
  if (field(offsetof(dtensor_load_options, cuda_stream), sizeof(void *)))
    backendOptions.stream = options->cuda_stream;
  if (field(offsetof(dtensor_load_options, nccl_comm), sizeof(void *)))
    backendOptions.worldComm = options->nccl_comm;
  if (Status s = createCudaBackend(backendOptions, program.backend))
    return Status(s.code(), program.artifact + ": " + s.message());
  return Status::success();
}

Status loadLocally(dtensor_program &program, int worldSize,
                   const dtensor_load_options *options) {
  std::string dir = program.artifact;
  if (std::string error = readManifest(dir, program.manifest); !error.empty())
    return Status(error.find("cannot open") != std::string::npos ||
                          error.find("No such file") != std::string::npos
                      ? DTENSOR_ERR_IO
                      : DTENSOR_ERR_ARTIFACT,
                  error);
  const Manifest &manifest = program.manifest;
  std::string libraryName = manifest.library;
  if (program.reference) {
    if (manifest.referenceLibrary.empty())
      return artifactError(dir + ": the artifact has no reference_library");
    if (worldSize != 1)
      return invalidArgument(dir +
                             ": the reference program runs on one rank, "
                             "the context has " +
                             std::to_string(worldSize));
    libraryName = manifest.referenceLibrary;
  } else if (manifest.worldSize != worldSize) {
    return artifactError(
        dir + ": built for " + std::to_string(manifest.worldSize) +
        " ranks, the context has " + std::to_string(worldSize));
  }
  // Before the code: a GPU program's code may need its device.
  if (Status s = createBackend(program, options))
    return s;
  if (Status s = promoteRuntimeSymbols())
    return s;
  std::string path = dir + "/" + libraryName;
  program.library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!program.library)
    return artifactError(std::string("cannot load ") + path + ": " + dlerror());
  for (const EntryInfo &info : entryTable(manifest)) {
    std::string symbol = "dtensor_entry_" + info.name;
    Entry entry{
        info.name,
        reinterpret_cast<EntryFunction>(dlsym(program.library, symbol.c_str())),
        info.arguments,
        info.results,
        info.rowWrites,
        info.indexBounds};
    if (!entry.function)
      return artifactError(path + " does not export " + symbol);
    if (info.name == manifest.entry)
      program.activeEntry = program.entries.size();
    program.entries.push_back(std::move(entry));
  }
  return loadCustomOps(manifest, dir, codeTarget(program), program.customOps);
}

/// Works out where this rank sits in each mesh and which block of each
/// tensor it holds, and allocates the blocks.
Status placeTensors(dtensor_program &program, int worldRank) {
  const Manifest &manifest = program.manifest;
  for (const MeshInfo &info : manifest.meshes) {
    MeshPlace place{layout::Mesh(info.shape, info.deviceIds), std::nullopt};
    if (!program.reference)
      place.coord = place.mesh.coordOfDevice(worldRank);
    program.meshes.push_back(std::move(place));
  }
  for (const TensorInfo &info : manifest.tensors) {
    Tensor tensor;
    tensor.info = info;
    const MeshPlace &place = program.meshes[info.mesh];
    for (const std::string &text : info.placements)
      tensor.placements.push_back(program.reference
                                      ? layout::Placement::replicate()
                                      : *layout::parsePlacement(text));
    int64_t rank = static_cast<int64_t>(info.shape.size());
    if (std::string error =
            layout::normalizeAndValidate(tensor.placements, place.mesh, rank);
        !error.empty())
      return artifactError(program.artifact + ": tensor \"" + info.name +
                           "\": " + error);
    tensor.placementText = layout::str(tensor.placements);
    tensor.held = program.reference || place.coord.has_value();
    if (program.reference) {
      tensor.localShape = info.shape;
      tensor.localOffset.assign(rank, 0);
      for (int64_t size : info.shape)
        tensor.localPieces.push_back({layout::Range{0, size}});
    } else if (tensor.held) {
      layout::Shard shard = layout::localShard(info.shape, tensor.placements,
                                               place.mesh, *place.coord);
      tensor.localShape = shard.shape;
      tensor.localOffset = shard.offset;
      tensor.localPieces = shard.pieces;
    } else {
      tensor.localShape.assign(rank, 0);
      tensor.localOffset.assign(rank, 0);
      tensor.localPieces.assign(rank, {layout::Range{0, 0}});
    }
    if (numElements(tensor.localShape) < 0)
      return artifactError(program.artifact + ": tensor \"" + info.name +
                           "\" is too large");
    Status s = tensor.buffer.allocate(tensor.localBytes());
    if (s.ok() && tensor.held)
      s = program.backend->allocateTensor(tensor.localBytes(), tensor.device);
    if (s)
      return Status(s.code(), "tensor \"" + info.name + "\": " + s.message());
    program.tensors.push_back(std::move(tensor));
  }
  return Status::success();
}

/// Creates the communicators of the manifest's groups and the one-dim
/// groups GLOBAL gets reduce Partial tensors over. Same order on every rank.
Status createGroups(dtensor_program &program, Communicator &world) {
  if (program.reference)
    return Status::success();
  for (const GroupInfo &info : program.manifest.groups) {
    Group group;
    if (Status s = createGroup(world, program.meshes[info.mesh], info.mesh,
                               info.meshDims, group))
      return s;
    program.groups.push_back(std::move(group));
  }
  // The backend's communicators, over the groups' MPI communicators. A
  // group spans the world when its members are the context's ranks in
  // order (the host's communicator, if any, can serve it).
  for (size_t id = 0; id < program.groups.size(); ++id) {
    const Group &group = program.groups[id];
    const layout::Mesh &mesh = program.meshes[group.mesh].mesh;
    bool spansWorld = static_cast<int>(group.members.size()) == world.size();
    for (size_t j = 0; spansWorld && j < group.members.size(); ++j)
      spansWorld = mesh.deviceAt(group.members[j]) == static_cast<int64_t>(j);
    if (Status s = world.agree(
            program.backend->addGroup(group.comm.get(), spansWorld)))
      return s;
  }
  for (const Tensor &tensor : program.tensors) {
    for (size_t dim = 0; dim < tensor.placements.size(); ++dim) {
      std::pair<int64_t, int64_t> key(tensor.info.mesh, dim);
      if (!tensor.placements[dim].isPartial() || program.dimGroups.count(key))
        continue;
      if (Status s = createGroup(world, program.meshes[key.first], key.first,
                                 {key.second}, program.dimGroups[key]))
        return s;
    }
  }
  return Status::success();
}

} // namespace

Status loadProgram(dtensor_context *context, const char *artifact,
                   const dtensor_load_options *options,
                   dtensor_program *&program) {
  Communicator &world = *context->world;
  auto loaded = std::make_unique<dtensor_program>();
  loaded->context = context;
  loaded->artifact = artifact ? artifact : "";
  Status local;
  if (!artifact)
    local = invalidArgument("dtensor_program_load: artifact is NULL");
  else if (options && options->struct_size < sizeof(uint32_t))
    local = invalidArgument("dtensor_program_load: options->struct_size is " +
                            std::to_string(options->struct_size));
  if (local.ok()) {
    loaded->reference =
        options &&
                options->struct_size >=
                    offsetof(dtensor_load_options, reference) + sizeof(int32_t)
            ? options->reference != 0
            : false;
    local = loadLocally(*loaded, world.size(), options);
  }
  if (local.ok())
    local = placeTensors(*loaded, world.rank());
  // Creating groups is collective: every rank must know the others loaded.
  if (Status s = world.agree(local))
    return s;
  if (Status s = world.agree(createGroups(*loaded, world)))
    return s;
  program = loaded.release();
  context->programs.push_back(program);
  return Status::success();
}

Status findTensor(const dtensor_program &program, const char *name,
                  int32_t &index) {
  if (!name)
    return invalidArgument("tensor name is NULL");
  // The active entry's inputs and outputs, and the shared tensors.
  const std::string &entry = program.entries[program.activeEntry].name;
  for (size_t i = 0; i < program.tensors.size(); ++i) {
    const TensorInfo &info = program.tensors[i].info;
    if (info.name == name && (info.entry.empty() || info.entry == entry)) {
      index = static_cast<int32_t>(i);
      return Status::success();
    }
  }
  return invalidArgument(program.artifact + ": no tensor named \"" + name +
                         "\"" +
                         (program.entries.size() > 1
                              ? " in entry \"" + entry + "\""
                              : std::string()));
}

Status selectEntry(dtensor_program &program, const char *name) {
  if (!name)
    return invalidArgument("entry name is NULL");
  std::string names;
  for (size_t i = 0; i < program.entries.size(); ++i) {
    if (program.entries[i].name == name) {
      program.activeEntry = i;
      return Status::success();
    }
    names += (i ? ", " : "") + program.entries[i].name;
  }
  return invalidArgument(program.artifact + ": no entry \"" + name +
                         "\" (it has " + names + ")");
}

Status resetState(dtensor_program &program, const char *name, int64_t slot) {
  // Checked for every tensor before any changes.
  std::vector<Tensor *> states;
  for (Tensor &tensor : program.tensors)
    if (tensor.info.role == TensorRole::State &&
        (!name || tensor.info.name == name))
      states.push_back(&tensor);
  if (name && states.empty())
    return invalidArgument(program.artifact + ": no state tensor named \"" +
                           name + "\"");
  for (Tensor *tensor : states) {
    const std::vector<int64_t> &shape = tensor->info.shape;
    if (slot != -1 && (shape.empty() || slot < 0 || slot >= shape[0]))
      return invalidArgument(
          program.artifact + ": slot " + std::to_string(slot) +
          " out of range for state \"" + tensor->info.name + "\" of " +
          (shape.empty() ? std::string("rank 0")
                         : "slots [0, " + std::to_string(shape[0]) + ")"));
  }
  for (Tensor *tensor : states) {
    if (Status s = syncHost(program, *tensor))
      return s;
    int64_t rows = tensor->localShape.empty() ? 1 : tensor->localShape[0];
    size_t rowBytes =
        rows > 0 ? tensor->localBytes() / static_cast<size_t>(rows) : 0;
    int64_t begin = 0, end = rows;
    if (slot != -1) {
      // This rank's rows of dim 0, if it holds the slot.
      int64_t local = slot - tensor->localOffset[0];
      begin = std::clamp<int64_t>(local, 0, rows);
      end = std::clamp<int64_t>(local + 1, 0, rows);
    }
    if (end > begin)
      std::memset(tensor->buffer.data() + begin * rowBytes, 0,
                  static_cast<size_t>(end - begin) * rowBytes);
    tensor->hostWritten();
  }
  return Status::success();
}

Status runProgram(dtensor_program &program) {
  countFaultStep();
  // Every rank has the flag or none (loadWeights agrees before it sets it).
  if (program.weightsIncomplete)
    return Status(DTENSOR_ERR_WEIGHTS,
                  "the weights are incomplete: loading " +
                      *program.weightsIncomplete +
                      " failed after it had started writing them; load them "
                      "again before running");
  // A call that would write rows outside a cache is refused on every rank
  // before any of them starts the step (whose collectives all must join),
  // so it changes nothing anywhere.
  if (!program.entries[program.activeEntry].rowWrites.empty())
    if (Status s = program.context->world->agree(checkRowWrites(program)))
      return s;
  if (!program.entries[program.activeEntry].indexBounds.empty())
    if (Status s = program.context->world->agree(checkIndexBounds(program)))
      return s;
  if (!program.tracing)
    return runStep(program);
  dtensor_trace_event step{"step", program.traceSteps, -1, 0,
                           program.traceNow(), 0.0, -1, 0};
  Status status = runStep(program);
  step.end_us = program.traceNow();
  program.trace.push_back(step);
  ++program.traceSteps;
  return status;
}

Status runStep(dtensor_program &program) {
  Backend &backend = *program.backend;
  if (Status s = backend.beginStep())
    return s;
  const Entry &entry = program.entries[program.activeEntry];
  // Inputs, weights and state the host changed since the last step.
  for (Tensor &tensor : program.tensors) {
    if (!tensor.device || !tensor.deviceStale ||
        tensor.info.role == TensorRole::Output)
      continue;
    if (Status s = backend.upload(tensor.device, tensor.buffer.data(),
                                  tensor.localBytes())) {
      backend.endStep();
      return s;
    }
    tensor.deviceStale = false;
  }
  // The entry's memref descriptors, in storage kept from step to step.
  std::vector<std::vector<int64_t>> &descriptors = program.stepDescriptors;
  std::vector<void *> &arguments = program.stepArguments;
  descriptors.resize(entry.arguments.size() + entry.results.size());
  arguments.clear();
  for (const std::vector<int64_t> *list : {&entry.arguments, &entry.results})
    for (int64_t index : *list) {
      Tensor &tensor = program.tensors[index];
      std::vector<int64_t> &words = descriptors[arguments.size()];
      writeMemRefDescriptor(tensor.stepData(), tensor.localShape, words);
      arguments.push_back(words.data());
    }
  program.queued.clear();
  program.stepError = Status::success();
  dtensor_program *outer = runningProgram;
  runningProgram = &program;
  entry.function(arguments.data());
  runningProgram = outer;
  // The next step's random ops draw from the next seed.
  ++program.randomStep;
  program.queued.clear();
  // Collectives the program issued but did not wait for (its waits were
  // skipped after an error) complete before the step ends.
  if (Status s = drainCollectives(program); s && program.stepError.ok())
    program.stepError =
        Status(s.code(), "at the end of a step of " + program.artifact + ": " +
                             s.message());
  Status result = program.stepError;
  program.stepError = Status::success();
  // Completes the step's queued work, failed or not.
  Status ended = backend.endStep();
  // What the step wrote: its outputs, and the state it updates in place.
  for (const std::vector<int64_t> *list : {&entry.arguments, &entry.results})
    for (int64_t index : *list) {
      Tensor &tensor = program.tensors[index];
      if (tensor.device && (tensor.info.role == TensorRole::Output ||
                            tensor.info.role == TensorRole::State ||
                            tensor.info.role == TensorRole::Parameter))
        tensor.hostStale = true;
    }
  return result ? result : ended;
}

Status syncHost(dtensor_program &program, Tensor &tensor) {
  if (!tensor.hostStale)
    return Status::success();
  if (Status s = program.backend->download(tensor.buffer.data(), tensor.device,
                                           tensor.localBytes()))
    return s;
  tensor.hostStale = false;
  return Status::success();
}

} // namespace dtensor::rt

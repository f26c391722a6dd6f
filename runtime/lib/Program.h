//===- Program.h - A loaded artifact and its tensors ------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program is a compiled artifact loaded on a context: its manifest, its
// code (dlopen'ed), the communicators of its groups, the backend that runs
// its steps, and this rank's shard of every tensor, allocated at load and
// zero-filled. A GPU program keeps a device copy of each tensor next to the
// host copy: a step uploads what the host changed and a get downloads what
// the step wrote.
//
// A rank outside a tensor's mesh (world size larger than the mesh) holds
// nothing of it: its local shape is all zeros, its LOCAL view is empty, and
// it contributes nothing to a GLOBAL get (it may still be the root).
//
// The code's undefined dtensor_rt_* symbols resolve against this library,
// which must be in the global symbol scope when the code is loaded; the
// loader promotes it there (RTLD_NOLOAD | RTLD_GLOBAL) in case the host
// opened it with RTLD_LOCAL.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_PROGRAM_H
#define DTENSOR_RUNTIME_PROGRAM_H

#include "Backend.h"
#include "CollectiveOp.h"
#include "CollectiveQueue.h"
#include "CustomOps.h"
#include "Groups.h"
#include "Status.h"
#include "StridedView.h"

#include "dtensor/Formats/Manifest.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>

namespace dtensor::rt {

/// A 64-byte aligned, zero-filled byte buffer.
class TensorBuffer {
public:
  Status allocate(size_t bytes);
  char *data() const { return storage.get(); }
  size_t size() const { return bytes; }

private:
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> storage;
  size_t bytes = 0;
};

/// One tensor of the program and this rank's shard of it.
struct Tensor {
  TensorInfo info;
  std::vector<layout::Placement> placements;
  std::string placementText;
  /// False when this rank is outside the tensor's mesh.
  bool held = false;
  std::vector<int64_t> localShape, localOffset;
  /// Per dim, the global ranges this rank holds, in local order: two along
  /// a head-tail dim (layout::Placement::headTail; `localOffset` is then the
  /// first one's), one otherwise.
  std::vector<std::vector<layout::Range>> localPieces;
  /// True when some dim is held in two pieces.
  bool heldInPieces() const {
    for (const std::vector<layout::Range> &dim : localPieces)
      if (dim.size() > 1)
        return true;
    return false;
  }
  /// The host copy, which set / fill / init / load_weights / get use.
  TensorBuffer buffer;
  /// The backend's copy that steps run on (device memory), or null when
  /// steps run on `buffer`. `deviceStale`: the host copy changed since the
  /// last upload; `hostStale`: a step wrote the device copy since the last
  /// download.
  void *device = nullptr;
  bool deviceStale = true, hostStale = false;

  /// The memory a step's descriptor points to.
  void *stepData() const { return device ? device : buffer.data(); }
  /// After the host copy was written.
  void hostWritten() { deviceStale = true; }

  size_t elemSize() const { return dtypeSize(info.dtype); }
  size_t localBytes() const;
};

using EntryFunction = void (*)(void **);

/// An entry point of the program and the tensors it takes.
struct Entry {
  std::string name;
  EntryFunction function = nullptr;
  /// Indices into dtensor_program::tensors: arguments, then results.
  std::vector<int64_t> arguments, results;
  /// The row writes checked before each step (RowBounds.h).
  std::vector<RowWriteInfo> rowWrites;
  /// The index inputs checked before each step (RowBounds.h).
  std::vector<IndexBoundInfo> indexBounds;
};

} // namespace dtensor::rt

struct dtensor_program {
  dtensor_context *context = nullptr;
  dtensor::rt::Manifest manifest;
  std::string artifact;
  bool reference = false;
  void *library = nullptr;
  /// The entry points, and the one that run, set and get refer to.
  std::vector<dtensor::rt::Entry> entries;
  size_t activeEntry = 0;
  std::vector<dtensor::rt::MeshPlace> meshes;
  std::vector<dtensor::rt::Group> groups;
  /// Groups over one mesh dim, keyed by (mesh, dim), for reducing Partial
  /// tensors in GLOBAL gets.
  std::map<std::pair<int64_t, int64_t>, dtensor::rt::Group> dimGroups;
  std::vector<dtensor::rt::Tensor> tensors;
  /// Set when a dtensor_program_load_weights failed after it had started
  /// writing weights (the path): some are then from the file and some not,
  /// and runs are refused until a load succeeds.
  std::optional<std::string> weightsIncomplete;
  /// The custom-op libraries and kernels of the manifest's custom_ops.
  dtensor::rt::CustomOps customOps;

  /// State of the step being run: the buffers queued by
  /// dtensor_rt_push_buffer and the first error of an ABI call.
  std::vector<std::pair<int64_t, void *>> queued;
  dtensor::rt::Status stepError;
  /// Storage a step reuses, so that its steady state does not allocate:
  /// the entry's memref descriptors and argument pointers, the views of an
  /// ABI call's buffers (AbiCall; calls do not nest) and the collective a
  /// call builds (an asynchronous one swaps it into the queue's storage).
  std::vector<std::vector<int64_t>> stepDescriptors;
  std::vector<void *> stepArguments;
  std::vector<dtensor::rt::StridedView> callViews;
  dtensor::rt::CollectiveOp collective;
  /// dtensor_program_set_random_state: the seed of the random ops and the
  /// number of steps run since it was set (dtensor_rt_step_seed).
  uint64_t randomSeed = 0;
  uint64_t randomStep = 0;
  /// What runs the steps: the CPU backend, or the CUDA plugin's for a
  /// program of target "cuda".
  std::unique_ptr<dtensor::rt::Backend> backend;
  /// The communication thread of the asynchronous collectives of a CPU
  /// program, started by the first one; null before, and for a GPU program
  /// (its stream orders them) or under MPI below MPI_THREAD_SERIALIZED (they
  /// then complete in their call).
  std::unique_ptr<dtensor::rt::CollectiveQueue> collectiveQueue;

  /// dtensor_program_set_tracing: the steps and collectives recorded since
  /// `traceStart`, and the number of the next step.
  bool tracing = false;
  std::chrono::steady_clock::time_point traceStart;
  int64_t traceSteps = 0;
  std::vector<dtensor_trace_event> trace;
  /// The site dtensor_rt_collective_site announced for the next collective
  /// call, or -1.
  int64_t nextSite = -1;
  /// Microseconds since `traceStart`, now or at `time`.
  double traceNow() const {
    return traceTime(std::chrono::steady_clock::now());
  }
  double traceTime(std::chrono::steady_clock::time_point time) const {
    return std::chrono::duration<double, std::micro>(time - traceStart).count();
  }

  ~dtensor_program();
};

namespace dtensor::rt {

/// The program running on this thread (set around the entry call).
dtensor_program *currentProgram();

/// Completes the program's asynchronous collectives still in flight (none:
/// nothing to do): their trace events get the interval they ran in, and the
/// first error of one the program did not wait for is returned.
Status drainCollectives(dtensor_program &program);

/// COLLECTIVE: the operations of dtensor/runtime.h on programs, without the
/// final agreement (the C API adds it).
Status loadProgram(dtensor_context *context, const char *artifact,
                   const dtensor_load_options *options,
                   dtensor_program *&program);
Status setTensor(dtensor_program &program, const char *name, dtensor_view view,
                 dtensor_dtype dtype, int32_t ndim, const int64_t *shape,
                 const void *data, size_t bytes);
Status fillTensors(dtensor_program &program, const char *name,
                   dtensor_factory factory, double value, uint64_t seed);
Status initWeights(dtensor_program &program, uint64_t seed,
                   int32_t *uninitialized);
Status loadWeights(dtensor_program &program, const char *path);
/// COLLECTIVE. Writes the global weights and parameters to the safetensors
/// file `path` from rank 0.
Status saveWeights(dtensor_program &program, const char *path);
Status runProgram(dtensor_program &program);
/// One step without the trace's step event (runProgram adds it).
Status runStep(dtensor_program &program);
Status getTensor(dtensor_program &program, const char *name, dtensor_view view,
                 int32_t root, void *data, size_t bytes);
/// Brings the host copy of `tensor` up to date with the last step.
Status syncHost(dtensor_program &program, Tensor &tensor);
/// The index of tensor `name`, or an error naming the artifact.
Status findTensor(const dtensor_program &program, const char *name,
                  int32_t &index);
/// Makes entry `name` the one run, set and get refer to.
Status selectEntry(dtensor_program &program, const char *name);
/// Zeroes state tensor `name` (every state tensor when null), whole or
/// (slot >= 0) index `slot` of its dim 0; checks everything before it
/// changes anything.
Status resetState(dtensor_program &program, const char *name, int64_t slot);

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_PROGRAM_H

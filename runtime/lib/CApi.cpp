//===- CApi.cpp - The C API of dtensor/runtime.h --------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each function checks its arguments, runs the step with exceptions turned
// into statuses, ends COLLECTIVE steps with an agreement between the ranks,
// and records the message for dtensor_last_error().
//
//===----------------------------------------------------------------------===//

#include "Blas.h"
#include "Context.h"
#include "Export.h"
#include "Program.h"

#include "dtensor/Formats/DType.h"
#include "dtensor/rt_abi.h"
#include "dtensor/runtime.h"

#include <algorithm>
#include <functional>
#include <new>
#include <string>

using namespace dtensor::rt;

namespace {

/// Runs `step`, catching what it may throw.
Status guarded(const std::function<Status()> &step) {
  try {
    return step();
  } catch (const std::bad_alloc &) {
    return runtimeError("out of memory");
  } catch (const std::exception &error) {
    return runtimeError(error.what());
  } catch (...) {
    return runtimeError("unexpected exception");
  }
}

/// A COLLECTIVE step on `program`: the local outcome, then the agreement.
dtensor_status collective(const char *function, dtensor_program *program,
                          const std::function<Status()> &step) {
  if (!program)
    return report(invalidArgument(std::string(function) + ": program is NULL"));
  Status local = guarded(step);
  return report(guarded([&] { return program->context->world->agree(local); }));
}

} // namespace

extern "C" {

DTENSOR_EXPORT const char *dtensor_version(void) {
  return DTENSOR_RUNTIME_VERSION_STRING;
}

DTENSOR_EXPORT int32_t dtensor_abi_version(void) {
  return DTENSOR_RUNTIME_ABI_VERSION;
}

DTENSOR_EXPORT const char *dtensor_cpu_kernels(void) {
  static const std::string description = dtensor::rt::blas::describeKernels();
  return description.c_str();
}

DTENSOR_EXPORT const char *dtensor_last_error(void) {
  return lastErrorMessage();
}

DTENSOR_EXPORT size_t dtensor_dtype_size(int32_t dtype) {
  std::optional<DType> known = dtypeFromInt(dtype);
  return known ? dtypeSize(*known) : 0;
}

DTENSOR_EXPORT dtensor_status dtensor_context_create(
    const dtensor_context_options *options, dtensor_context **context) {
  if (!context)
    return report(invalidArgument("dtensor_context_create: context is NULL"));
  *context = nullptr;
  return report(guarded([&] { return createContext(options, *context); }));
}

DTENSOR_EXPORT dtensor_status
dtensor_context_destroy(dtensor_context *context) {
  return report(guarded([&] { return destroyContext(context); }));
}

DTENSOR_EXPORT dtensor_status
dtensor_context_rank(const dtensor_context *context, int32_t *rank) {
  if (!context || !rank)
    return report(invalidArgument("dtensor_context_rank: NULL argument"));
  *rank = context->world->rank();
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_context_world_size(const dtensor_context *context, int32_t *worldSize) {
  if (!context || !worldSize)
    return report(invalidArgument("dtensor_context_world_size: NULL argument"));
  *worldSize = context->world->size();
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status dtensor_program_load(
    dtensor_context *context, const char *artifact,
    const dtensor_load_options *options, dtensor_program **program) {
  if (!context || !program)
    return report(invalidArgument(std::string("dtensor_program_load: ") +
                                  (context ? "program" : "context") +
                                  " is NULL"));
  *program = nullptr;
  // loadProgram agrees with the other ranks itself, before creating groups.
  return report(guarded(
      [&] { return loadProgram(context, artifact, options, *program); }));
}

DTENSOR_EXPORT dtensor_status
dtensor_program_destroy(dtensor_program *program) {
  if (!program)
    return DTENSOR_OK;
  return report(guarded([&] {
    dtensor_context *context = program->context;
    auto &programs = context->programs;
    programs.erase(std::remove(programs.begin(), programs.end(), program),
                   programs.end());
    delete program;
    return context->world->barrier();
  }));
}

DTENSOR_EXPORT dtensor_status
dtensor_program_num_tensors(const dtensor_program *program, int32_t *count) {
  if (!program || !count)
    return report(
        invalidArgument("dtensor_program_num_tensors: NULL argument"));
  *count = static_cast<int32_t>(program->tensors.size());
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_program_set_tracing(dtensor_program *program, int32_t enabled) {
  if (!program)
    return report(
        invalidArgument("dtensor_program_set_tracing: NULL argument"));
  program->tracing = enabled != 0;
  program->trace.clear();
  program->traceSteps = 0;
  program->traceStart = std::chrono::steady_clock::now();
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_program_trace(const dtensor_program *program,
                      const dtensor_trace_event **events, int32_t *count) {
  if (!program || !events || !count)
    return report(invalidArgument("dtensor_program_trace: NULL argument"));
  *events = program->trace.data();
  *count = static_cast<int32_t>(program->trace.size());
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_program_num_sites(const dtensor_program *program, int32_t *count) {
  if (!program || !count)
    return report(invalidArgument("dtensor_program_num_sites: NULL argument"));
  *count = static_cast<int32_t>(program->manifest.collectiveSites.size());
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_program_site_info(const dtensor_program *program, int32_t site,
                          dtensor_site_info *info) {
  if (!program || !info)
    return report(invalidArgument("dtensor_program_site_info: NULL argument"));
  const auto &sites = program->manifest.collectiveSites;
  if (site < 0 || site >= static_cast<int32_t>(sites.size()))
    return report(invalidArgument(
        "dtensor_program_site_info: site " + std::to_string(site) +
        " out of range [0, " + std::to_string(sites.size()) + ")"));
  const CollectiveSiteInfo &entry = sites[site];
  info->kind = entry.kind.c_str();
  info->reduction = entry.reduction.c_str();
  info->module = entry.module.c_str();
  info->position = entry.position.c_str();
  info->bytes_sent = entry.bytesSent;
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status dtensor_program_tensor_info(
    const dtensor_program *program, int32_t index, dtensor_tensor_info *info) {
  if (!program || !info)
    return report(
        invalidArgument("dtensor_program_tensor_info: NULL argument"));
  if (index < 0 || index >= static_cast<int32_t>(program->tensors.size()))
    return report(invalidArgument(
        "dtensor_program_tensor_info: index " + std::to_string(index) +
        " out of range [0, " + std::to_string(program->tensors.size()) + ")"));
  const Tensor &tensor = program->tensors[index];
  info->name = tensor.info.name.c_str();
  info->role = static_cast<dtensor_role>(tensor.info.role);
  info->dtype = static_cast<dtensor_dtype>(tensor.info.dtype);
  info->ndim = static_cast<int32_t>(tensor.info.shape.size());
  info->global_shape = tensor.info.shape.data();
  info->local_shape = tensor.localShape.data();
  info->local_offset = tensor.localOffset.data();
  info->placements = tensor.placementText.c_str();
  info->entry = tensor.info.entry.c_str();
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_program_num_entries(const dtensor_program *program, int32_t *count) {
  if (!program || !count)
    return report(
        invalidArgument("dtensor_program_num_entries: NULL argument"));
  *count = static_cast<int32_t>(program->entries.size());
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status dtensor_program_entry_name(
    const dtensor_program *program, int32_t index, const char **name) {
  if (!program || !name)
    return report(invalidArgument("dtensor_program_entry_name: NULL argument"));
  if (index < 0 || index >= static_cast<int32_t>(program->entries.size()))
    return report(invalidArgument(
        "dtensor_program_entry_name: index " + std::to_string(index) +
        " out of range [0, " + std::to_string(program->entries.size()) + ")"));
  *name = program->entries[index].name.c_str();
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_program_select_entry(dtensor_program *program, const char *name) {
  if (!program)
    return report(
        invalidArgument("dtensor_program_select_entry: NULL argument"));
  return report(selectEntry(*program, name));
}

DTENSOR_EXPORT dtensor_status dtensor_program_selected_entry(
    const dtensor_program *program, const char **name) {
  if (!program || !name)
    return report(
        invalidArgument("dtensor_program_selected_entry: NULL argument"));
  *name = program->entries[program->activeEntry].name.c_str();
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status dtensor_program_reset_state(
    dtensor_program *program, const char *name, int64_t slot) {
  if (!program)
    return report(
        invalidArgument("dtensor_program_reset_state: NULL argument"));
  return report(resetState(*program, name, slot));
}

DTENSOR_EXPORT dtensor_status dtensor_program_find_tensor(
    const dtensor_program *program, const char *name, int32_t *index) {
  if (!program || !index)
    return report(
        invalidArgument("dtensor_program_find_tensor: NULL argument"));
  return report(findTensor(*program, name, *index));
}

DTENSOR_EXPORT dtensor_status
dtensor_program_set(dtensor_program *program, const char *name,
                    dtensor_view view, dtensor_dtype dtype, int32_t ndim,
                    const int64_t *shape, const void *data, size_t bytes) {
  return collective("dtensor_program_set", program, [&] {
    return setTensor(*program, name, view, dtype, ndim, shape, data, bytes);
  });
}

DTENSOR_EXPORT dtensor_status dtensor_program_fill(dtensor_program *program,
                                                   const char *name,
                                                   dtensor_factory factory,
                                                   double value,
                                                   uint64_t seed) {
  return collective("dtensor_program_fill", program, [&] {
    return fillTensors(*program, name, factory, value, seed);
  });
}

DTENSOR_EXPORT dtensor_status dtensor_program_init_weights(
    dtensor_program *program, uint64_t seed, int32_t *uninitialized) {
  return collective("dtensor_program_init_weights", program,
                    [&] { return initWeights(*program, seed, uninitialized); });
}

DTENSOR_EXPORT dtensor_status dtensor_program_has_init(
    const dtensor_program *program, int32_t index, int32_t *hasInit) {
  if (!program || !hasInit)
    return report(invalidArgument("dtensor_program_has_init: NULL argument"));
  if (index < 0 || index >= static_cast<int32_t>(program->tensors.size()))
    return report(invalidArgument(
        "dtensor_program_has_init: index " + std::to_string(index) +
        " out of range [0, " + std::to_string(program->tensors.size()) + ")"));
  *hasInit = program->tensors[index].info.init.has_value();
  return DTENSOR_OK;
}

DTENSOR_EXPORT dtensor_status
dtensor_program_load_weights(dtensor_program *program, const char *path) {
  return collective("dtensor_program_load_weights", program,
                    [&] { return loadWeights(*program, path); });
}

DTENSOR_EXPORT dtensor_status
dtensor_program_save_weights(dtensor_program *program, const char *path) {
  return collective("dtensor_program_save_weights", program,
                    [&] { return saveWeights(*program, path); });
}

DTENSOR_EXPORT dtensor_status dtensor_program_run(dtensor_program *program) {
  return collective("dtensor_program_run", program,
                    [&] { return runProgram(*program); });
}

DTENSOR_EXPORT dtensor_status dtensor_program_get(dtensor_program *program,
                                                  const char *name,
                                                  dtensor_view view,
                                                  int32_t root, void *data,
                                                  size_t bytes) {
  return collective("dtensor_program_get", program, [&] {
    return getTensor(*program, name, view, root, data, bytes);
  });
}

} // extern "C"

// The public header, the generated-code ABI and the formats library each
// spell the element types; their values must agree.
static_assert(static_cast<int>(DTENSOR_F32) == DTENSOR_RT_F32 &&
                  static_cast<int>(DTENSOR_F64) == DTENSOR_RT_F64 &&
                  static_cast<int>(DTENSOR_F16) == DTENSOR_RT_F16 &&
                  static_cast<int>(DTENSOR_BF16) == DTENSOR_RT_BF16 &&
                  static_cast<int>(DTENSOR_I32) == DTENSOR_RT_I32 &&
                  static_cast<int>(DTENSOR_I64) == DTENSOR_RT_I64 &&
                  static_cast<int>(DTENSOR_I8) == DTENSOR_RT_I8 &&
                  static_cast<int>(DTENSOR_BOOL) == DTENSOR_RT_BOOL,
              "runtime.h and rt_abi.h disagree on dtype values");
static_assert(static_cast<int>(dtensor::rt::DType::F32) == DTENSOR_RT_F32 &&
                  static_cast<int>(dtensor::rt::DType::F64) == DTENSOR_RT_F64 &&
                  static_cast<int>(dtensor::rt::DType::F16) == DTENSOR_RT_F16 &&
                  static_cast<int>(dtensor::rt::DType::BF16) ==
                      DTENSOR_RT_BF16 &&
                  static_cast<int>(dtensor::rt::DType::I32) == DTENSOR_RT_I32 &&
                  static_cast<int>(dtensor::rt::DType::I64) == DTENSOR_RT_I64 &&
                  static_cast<int>(dtensor::rt::DType::I8) == DTENSOR_RT_I8 &&
                  static_cast<int>(dtensor::rt::DType::Bool) == DTENSOR_RT_BOOL,
              "formats/DType.h and rt_abi.h disagree on dtype values");
static_assert(
    static_cast<int>(dtensor::rt::TensorRole::Input) == DTENSOR_INPUT &&
        static_cast<int>(dtensor::rt::TensorRole::Weight) == DTENSOR_WEIGHT &&
        static_cast<int>(dtensor::rt::TensorRole::Output) == DTENSOR_OUTPUT &&
        static_cast<int>(dtensor::rt::TensorRole::State) == DTENSOR_STATE &&
        static_cast<int>(dtensor::rt::TensorRole::Parameter) ==
            DTENSOR_PARAMETER,
    "dtensor_role follows TensorRole");

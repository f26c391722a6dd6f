/*===- runtime.h - dtensor runtime C API ---------------------------*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 * Loads a compiled dtensor artifact in each rank's process and runs it.
 *
 * Every function returns a dtensor_status; on failure the message is
 * available from dtensor_last_error() on the same thread. Nothing here
 * aborts or exits the host process.
 *
 * Calls marked COLLECTIVE must be made by every rank of the context, in the
 * same order. They end with an agreement between the ranks: when the call
 * fails on one rank, it fails on every rank (DTENSOR_ERR_PEER on those that
 * were fine), so no rank is left waiting in a later collective.
 *===----------------------------------------------------------------------===*/

#ifndef DTENSOR_RUNTIME_H
#define DTENSOR_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DTENSOR_RUNTIME_ABI_VERSION 2

typedef enum dtensor_status {
  DTENSOR_OK = 0,
  DTENSOR_ERR_INVALID_ARGUMENT = 1, /* bad parameter: name, shape, dtype... */
  DTENSOR_ERR_IO = 2,               /* a file is missing or unreadable */
  DTENSOR_ERR_ARTIFACT = 3,         /* bad manifest or hash; built for
                                       another world size or mesh */
  DTENSOR_ERR_WEIGHTS = 4,          /* bad safetensors file, missing weight */
  DTENSOR_ERR_COMM = 5,             /* the communicator failed */
  DTENSOR_ERR_PEER = 6,             /* another rank failed this call */
  DTENSOR_ERR_RUNTIME = 7           /* a step failed */
} dtensor_status;

/* Element types (the values of enum dtensor_rt_dtype in rt_abi.h). */
typedef enum dtensor_dtype {
  DTENSOR_F32 = 0,
  DTENSOR_F64 = 1,
  DTENSOR_F16 = 2,
  DTENSOR_BF16 = 3,
  DTENSOR_I32 = 4,
  DTENSOR_I64 = 5,
  DTENSOR_I8 = 6,
  DTENSOR_BOOL = 7,
  DTENSOR_DTYPE_MAX_ENUM = 0x7fffffff /* not a dtype; as for dtensor_factory */
} dtensor_dtype;

typedef struct dtensor_context dtensor_context;
typedef struct dtensor_program dtensor_program;

/* The runtime's version ("0.1.0") and DTENSOR_RUNTIME_ABI_VERSION. */
const char *dtensor_version(void);
int32_t dtensor_abi_version(void);

/* One line on the CPU matrix kernels this process uses, e.g. "OpenBLAS core
   SkylakeX (family SkylakeX from cpuid; private copy)". Loads OpenBLAS when
   it is not loaded yet. The kernel family is the best the CPU supports, or
   DTENSOR_BLAS_CORETYPE when set; OPENBLAS_CORETYPE in the environment is
   left to other users of OpenBLAS (docs/runtime.md). The string lives as
   long as the process. */
const char *dtensor_cpu_kernels(void);

/* The message of the last failed call on this thread ("" if none). */
const char *dtensor_last_error(void);

/* Bytes per element of `dtype` (0 for an unknown value). */
size_t dtensor_dtype_size(int32_t dtype);

/*----------------------------------------------------------------------------
 * Contexts: the ranks and their communicator.
 *--------------------------------------------------------------------------*/

typedef struct dtensor_context_options {
  /* sizeof(dtensor_context_options), so that the struct can grow. */
  uint32_t struct_size;
  /* Pointer to the MPI_Comm to run on; NULL for MPI_COMM_WORLD. MPI is
   * initialised if the host has not done it (and then finalised when the
   * last context is destroyed). The communicator is duplicated. */
  void *mpi_comm;
  /* BLAS threads of this rank; 0 = the cores this process may use divided
   * by the ranks on this node (at least 1). */
  int32_t threads;
} dtensor_context_options;

/* COLLECTIVE. `options` may be NULL for the defaults. */
dtensor_status dtensor_context_create(const dtensor_context_options *options,
                                      dtensor_context **context);
/* COLLECTIVE. Destroys the programs still loaded on it. NULL is accepted. */
dtensor_status dtensor_context_destroy(dtensor_context *context);
dtensor_status dtensor_context_rank(const dtensor_context *context,
                                    int32_t *rank);
dtensor_status dtensor_context_world_size(const dtensor_context *context,
                                          int32_t *world_size);

/*----------------------------------------------------------------------------
 * Programs: a loaded artifact with its tensors.
 *--------------------------------------------------------------------------*/

typedef struct dtensor_load_options {
  /* sizeof(dtensor_load_options). */
  uint32_t struct_size;
  /* Non-zero: load the artifact's single-device reference program instead
   * (the global program, unpartitioned); the context must have one rank. */
  int32_t reference;
  /* Programs of target "cuda" only (ignored otherwise); NULL for the
   * defaults. The program's stream, a cudaStream_t of this rank's device:
   * steps queue their work on it and end by synchronising it; NULL: the
   * runtime creates one. */
  void *cuda_stream;
  /* An ncclComm_t over all the context's ranks, with NCCL rank = context
   * rank, on this rank's device: the program's groups that span the whole
   * context use it; the others are created at load, bootstrapped over MPI.
   * NULL: every group gets its own. The host keeps ownership of both. */
  void *nccl_comm;
} dtensor_load_options;

/* COLLECTIVE. Reads `artifact` (the artifact directory), checks the manifest
 * (format, content hash, world size and mesh against the context), loads
 * the code and creates the communicators of the program's groups. Inputs
 * and weights start as zeros. `options` may be NULL. */
dtensor_status dtensor_program_load(dtensor_context *context,
                                    const char *artifact,
                                    const dtensor_load_options *options,
                                    dtensor_program **program);
/* COLLECTIVE. NULL is accepted. */
dtensor_status dtensor_program_destroy(dtensor_program *program);

typedef enum dtensor_role {
  DTENSOR_INPUT = 0,
  DTENSOR_WEIGHT = 1,
  DTENSOR_OUTPUT = 2,
  /* Lives across steps: zeros after loading, updated in place by the entries
   * that take it, shared by all of them (e.g. a KV cache). */
  DTENSOR_STATE = 3,
  /* A weight that an entry trains (a training step's parameter): loaded and
   * initialized as a weight, updated in place by that entry, shared by all
   * entries, which read its current value. */
  DTENSOR_PARAMETER = 4
} dtensor_role;

typedef struct dtensor_tensor_info {
  const char *name;
  dtensor_role role;
  dtensor_dtype dtype;
  int32_t ndim;
  const int64_t *global_shape; /* ndim entries */
  const int64_t *local_shape;  /* this rank's shard */
  const int64_t *local_offset; /* its first element in the global tensor;
                                  along a head-tail dim ("S(d,head_tail)":
                                  two pieces, one after the other) the
                                  first piece's */
  const char *placements;      /* e.g. "[S(0), R]", one per mesh dim */
  const char *entry; /* the entry an input or output belongs to; "" for
                        weights and state, and in a program of one entry */
} dtensor_tensor_info;

/* The program's tensors: inputs and weights in argument order, then the
 * outputs (a program of several entries lists every entry's inputs and
 * outputs, and the weights and state they share). Pointers in `info` live
 * as long as the program. find_tensor, set, get and fill look names up
 * among the selected entry's inputs and outputs and the shared tensors. */
dtensor_status dtensor_program_num_tensors(const dtensor_program *program,
                                           int32_t *count);
dtensor_status dtensor_program_tensor_info(const dtensor_program *program,
                                           int32_t index,
                                           dtensor_tensor_info *info);
dtensor_status dtensor_program_find_tensor(const dtensor_program *program,
                                           const char *name, int32_t *index);

typedef enum dtensor_view {
  DTENSOR_GLOBAL = 0, /* the whole tensor, single-device semantics */
  DTENSOR_LOCAL = 1,  /* this rank's shard (its local_shape) */
  DTENSOR_VIEW_MAX_ENUM = 0x7fffffff /* not a view; as for dtensor_factory */
} dtensor_view;

/* COLLECTIVE. Sets input or weight `name` from host memory, which holds
 * `bytes` bytes of `dtype` in row-major order with shape `shape[ndim]`:
 * with DTENSOR_GLOBAL the global tensor (this rank keeps its shard; a
 * Partial dim is held by the group's first member, zeros elsewhere), with
 * DTENSOR_LOCAL this rank's shard. Type and shape must match exactly. */
dtensor_status dtensor_program_set(dtensor_program *program, const char *name,
                                   dtensor_view view, dtensor_dtype dtype,
                                   int32_t ndim, const int64_t *shape,
                                   const void *data, size_t bytes);

typedef enum dtensor_factory {
  DTENSOR_ZEROS = 0,
  DTENSOR_ONES = 1,
  DTENSOR_FULL = 2,  /* every element `value` */
  DTENSOR_RAND = 3,  /* uniform [0, 1) */
  DTENSOR_RANDN = 4, /* standard normal */
  /* Not a factory: makes every int a value of the type, so that a caller's
   * unknown number is refused with a status, not undefined behaviour. */
  DTENSOR_FACTORY_MAX_ENUM = 0x7fffffff
} dtensor_factory;

/* COLLECTIVE. Fills input or weight `name` (every one when `name` is NULL,
 * with seeds derived from `seed` and each tensor's position). Random values
 * depend only on the seed and the global element index, so every world size
 * gives the same global tensor. */
dtensor_status dtensor_program_fill(dtensor_program *program, const char *name,
                                    dtensor_factory factory, double value,
                                    uint64_t seed);

/* COLLECTIVE. Sets every weight that has an initializer in the artifact
 * (the manifest's "init": zeros, ones, constant, normal, uniform) to its
 * values; each rank fills only its shard. Values depend only on `seed`, the
 * weight's name and the global element index, so every world size and
 * sharding gives the same global weights. Weights without an initializer
 * keep their values; when `uninitialized` is not NULL it receives how many
 * there are (dtensor_program_has_init tells which). */
dtensor_status dtensor_program_init_weights(dtensor_program *program,
                                            uint64_t seed,
                                            int32_t *uninitialized);

/* `*has_init` gets 1 when tensor `index` is a weight with an initializer,
 * else 0. */
dtensor_status dtensor_program_has_init(const dtensor_program *program,
                                        int32_t index, int32_t *has_init);

/* COLLECTIVE. Loads every weight of the program from a safetensors file of
 * global tensors; each rank reads only its shard. A weight of another dtype
 * or shape is an error, and so is one missing from the file unless it has
 * an initializer: it then keeps its value (call
 * dtensor_program_init_weights first to give it the initializer's). These
 * errors, a truncated file and ranks that opened different versions of the
 * file fail before any weight is written. A file that changes while it is
 * read fails the load after some weights were written: runs then fail until
 * a load succeeds (docs/runtime.md). */
dtensor_status dtensor_program_load_weights(dtensor_program *program,
                                            const char *path);

/* COLLECTIVE. Writes the current global value of every weight and trained
 * parameter (role DTENSOR_WEIGHT or DTENSOR_PARAMETER) to the safetensors
 * file `path`, from rank 0, in the order of the program's tensors; a file
 * that dtensor_program_load_weights reads back, on any mesh. The file is
 * written under a temporary name and renamed into place: an error leaves
 * no partial file. Not the optimizer's state (docs/training.md). */
dtensor_status dtensor_program_save_weights(dtensor_program *program,
                                            const char *path);

/* COLLECTIVE. Runs one step of the selected entry: outputs from the current
 * inputs, weights and state; the state it updates is updated in place.
 * Before the step the runtime checks the rows the entry writes into state at
 * indices its inputs give (the manifest's "row_writes"): a negative slot is a
 * padding row, written nowhere; a slot >= the cache's slots, or a position
 * range outside its positions, is DTENSOR_ERR_INVALID_ARGUMENT on every rank
 * (DTENSOR_ERR_PEER on the ranks whose own inputs were fine) and the step is
 * not run: no state changes. */
dtensor_status dtensor_program_run(dtensor_program *program);

/* The random ops of a program (rand, randn, dropout, ...) draw from a seed
 * per step, derived from the program's random seed and its step counter:
 * the number of steps (of any entry) run since loading or since the last
 * call of set_random_state. A program starts with seed 0 and counter 0.
 * Values depend only on the seed, the counter and each element's global
 * index, so every world size and sharding gives the same global values.
 * Not collective, but every rank must set the same state. */
dtensor_status dtensor_program_set_random_state(dtensor_program *program,
                                                uint64_t seed, uint64_t step);
dtensor_status dtensor_program_random_state(const dtensor_program *program,
                                            uint64_t *seed, uint64_t *step);

/* The program's entry points (e.g. "prefill" and "decode"), sharing its
 * weights and state. The manifest's default entry is selected after
 * loading. */
dtensor_status dtensor_program_num_entries(const dtensor_program *program,
                                           int32_t *count);
dtensor_status dtensor_program_entry_name(const dtensor_program *program,
                                          int32_t index, const char **name);
/* Selects the entry that run, set, get, fill and find_tensor refer to. An
 * unknown name is an error that changes nothing. Not collective, but every
 * rank must select the same entry before a run. */
dtensor_status dtensor_program_select_entry(dtensor_program *program,
                                            const char *name);
/* The selected entry's name. */
dtensor_status dtensor_program_selected_entry(const dtensor_program *program,
                                              const char **name);

/* Zeroes state tensor `name` (every state tensor when NULL): the whole
 * tensor when `slot` is -1, else index `slot` of its dim 0 (a cache slot).
 * A name that is not a state tensor, or a slot outside some state tensor's
 * dim 0, is an error that changes nothing. Not collective: each rank clears
 * the part it holds. */
dtensor_status dtensor_program_reset_state(dtensor_program *program,
                                           const char *name, int64_t slot);

/* COLLECTIVE. Copies tensor `name` into `data` (`bytes` must be its exact
 * size): DTENSOR_LOCAL copies this rank's shard; DTENSOR_GLOBAL assembles
 * the global tensor (Partial dims reduced) on rank `root`, or on every rank
 * when `root` is -1 (ranks that receive nothing pass NULL and 0). */
dtensor_status dtensor_program_get(dtensor_program *program, const char *name,
                                   dtensor_view view, int32_t root, void *data,
                                   size_t bytes);

/* One event of a trace (dtensor_program_trace): a step, a collective the
 * step ran, or the program's wait for an asynchronous one. Times are
 * microseconds of this process's steady clock since tracing was switched
 * on. On the CPU a synchronous collective's interval is the call, an
 * asynchronous one's (`async` 1) is when it ran on the communication thread,
 * while the program computed, and its "wait" event is the time the program
 * blocked in dtensor_rt_wait for it (group and site are the collective's);
 * for a program of target "cuda" a collective's interval is the time to
 * queue it. */
typedef struct dtensor_trace_event {
  const char *name;  /* "step", "all_reduce", "all_gather", "reduce_scatter",
                        "all_to_all", "broadcast", "shift" or "wait" */
  int64_t step;      /* the step, counted from 0 since tracing began */
  int64_t group;     /* a collective's group (the program's numbering), or -1 */
  int64_t bytes;     /* a collective's input bytes on this rank, or 0 */
  double start_us;
  double end_us;
  int64_t site;      /* a collective's site (dtensor_program_site_info), or
                        -1: a step, or a program compiled without sites */
  int64_t bytes_sent; /* the bytes this rank sent in the collective under
                         the model of the compile-time report (a ring over
                         the group, the largest piece per message), or 0 */
  int32_t async;      /* 1: a collective that ran on the communication thread
                         (asynchronous), else 0 */
} dtensor_trace_event;

/* One collective call site of a program, as the compiler numbered them
 * (the manifest's "collective_sites"): what its compile-time communication
 * report knows of it. Strings live as long as the program. */
typedef struct dtensor_site_info {
  const char *kind;      /* "all_reduce", "all_gather", ... */
  const char *reduction; /* "sum", "avg", "max", "min", or "" */
  const char *module;    /* the model's module (e.g. "layers.0.attention"),
                            or "" */
  const char *position;  /* "file:line:col" of the source, or "" */
  int64_t bytes_sent;    /* bytes this rank sends in one call (the report's
                            model), or -1 when not known at compile time */
} dtensor_site_info;

/* The program's collective sites; 0 for an artifact compiled without them. */
dtensor_status dtensor_program_num_sites(const dtensor_program *program,
                                         int32_t *count);
dtensor_status dtensor_program_site_info(const dtensor_program *program,
                                         int32_t site, dtensor_site_info *info);

/* Switches the recording of steps and their collectives on (forgetting
 * what was recorded) or off. Not collective; costs two clock reads per
 * event while on. */
dtensor_status dtensor_program_set_tracing(dtensor_program *program,
                                           int32_t enabled);

/* The events recorded since tracing was switched on, in order; `*events`
 * stays valid until the next dtensor_program_run or
 * dtensor_program_set_tracing. */
dtensor_status dtensor_program_trace(const dtensor_program *program,
                                     const dtensor_trace_event **events,
                                     int32_t *count);

#ifdef __cplusplus
}
#endif

#endif /* DTENSOR_RUNTIME_H */

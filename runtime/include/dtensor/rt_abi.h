/*===- rt_abi.h - Calls from compiled programs into the runtime ---*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 * The functions a compiled per-rank program calls, and the entry point it
 * exports. Only the code generator and the runtime use this header; hosts use
 * dtensor/runtime.h.
 *
 * Buffers are MLIR memrefs. A ranked memref descriptor of rank r is laid out
 * as
 *
 *   struct { T *allocated; T *aligned; int64_t offset;
 *            int64_t sizes[r]; int64_t strides[r]; };
 *
 * (element (i0, ..., ir-1) is aligned[offset + sum_k ik * strides[k]]).
 * Where a call takes a buffer it takes it as an unranked memref, which the
 * MLIR LLVM lowering passes as two arguments: the rank and a pointer to the
 * ranked descriptor.
 *
 * Every call acts on the program the runtime is running on the calling
 * thread (the runtime sets it around the entry call). A call that fails
 * records the error on that program and returns; later calls of the same
 * step do nothing, and the step reports the first error.
 *===----------------------------------------------------------------------===*/

#ifndef DTENSOR_RT_ABI_H
#define DTENSOR_RT_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types, as passed in `dtype` arguments. */
enum dtensor_rt_dtype {
  DTENSOR_RT_F32 = 0,
  DTENSOR_RT_F64 = 1,
  DTENSOR_RT_F16 = 2,
  DTENSOR_RT_BF16 = 3,
  DTENSOR_RT_I32 = 4,
  DTENSOR_RT_I64 = 5,
  DTENSOR_RT_I8 = 6,
  DTENSOR_RT_BOOL = 7 /* i1, one byte per element */
};

/* Reductions, as passed in `reduction` arguments (avg divides the sum by the
 * group size). */
enum dtensor_rt_reduction {
  DTENSOR_RT_SUM = 0,
  DTENSOR_RT_AVG = 1,
  DTENSOR_RT_MAX = 2,
  DTENSOR_RT_MIN = 3
};

/* Group ids index the manifest's "groups" (a mesh and a list of its dims);
 * mesh ids index its "meshes". Within a group, ranks are ordered row-major
 * over the listed mesh dims, the first listed most significant. */

/* This rank's coordinate along dim `mesh_dim` of mesh `mesh`. */
int64_t dtensor_rt_mesh_coord(int64_t mesh, int64_t mesh_dim);

/* The sum of `value` over the group: the size of a gathered dim whose local
 * pieces differ in size across the group. */
int64_t dtensor_rt_group_sum(int64_t group, int64_t value);

/* Queues one buffer for the next collective or matmul call. */
void dtensor_rt_push_buffer(int64_t rank, void *descriptor);

/* Collectives take the queued buffers: `count` inputs, then `count` outputs
 * (an output may be the same buffer as its input), and clear the queue.
 * Sizes follow the dtensor dialect's ops of the same names: a dim is split
 * over the group like dtensor.chunk (torch.chunk, nested over the group's
 * mesh dims, first listed outermost), and gathered pieces are the chunks of
 * the output's dim. All ranks of a group make the same calls in the same
 * order.
 *
 * With `async` = 0 the call completes before it returns and returns 0. With
 * `async` != 0 it may return before completion, with a handle that must be
 * passed to dtensor_rt_wait before the outputs are read or the inputs
 * written; the handle may be 0 when it has already completed. */
int64_t dtensor_rt_all_reduce(int64_t group, int32_t reduction, int32_t dtype,
                              int64_t count, int32_t async);
int64_t dtensor_rt_all_gather(int64_t group, int64_t gather_dim, int32_t dtype,
                              int64_t count, int32_t async);
int64_t dtensor_rt_reduce_scatter(int64_t group, int32_t reduction,
                                  int64_t scatter_dim, int32_t dtype,
                                  int64_t count, int32_t async);
/* One input and one output. */
int64_t dtensor_rt_all_to_all(int64_t group, int64_t split_dim,
                              int64_t concat_dim, int32_t dtype,
                              int32_t async);
/* One input and one output; `root` is a group index. */
int64_t dtensor_rt_broadcast(int64_t group, int64_t root, int32_t dtype,
                             int32_t async);

/* Passes pieces around the group's ring: member g holds piece (g - step)
 * mod n of each input's dim `dim` (of `dim_size` elements in all, split as
 * dtensor.chunk splits it), sends it to member (g + 1) mod n and receives
 * piece (g - step - 1) mod n from member (g - 1) mod n into the output. */
int64_t dtensor_rt_shift(int64_t group, int64_t dim, int64_t dim_size,
                         int64_t step, int32_t dtype, int64_t count,
                         int32_t async);
/* The next collective call of this program is site `site` of the
 * manifest's "collective_sites" (the compiler numbers them): the trace
 * (dtensor_program_trace) records it with the call. */
void dtensor_rt_collective_site(int64_t site);

/* Completes an asynchronous collective: blocks until it ran; 0 is accepted
 * and does nothing. An error of the collective is the step's error from
 * here on (or at the step's end when the wait is skipped). Buffers pushed
 * before it (compiled programs push the collective's, which must stay valid
 * until its wait) are taken and ignored. */
void dtensor_rt_wait(int64_t handle);

/* Runs task(args, b, e) over pieces [b, e) of [begin, end) -- b a multiple
 * of `step` past begin -- on the runtime's worker threads (cores / ranks
 * per rank), and returns when all have run; once over the whole range on
 * the calling thread when there is one thread or the range's work
 * ((end - begin) / step iterations times `work` each) is small. The pieces
 * must be independent: the compiler passes the outer dim of a parallel
 * loop nest (--dtensor-cpu-parallel-loop-nests). */
void dtensor_rt_parallel_for(void (*task)(void *args, int64_t begin,
                                          int64_t end),
                             void *args, int64_t begin, int64_t end,
                             int64_t step, int64_t work);

/* Matrix product on the queued buffers A, B, C (rank 2, or rank 3 with a
 * leading batch dim on all three), any strides:
 *   C = A x B + beta * C   (beta is 0 or 1; 0 ignores C's old contents)
 * dtype is DTENSOR_RT_F32 or DTENSOR_RT_F64; programs of target "cuda" may
 * also pass DTENSOR_RT_F16 or DTENSOR_RT_BF16 (accumulated in f32). */
void dtensor_rt_matmul(int32_t dtype, int32_t beta);

/* As dtensor_rt_matmul, with A and B of `dtype` and C of `result_dtype`:
 * f16 or bf16 operands accumulated into an f32 C, the form model plans give
 * half-precision products. Only for programs of target "cuda" (cuBLASLt
 * computes it in f32); the CPU backend reports an error. */
void dtensor_rt_matmul_mixed(int32_t dtype, int32_t result_dtype,
                             int32_t beta);

/* Calls custom op `op` (its position in the manifest's "custom_ops") on the
 * queued buffers: `num_inputs` inputs, then the output, which the kernel
 * writes whole (dtensor/custom_op.h). Only for programs of target "cpu". */
void dtensor_rt_custom_call(int64_t op, int64_t num_inputs);

/* Options of dtensor_rt_attention, or-ed into `flags`. */
enum dtensor_rt_attention_flag {
  DTENSOR_RT_ATTENTION_CAUSAL = 1,     /* query i sees keys j <= i */
  DTENSOR_RT_ATTENTION_MASK = 2,       /* an additive mask is queued */
  DTENSOR_RT_ATTENTION_ROWS = 4,       /* a key/value row per batch row */
  DTENSOR_RT_ATTENTION_POSITIONS = 8,  /* causal from per-row positions */
  DTENSOR_RT_ATTENTION_LOG_SUM_EXP = 16, /* the log-sum-exp is written */
  DTENSOR_RT_ATTENTION_ACCUMULATE = 32  /* merged into out and lse */
};

/* Attention on the queued buffers, any strides, on programs of target "cpu":
 *   out = softmax(query x key^T * scale + mask) x value
 * over the last two dims of each [batch, head], tiled over keys with an
 * online softmax (no [L, S] buffer). The buffers, in this order:
 *   query [B, H, L, E], key [Bk, Hkv, S, E], value [Bk, Hkv, S, Ev],
 *   out [B, H, L, Ev] (written), then with the flags:
 *   MASK: mask [B or 1, H or 1, L, S] (of `dtype`);
 *   ROWS: rows [B] (i64): batch row b reads key/value row rows[b], none when
 *     outside [0, Bk) (without ROWS, Bk == B);
 *   POSITIONS: positions [B] (i64): with CAUSAL, query i of row b sees key
 *     j iff j <= positions[b] + i;
 *   LOG_SUM_EXP: lse [B, H, L] (of `dtype`, written).
 * ACCUMULATE (with LOG_SUM_EXP): out and lse already hold the attention of
 * these queries over other keys (lse -inf: none); they are overwritten with
 * the attention over those keys and these together (a ring of key blocks
 * merged through the log-sum-exp).
 * H must be a multiple of Hkv; query head h reads key/value head
 * h / (H / Hkv). A query that sees no key gets 0 (and a log-sum-exp of
 * -inf). dtype is DTENSOR_RT_F32 or DTENSOR_RT_F64. */
void dtensor_rt_attention(int32_t dtype, int32_t flags, double scale);

/* The gradients of dtensor_rt_attention, on the queued buffers, any
 * strides, on programs of target "cpu" (FlashAttention-2's backward: the
 * probabilities recomputed over blocks of keys and queries from the
 * forward's log-sum-exp, no [L, S] buffer). The buffers, in this order:
 *   query [B, H, L, E], key [B, Hkv, S, E], value [B, Hkv, S, Ev],
 *   out [B, H, L, Ev] (the forward's result), d_out [B, H, L, Ev] (the
 *   gradient of the loss with respect to out), lse [B, H, L] (the
 *   forward's log-sum-exp, from DTENSOR_RT_ATTENTION_LOG_SUM_EXP), then
 *   with the flags:
 *   MASK: mask [B or 1, H or 1, L, S] (of `dtype`; no gradient);
 *   POSITIONS: positions [B] (i64): with CAUSAL, as the forward's;
 * then d_query [B, H, L, E], d_key [B, Hkv, S, E], d_value [B, Hkv, S, Ev]
 * (written whole). flags may hold CAUSAL, MASK and POSITIONS, with the
 * forward's meaning and `scale`; ROWS, ACCUMULATE and LOG_SUM_EXP are
 * reported as errors. With grouped-query attention (H a multiple of Hkv),
 * d_key and d_value sum over the query heads that read each key/value head.
 * A query that sees no key (lse -inf) contributes nothing. dtype is
 * DTENSOR_RT_F32 or DTENSOR_RT_F64; the result does not depend on the
 * number of threads or the CPU's vector instructions. */
void dtensor_rt_attention_backward(int32_t dtype, int32_t flags,
                                   double scale);

/* Memory of a step's temporary buffers, 64-byte aligned; device memory,
 * ordered on the program's stream, for programs of target "cuda". A buffer
 * freed during a step is kept by the running program for later allocations
 * of the same size, so steps after the first reuse memory instead of
 * faulting in fresh pages; the program frees what it keeps when it is
 * destroyed.
 * Outside dtensor_program_run these are plain aligned_alloc / free. */
void *dtensor_rt_alloc(uint64_t bytes);
void dtensor_rt_free(void *buffer);

/* Launches kernel `kernel` (a NUL-terminated name) of the device code
 * image `image` (a CUDA fatbin, cubin, or NUL-terminated PTX text;
 * `image_bytes` bytes, the same pointer on every call for one image) on
 * the running program's stream. `params` holds `param_count` pointers,
 * one to each kernel argument's value, as cuLaunchKernel takes them.
 * Only for programs of target "cuda". */
void dtensor_rt_gpu_launch(const void *image, int64_t image_bytes,
                           const char *kernel, int64_t grid_x,
                           int64_t grid_y, int64_t grid_z, int64_t block_x,
                           int64_t block_y, int64_t block_z,
                           int32_t shared_bytes, void **params,
                           int64_t param_count);

/* The seed of the random ops of the step being run, the same on every rank:
 * stepSeed(seed, step) of dtensor/Formats/Random.h, where `seed` is the
 * program's random seed and `step` the number of steps it ran before this
 * one (dtensor_program_set_random_state). */
uint64_t dtensor_rt_step_seed(void);

/* The entry point a compiled program exports for its entry function F:
 *
 *   void dtensor_entry_F(void **descriptors);
 *
 * descriptors[i] points to a ranked memref descriptor: first one per
 * function argument (inputs and weights, in argument order, local shapes),
 * then one per result, which the program writes. The runtime fills in
 * identity (row-major, contiguous) strides. */

#ifdef __cplusplus
}
#endif

#endif /* DTENSOR_RT_ABI_H */

/*===- custom_op.h - The ABI of custom-op kernels -----------------*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 * The C interface between the runtime and a user's custom-op library
 * (docs/custom-ops.md). A library exports, for every custom op a model plan
 * declares, a kernel of type dtensor_custom_kernel under the plan's
 * `symbol`, and once the function dtensor_custom_op_abi_version, which
 * returns the DTENSOR_CUSTOM_OP_ABI_VERSION it was built against
 * (DTENSOR_CUSTOM_OP_LIBRARY() defines it). The compiler and the runtime
 * refuse a library of another version.
 *
 * A kernel runs on one rank's local tensors, on the CPU, on the thread that
 * runs the step; it must not keep pointers after it returns. It writes every
 * element of its output and nothing else, and returns 0, or a nonzero status
 * after writing a NUL-terminated message of at most `error_size` bytes into
 * `error`: the step then fails with the op's name, the status and the
 * message.
 *===----------------------------------------------------------------------===*/

#ifndef DTENSOR_CUSTOM_OP_H
#define DTENSOR_CUSTOM_OP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DTENSOR_CUSTOM_OP_ABI_VERSION 1

/* Element types (the codes of dtensor/rt_abi.h's dtensor_rt_dtype). */
enum dtensor_custom_dtype {
  DTENSOR_CUSTOM_F32 = 0,
  DTENSOR_CUSTOM_F16 = 2,
  DTENSOR_CUSTOM_BF16 = 3,
  DTENSOR_CUSTOM_I32 = 4,
  DTENSOR_CUSTOM_I64 = 5
};

/* One local tensor: element (i0, ..., i{rank-1}) is at
 * data + (i0 * strides[0] + ... ) * element size. Strides count elements
 * and may be any non-negative values (the output's are row-major). */
typedef struct dtensor_custom_tensor {
  void *data;
  const int64_t *shape;
  const int64_t *strides;
  int32_t rank;
  int32_t dtype; /* enum dtensor_custom_dtype */
} dtensor_custom_tensor;

/* One call of a kernel. */
typedef struct dtensor_custom_call {
  /* DTENSOR_CUSTOM_OP_ABI_VERSION of the runtime making the call. */
  uint32_t abi_version;
  int32_t num_inputs;
  const dtensor_custom_tensor *inputs;
  int32_t num_outputs; /* 1 */
  const dtensor_custom_tensor *outputs;
  /* Where a failing kernel writes its message. */
  char *error;
  size_t error_size;
} dtensor_custom_call;

typedef int32_t (*dtensor_custom_kernel)(const dtensor_custom_call *call);

/* The version function every custom-op library exports. */
typedef uint32_t (*dtensor_custom_op_abi_version_fn)(void);

/* Marks a kernel (and the version function) as exported with C linkage,
 * also from C++ and from libraries built with -fvisibility=hidden. */
#ifdef __cplusplus
#define DTENSOR_CUSTOM_OP_EXPORT                                             \
  extern "C" __attribute__((visibility("default")))
#else
#define DTENSOR_CUSTOM_OP_EXPORT __attribute__((visibility("default")))
#endif

/* Defines dtensor_custom_op_abi_version; use once per library. */
#define DTENSOR_CUSTOM_OP_LIBRARY()                                          \
  DTENSOR_CUSTOM_OP_EXPORT uint32_t dtensor_custom_op_abi_version(void) {    \
    return DTENSOR_CUSTOM_OP_ABI_VERSION;                                    \
  }

#ifdef __cplusplus
}
#endif

#endif /* DTENSOR_CUSTOM_OP_H */

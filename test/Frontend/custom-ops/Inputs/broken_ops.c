/*===- broken_ops.c - Custom-op libraries that do not fit ----------*- C -*-===*
 * Built twice by test/CMakeLists.txt for the error paths of custom ops:
 * with BROKEN_OPS_VERSION 1 it is a valid custom-op library that exports
 * none of the example's kernels (a missing symbol); with another version it
 * is a library built for another ABI version.
 *===----------------------------------------------------------------------===*/

#include "dtensor/custom_op.h"

#include <stdio.h>

DTENSOR_CUSTOM_OP_EXPORT uint32_t dtensor_custom_op_abi_version(void) {
  return BROKEN_OPS_VERSION;
}

/* Fails every call, with a message. */
DTENSOR_CUSTOM_OP_EXPORT int32_t
example_failing(const dtensor_custom_call *call) {
  if (call->error_size > 0)
    snprintf(call->error, call->error_size, "this kernel always fails");
  return 7;
}

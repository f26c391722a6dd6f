/*===- test_program.c - A hand-written compiled program ------------*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 * A "compiled program" for the runtime's tests: entry points with the ABI of
 * dtensor/rt_abi.h, as the code generator emits them. */

#include "dtensor/rt_abi.h"

#include <stddef.h>

/* A ranked memref descriptor of rank 2. */
typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} Memref2;

static float *at(Memref2 *m, int64_t i, int64_t j) {
  return m->aligned + m->offset + i * m->strides[0] + j * m->strides[1];
}

/* y = x + w */
void dtensor_entry_add(void **descriptors) {
  Memref2 *x = descriptors[0], *w = descriptors[1], *y = descriptors[2];
  for (int64_t i = 0; i < y->sizes[0]; ++i)
    for (int64_t j = 0; j < y->sizes[1]; ++j)
      *at(y, i, j) = *at(x, i, j) + *at(w, i, j);
}

/* state += x, in place; no results */
void dtensor_entry_accumulate(void **descriptors) {
  Memref2 *x = descriptors[0], *state = descriptors[1];
  for (int64_t i = 0; i < state->sizes[0]; ++i)
    for (int64_t j = 0; j < state->sizes[1]; ++j)
      *at(state, i, j) += *at(x, i, j);
}

/* y = x @ w */
void dtensor_entry_matmul(void **descriptors) {
  for (int i = 0; i < 3; ++i)
    dtensor_rt_push_buffer(2, descriptors[i]);
  dtensor_rt_matmul(DTENSOR_RT_F32, 0);
}

/* y = all_reduce sum (x) over group 0 */
void dtensor_entry_allreduce(void **descriptors) {
  dtensor_rt_push_buffer(2, descriptors[0]);
  dtensor_rt_push_buffer(2, descriptors[1]);
  dtensor_rt_wait(
      dtensor_rt_all_reduce(0, DTENSOR_RT_SUM, DTENSOR_RT_F32, 1, 1));
}

/* Runs the function the test registered, inside the step. */
static void (*testCallback)(void **);

void test_program_set_callback(void (*callback)(void **)) {
  testCallback = callback;
}

void dtensor_entry_callback(void **descriptors) {
  if (testCallback)
    testCallback(descriptors);
}

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

/* Ranked memref descriptors of rank 1 and 3. */
typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} Memref1;
typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[3];
  int64_t strides[3];
} Memref3;

static float *at3(Memref3 *m, int64_t i, int64_t j, int64_t k) {
  return m->aligned + m->offset + i * m->strides[0] + j * m->strides[1] +
         k * m->strides[2];
}

/* dtensor.write_rows as compiled code does it: values[B, T, D] into the
 * state cache[S, M, D] at slots (i64) and positions (i32), a row outside
 * the cache skipped; no results. */
void dtensor_entry_write_rows(void **descriptors) {
  Memref3 *values = descriptors[0], *cache = descriptors[3];
  Memref1 *slots = descriptors[1], *positions = descriptors[2];
  for (int64_t b = 0; b < values->sizes[0]; ++b) {
    int64_t slot =
        ((int64_t *)slots->aligned)[slots->offset + b * slots->strides[0]];
    int64_t position = ((int32_t *)positions->aligned)[positions->offset +
                                                       b * positions->strides[0]];
    if (slot < 0 || slot >= cache->sizes[0] || position < 0 ||
        position + values->sizes[1] > cache->sizes[1])
      continue;
    for (int64_t t = 0; t < values->sizes[1]; ++t)
      for (int64_t d = 0; d < values->sizes[2]; ++d)
        *at3(cache, slot, position + t, d) = *at3(values, b, t, d);
  }
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

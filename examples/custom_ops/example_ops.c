/*===- example_ops.c - Example custom-op kernels ------------------*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 * Two fused kernels on local f32 tensors, for the model plans of
 * examples/custom_ops (docs/custom-ops.md):
 *
 *   example_swiglu(gate[T, F], up[T, F]) -> silu(gate) * up   [T, F]
 *   example_rms_norm(x[T, D], weight[D]) -> x / sqrt(mean(x^2) + eps) * weight
 *                                          (eps 1e-6, over D)  [T, D]
 *
 * Each kernel checks what it is given and fails with a message rather than
 * read out of bounds.
 *===----------------------------------------------------------------------===*/

#include "dtensor/custom_op.h"

#include <math.h>
#include <stdio.h>

DTENSOR_CUSTOM_OP_LIBRARY()

/* Element (i, j) of a rank-2 f32 tensor. */
static float *at2(const dtensor_custom_tensor *t, int64_t i, int64_t j) {
  return (float *)t->data + i * t->strides[0] + j * t->strides[1];
}

static int32_t fail(const dtensor_custom_call *call, const char *message) {
  if (call->error_size > 0)
    snprintf(call->error, call->error_size, "%s", message);
  return 1;
}

/* True when `t` is an f32 tensor of `rank` dims. */
static int isF32(const dtensor_custom_tensor *t, int32_t rank) {
  return t->dtype == DTENSOR_CUSTOM_F32 && t->rank == rank;
}

DTENSOR_CUSTOM_OP_EXPORT int32_t
example_swiglu(const dtensor_custom_call *call) {
  if (call->num_inputs != 2 || call->num_outputs != 1)
    return fail(call, "swiglu takes gate and up, and gives one output");
  const dtensor_custom_tensor *gate = &call->inputs[0];
  const dtensor_custom_tensor *up = &call->inputs[1];
  const dtensor_custom_tensor *out = &call->outputs[0];
  if (!isF32(gate, 2) || !isF32(up, 2) || !isF32(out, 2))
    return fail(call, "swiglu computes on f32 matrices");
  int64_t rows = out->shape[0], cols = out->shape[1];
  if (gate->shape[0] != rows || gate->shape[1] != cols ||
      up->shape[0] != rows || up->shape[1] != cols)
    return fail(call, "swiglu: gate, up and the output differ in shape");
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      float g = *at2(gate, i, j);
      *at2(out, i, j) = g / (1.0f + expf(-g)) * *at2(up, i, j);
    }
  return 0;
}

DTENSOR_CUSTOM_OP_EXPORT int32_t
example_rms_norm(const dtensor_custom_call *call) {
  if (call->num_inputs != 2 || call->num_outputs != 1)
    return fail(call, "rms_norm takes x and weight, and gives one output");
  const dtensor_custom_tensor *x = &call->inputs[0];
  const dtensor_custom_tensor *weight = &call->inputs[1];
  const dtensor_custom_tensor *out = &call->outputs[0];
  if (!isF32(x, 2) || !isF32(weight, 1) || !isF32(out, 2))
    return fail(call, "rms_norm computes on an f32 matrix and vector");
  int64_t rows = out->shape[0], cols = out->shape[1];
  if (x->shape[0] != rows || x->shape[1] != cols || weight->shape[0] != cols)
    return fail(call, "rms_norm: x, weight and the output do not fit");
  const float *w = (const float *)weight->data;
  for (int64_t i = 0; i < rows; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < cols; ++j) {
      float v = *at2(x, i, j);
      sum += v * v;
    }
    float scale = 1.0f / sqrtf(sum / (float)cols + 1e-6f);
    for (int64_t j = 0; j < cols; ++j)
      *at2(out, i, j) = *at2(x, i, j) * scale * w[j * weight->strides[0]];
  }
  return 0;
}

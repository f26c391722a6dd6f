/*===- example_ops.c - Example custom-op kernels ------------------*- C -*-===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 * Two fused kernels on local f32 tensors, for the model plans of
 * examples/custom_ops (docs/custom-ops.md):
 *
 *   example_swiglu(gate[T, F], up[T, F]) -> silu(gate) * up   [T, F]
 *   example_rms_norm(x[T, D], weight[D]) -> x / sqrt(mean(x^2) + eps) * weight
 *                                          (eps 1e-6, over D)  [T, D]
 *
 * and their gradients, the backward ops of a training plan
 * (swiglu_mlp_train.json): each takes the forward's inputs and the output's
 * gradient dy and gives the gradient of one input. With s = sigmoid(gate)
 * and, per row, r = 1 / sqrt(mean(x^2) + eps):
 *
 *   example_swiglu_grad_gate(gate, up, dy)
 *       -> dy * up * s * (1 + gate * (1 - s))
 *   example_swiglu_grad_up(gate, up, dy) -> dy * gate * s
 *   example_rms_norm_grad_x(x, weight, dy)
 *       -> r * weight * dy - x * r^3 / D * sum_j(dy[j] * weight[j] * x[j])
 *   example_rms_norm_grad_weight(x, weight, dy) -> sum over rows of dy * x * r
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

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

static float swigluGateGradient(float gate, float up, float dy) {
  float s = sigmoid(gate);
  return dy * up * s * (1.0f + gate * (1.0f - s));
}

static float swigluUpGradient(float gate, float up, float dy) {
  (void)up;
  return dy * gate * sigmoid(gate);
}

/* A SwiGLU gradient, `gradient(gate, up, dy)` of each element, once gate,
 * up, dy and the output are checked to be f32 matrices of one shape. */
static int32_t swigluGradient(const dtensor_custom_call *call,
                              float (*gradient)(float, float, float)) {
  if (call->num_inputs != 3 || call->num_outputs != 1)
    return fail(call, "swiglu's gradient takes gate, up and dy");
  const dtensor_custom_tensor *out = &call->outputs[0];
  if (!isF32(out, 2))
    return fail(call, "swiglu's gradient computes on f32 matrices");
  for (int32_t i = 0; i < 3; ++i) {
    const dtensor_custom_tensor *t = &call->inputs[i];
    if (!isF32(t, 2) || t->shape[0] != out->shape[0] ||
        t->shape[1] != out->shape[1])
      return fail(call, "swiglu's gradient: gate, up, dy and the output "
                        "differ in shape");
  }
  for (int64_t i = 0; i < out->shape[0]; ++i)
    for (int64_t j = 0; j < out->shape[1]; ++j)
      *at2(out, i, j) = gradient(*at2(&call->inputs[0], i, j),
                                 *at2(&call->inputs[1], i, j),
                                 *at2(&call->inputs[2], i, j));
  return 0;
}

DTENSOR_CUSTOM_OP_EXPORT int32_t
example_swiglu_grad_gate(const dtensor_custom_call *call) {
  return swigluGradient(call, swigluGateGradient);
}

DTENSOR_CUSTOM_OP_EXPORT int32_t
example_swiglu_grad_up(const dtensor_custom_call *call) {
  return swigluGradient(call, swigluUpGradient);
}

/* The checks of an RMSNorm gradient: x[T, D], weight[D], dy[T, D]. */
static int32_t checkRmsNormGrad(const dtensor_custom_call *call) {
  if (call->num_inputs != 3 || call->num_outputs != 1)
    return fail(call, "rms_norm's gradient takes x, weight and dy");
  const dtensor_custom_tensor *x = &call->inputs[0];
  const dtensor_custom_tensor *weight = &call->inputs[1];
  const dtensor_custom_tensor *dy = &call->inputs[2];
  if (!isF32(x, 2) || !isF32(weight, 1) || !isF32(dy, 2) ||
      weight->shape[0] != x->shape[1] || dy->shape[0] != x->shape[0] ||
      dy->shape[1] != x->shape[1])
    return fail(call, "rms_norm's gradient: x, weight and dy do not fit");
  return 0;
}

/* r = 1 / sqrt(mean(x[i]^2) + eps) of row i. */
static float rmsScale(const dtensor_custom_tensor *x, int64_t i) {
  float sum = 0.0f;
  for (int64_t j = 0; j < x->shape[1]; ++j) {
    float v = *at2(x, i, j);
    sum += v * v;
  }
  return 1.0f / sqrtf(sum / (float)x->shape[1] + 1e-6f);
}

DTENSOR_CUSTOM_OP_EXPORT int32_t
example_rms_norm_grad_x(const dtensor_custom_call *call) {
  if (checkRmsNormGrad(call))
    return 1;
  const dtensor_custom_tensor *x = &call->inputs[0];
  const dtensor_custom_tensor *weight = &call->inputs[1];
  const dtensor_custom_tensor *dy = &call->inputs[2];
  const dtensor_custom_tensor *out = &call->outputs[0];
  if (!isF32(out, 2) || out->shape[0] != x->shape[0] ||
      out->shape[1] != x->shape[1])
    return fail(call, "rms_norm's gradient of x has x's shape");
  const float *w = (const float *)weight->data;
  int64_t cols = x->shape[1];
  for (int64_t i = 0; i < x->shape[0]; ++i) {
    float r = rmsScale(x, i);
    float dot = 0.0f;
    for (int64_t j = 0; j < cols; ++j)
      dot += *at2(dy, i, j) * w[j * weight->strides[0]] * *at2(x, i, j);
    float correction = r * r * r / (float)cols * dot;
    for (int64_t j = 0; j < cols; ++j)
      *at2(out, i, j) = r * w[j * weight->strides[0]] * *at2(dy, i, j) -
                        *at2(x, i, j) * correction;
  }
  return 0;
}

DTENSOR_CUSTOM_OP_EXPORT int32_t
example_rms_norm_grad_weight(const dtensor_custom_call *call) {
  if (checkRmsNormGrad(call))
    return 1;
  const dtensor_custom_tensor *x = &call->inputs[0];
  const dtensor_custom_tensor *dy = &call->inputs[2];
  const dtensor_custom_tensor *out = &call->outputs[0];
  if (!isF32(out, 1) || out->shape[0] != x->shape[1])
    return fail(call, "rms_norm's gradient of weight has weight's shape");
  float *dw = (float *)out->data;
  for (int64_t j = 0; j < x->shape[1]; ++j)
    dw[j] = 0.0f;
  for (int64_t i = 0; i < x->shape[0]; ++i) {
    float r = rmsScale(x, i);
    for (int64_t j = 0; j < x->shape[1]; ++j)
      dw[j] += *at2(dy, i, j) * *at2(x, i, j) * r;
  }
  return 0;
}

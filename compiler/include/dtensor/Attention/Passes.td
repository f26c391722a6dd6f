//===- Passes.td - dtensor attention passes ----------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_ATTENTION_PASSES_TD
#define DTENSOR_ATTENTION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DecomposeAttention
    : Pass<"dtensor-decompose-attention", "::mlir::func::FuncOp"> {
  let summary = "Write dtensor.attention as linalg ops where no kernel runs it";
  let description = [{
    The frontend imports `scaled_dot_product_attention` as one
    `dtensor.attention`, so that the stages that need attention whole see
    it: its sharding rule in propagation and partitioning, the ring of key
    blocks (`--dtensor-ring-attention`), a target's fused kernel, and the
    closed-form gradient (`dtensor.attention_backward`, written by
    `--dtensor-differentiate`) that stores no `[L, S]` scores. This pass
    is the one place where attention and its gradients become linalg ops,
    for what no kernel runs: the scores as a contraction of query and key, the scale, the
    additive mask or the causal rule (from the loop indices, shifted by the
    op's per-row `positions`), the softmax in f32 that gives a query seeing
    no key weights 0, and the contraction with the value, rounded to the
    element type; and, for an attention that gives its log-sum-exp, each
    query's max logit plus the log of its sum of exponentials. Key/value
    heads read by several query heads are repeated; operands and a result
    read through a permutation are transposed. A `dtensor.attention_backward`
    becomes the same logits, the probabilities `exp(logits - lse)`, and the
    contractions of its gradients (in f32, f64 for f64), the key/value
    gradients summed over the query heads of each group.

    Without `kernel`, every op is decomposed (the CUDA target, the CPU target
    with `--no-fused-attention` or `--emulate-gpu-kernels`). With `kernel`,
    the ops the CPU kernels run are kept and the others decomposed: an
    attention of f32 operands (f16, bf16 and f64 are decomposed), a
    backward of f32 or f64 ones (`dtensor_rt_attention_backward` takes both). `--dtensor-distribute` runs the pass first,
    on the global program before propagation, with `kernel` set from its
    `attention-kernel` option; `dtensor-compile` runs it on the single-device
    reference program before that program's CPU lowering.

    The decomposition needs static shapes and refuses, with an error at the
    op, the forms only a kernel computes: key/value rows read by slot (a KV
    cache read in place) and the accumulation of a ring attention step.
  }];
  let options = [
    Option<"kernel", "kernel", "bool", /*default=*/"false",
           "The target has an attention kernel: keep the ops it runs (f32 "
           "attention, f32 or f64 backward) and decompose only the others">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FoldAttentionViews
    : Pass<"dtensor-fold-attention-views", "::mlir::func::FuncOp"> {
  let summary = "Let dtensor.attention read its operands where they are";
  let description = [{
    After partitioning, for a target whose attention kernel reads strided
    operands (the CPU: `dtensor_rt_attention`), the views around each
    `dtensor.attention` are folded into the op instead of being copied:
    a `linalg.transpose` of the query, key or value (`[B, S, H, E]` viewed
    as `[B, H, S, E]`) and of the result becomes the op's dims; the repeat
    of key/value heads for grouped-query attention (the frontend's
    broadcast and collapse) is dropped, the kernel reading head
    `h / groups`; a `tensor.gather` of KV-cache rows by a `[B]` i64 slot
    tensor (the plan's `index_select`) becomes the op's `rows`, so the cache
    is read in place rather than copied for every step. Views that are
    left without users are erased.

    `--dtensor-distribute` runs it after partitioning when its
    `attention-kernel` option says the target has a kernel, and
    `dtensor-compile` on the single-device reference program before that
    program's CPU lowering. A view of another form is left as it is, and
    the op reads the view's result.
  }];
}

#endif // DTENSOR_ATTENTION_PASSES_TD

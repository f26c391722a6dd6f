//===- Passes.td - dtensor attention passes ----------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_ATTENTION_PASSES_TD
#define DTENSOR_ATTENTION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseAttention : Pass<"dtensor-fuse-attention", "::mlir::func::FuncOp"> {
  let summary = "Fuse the linalg ops of attention into dtensor.attention";
  let description = [{
    Finds, on per-rank tensors, the linalg ops that the frontend emits for
    `scaled_dot_product_attention` (rank-4 query `[B, H, L, E]`, f32): the
    score contraction, the scale with an additive mask or a causal mask
    (from the loop indices or from per-row query positions), the softmax
    that gives a fully masked row weights 0, and the contraction with the
    values. They become one `dtensor.attention`, which bufferizes into a
    call of the runtime's fused kernel (`dtensor_rt_attention`): tiled over
    keys with an online softmax, no `[L, S]` scores buffer, and only the
    keys a causal row can see are read.

    Only a target with that kernel wants the op: `--dtensor-distribute`
    runs this pass after partitioning when its `attention-kernel` option
    says the target has one (`dtensor-compile` sets it for the CPU target
    unless `--no-fused-attention` or `--emulate-gpu-kernels`), and
    `dtensor-compile` runs it on the single-device reference program before
    that program's CPU lowering. The lowerings themselves never create it.

    The op reads its operands where they are: a `linalg.transpose` of the
    query, key or value (`[B, S, H, E]` viewed as `[B, H, S, E]`) and of
    the result is folded into the op's dims; the repeat of key/value heads
    for grouped-query attention is dropped (the kernel reads head
    `h / groups`); a `tensor.gather` of KV-cache rows by a `[B]` i64 slot
    tensor (the plan's `index_select`) becomes the op's `rows`, so the
    cache is read in place rather than copied for every step. A causal
    mask whose query row partition offset (a query sequence sharded over
    the ranks: context parallelism, keys gathered) becomes the op's
    `positions`, every row starting at the offset. Dynamic sizes (a rank's
    piece of an uneven shard of heads or of the query sequence) are kept:
    the result's empty tensor takes them from the accumulator's.

    Anything else (other ranks or element types, a mask that is not
    additive, an integer positions tensor other than i64, a key sequence
    sharded so that partition offset its loop index) is left to the
    linalg lowering.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

#endif // DTENSOR_ATTENTION_PASSES_TD

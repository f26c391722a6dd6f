//===- Passes.td - dtensor training passes -----------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_TRAINING_PASSES_TD
#define DTENSOR_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def BuildTrainStep : Pass<"dtensor-build-train-step", "::mlir::ModuleOp"> {
  let summary = "The training plan's train_step and eval_step entries";
  let description = [{
    Compiles the module's `dtensor.training` plan (the model plan's
    `model.training` section; docs/training.md) into two more global
    functions beside the forward function it names:

    - `train_step` takes the forward's inputs and weights, then the
      optimizer's state, and returns the loss, the gradient norm and the
      learning rate of the step. It differentiates the forward
      (`--dtensor-differentiate`'s gradient, inlined), clips the gradients
      by their global 2-norm (`torch.nn.utils.clip_grad_norm_`: one norm
      over every gradient, `max_norm / (norm + 1e-6)` when that is below 1),
      and updates each weight with SGD or AdamW exactly as PyTorch's
      formulas (SGD: weight decay added to the gradient, momentum with
      dampening, the first step's buffer the gradient itself, Nesterov;
      AdamW: decoupled weight decay, bias corrections, `eps` outside the
      square root, `amsgrad`), with each parameter group's learning rate
      and weight decay, scaled by the schedule's factor at the step.
      Weights become trained parameters: results marked `dtensor.updates`
      that the compiled program writes in place. The moments (named
      `<weight>.momentum_buffer`, `<weight>.exp_avg`, `<weight>.exp_avg_sq`,
      `<weight>.max_exp_avg_sq`, as PyTorch's optimizer state) are state
      arguments laid out as their weight, and the step counter
      (`optimizer.step`) a replicated scalar state. With
      `accumulation_steps` N, the gradients of N calls are averaged in the
      state `<weight>.grad_accum` (and `optimizer.micro_step` counts the
      calls); the weights and moments change on every N-th call only.
    - `eval_step` takes the forward's inputs and weights and returns the
      loss only.

    Both are global functions: propagation, partitioning and collective
    fusion see forward, backward and update as one program, so a
    replicated weight's gradient is reduced where its update needs it (data
    parallelism) and a sharded weight is updated on its shards.

    Errors, at the module or at the op: a plan key out of range, a loss
    that is not a float of one element, a group pattern that matches no
    weight, a forward with state, an op without a gradient on the path to
    the loss.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // DTENSOR_TRAINING_PASSES_TD

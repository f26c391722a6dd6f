//===- Passes.td - dtensor differentiation passes ----------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_AUTODIFF_PASSES_TD
#define DTENSOR_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def Differentiate : Pass<"dtensor-differentiate", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode gradients of a global function";
  let description = [{
    Adds to the module a function `<function>_grad` (or `gradient-function`)
    with the arguments of `function` that returns its result number
    `result` (the loss: a float tensor of one element) and then the gradient
    of the loss with respect to each argument marked `dtensor.weight` (with
    `wrt=all`: each float argument), in argument order. The gradients get
    the argument's `dtensor.name` with `.grad` appended. `function` is left
    as it is.

    It runs on the global program, before propagation: propagation,
    partitioning and collective fusion then see forward and backward as one
    program, and the gradients' placements follow from the forward's (a
    replicated parameter used by sharded activations gets a `Partial`
    gradient that partitioning reduces; a sharded parameter a sharded
    gradient).

    One mechanism covers the linalg ops that the frontend emits: the adjoint
    of a `linalg.generic` follows from its indexing maps and its scalar
    body. For each differentiated input it is a generic over the same loops
    that reads the forward's inputs (and, for a max/min reduction, its
    result) and the result's gradient, and accumulates into the input's
    shape the body's scalar adjoint: loops that the input's map does not
    read become reductions (a broadcast read gives a sum), a contraction
    gives contractions with the other operand, a sum reduction passes the
    gradient to every term, a max/min reduction to the terms equal to the
    result. The scalar adjoints are those of `arith` and `math` (add, sub,
    mul, div, neg, max, min, select, exp, log, sqrt, rsqrt, tanh, erf, pow,
    sin, cos, abs, extf, truncf); integer and comparison ops carry no
    gradient. Reshapes, transposes, slices, concatenation and casts pass
    the gradient back through their inverse; a layout claim
    (`dtensor.distribute`, `dtensor.to_layout`) claims the gradient sharded
    on the same Shard mesh dims, its other mesh dims left to propagation
    (the dual of Replicate is Partial); a `tensor.gather` of rows (the
    embedding) gives zeros and a `dtensor.scatter_add` of the rows'
    gradients. A softmax's row max (marked `dtensor.shift`) passes no
    gradient: the function does not depend on it.
    `dtensor.attention` is differentiated whole: the gradient function's
    forward attention gives its log-sum-exp, and its adjoint is one
    `dtensor.attention_backward` (the gradients of query, key and value,
    recomputing the probabilities from the log-sum-exp), so no `[L, S]`
    weights are stored between forward and backward; on the CPU target it
    runs the runtime's fused backward kernel, elsewhere
    `--dtensor-decompose-attention` writes it as linalg. An attention whose
    mask is differentiated (its gradient is itself `[L, S]`) is decomposed
    into linalg first and differentiated through that form; one that reads
    a KV cache by slot (`rows`) or accumulates a ring step is inference only
    and gets an error at the op.

    A `dtensor.custom_call` is differentiated by its declared `backward`:
    one call of the backward custom op of each differentiated input, on the
    forward's inputs and the result's gradient, with that op's strategies.
    A call without a backward, or without one for an input that needs a
    gradient, is an error at the call.

    A `dtensor.local_map` is differentiated on the local pieces: its adjoint
    is one more local map, on the forward's inputs and the results'
    gradients, whose body recomputes the forward body and sweeps back
    through it by these same rules. The gradients are laid out as the duals
    of the forward's layouts (Shard(d) stays, Replicate becomes
    Partial(sum) and Partial(sum) Replicate), and the backward redistributes
    its operands to them. With pieces of different sizes the body is an
    `scf.index_switch` over shape classes, and so is its sweep (case k
    sweeps back through case k). A Partial other than sum is an error at
    the local map.

    An op on the path from a differentiated argument to the loss that has
    no gradient rule gets an error at the op naming it, and the pass fails:
    never a silent zero. An argument that does not reach the loss gets a
    zero gradient.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function to differentiate (required)">,
    Option<"result", "result", "unsigned", /*default=*/"0",
           "Which result of the function is the loss">,
    Option<"wrt", "wrt", "std::string", /*default=*/"\"weights\"",
           "Differentiate with respect to the arguments marked dtensor.weight "
           "(weights) or every float argument (all)">,
    Option<"gradientFunction", "gradient-function", "std::string",
           /*default=*/"\"\"",
           "The name of the new function (default: <function>_grad)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // DTENSOR_AUTODIFF_PASSES_TD

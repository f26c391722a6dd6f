//===- Passes.td - dtensor collective fusion passes --------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_COLLECTIVES_PASSES_TD
#define DTENSOR_COLLECTIVES_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseCollectives : Pass<"dtensor-fuse-collectives", "mlir::ModuleOp"> {
  let summary = "Combine, cancel and overlap the collectives of the per-rank program";
  let description = [{
    Rewrites the collectives of every function of the per-rank program in
    three phases, each on the output of the one before.

    1. *Cancel and strength-reduce*, to a fixed point. Each rewrite needs
       the same mesh and the same `mesh_dims` in the same order, and fires
       only when the types prove it exact:
       - `chunk(all_gather(x, d), d)` is `x`, when the chunk's type is x's
         and x's dim d is static or comes from a chunk, reduce_scatter or
         all_to_all that splits d over the same groups;
       - `all_gather(chunk(x, d), d)` is `x`, when the gather's type is x's;
       - an `all_to_all` that swaps back the split and concat dims of the
         one before it gives that one's input back (same conditions on the
         concat dim as the first rule);
       - an `all_reduce` whose every user is the same `chunk` becomes one
         `reduce_scatter`;
       - `all_gather(reduce_scatter(x, d), d)` becomes `all_reduce(x)`;
         other users of the reduce_scatter get a chunk of the all_reduce.

       Unused results of variadic collectives are dropped and unused
       collectives erased.
    2. *Bucket*: independent `all_reduce`, `all_gather` and `reduce_scatter`
       ops of one block that agree on op, reduction, mesh, `mesh_dims`,
       element type and gather/scatter dim become one variadic op, filled in
       program order while the bucket stays within `bucket-bytes` per rank,
       after each all_reduce and reduce_scatter moved up to where its
       operands exist (gradients then bucket in backward order).
       An op counts the full buffer it works on (all_reduce input,
       all_gather result, reduce_scatter input); an op whose full buffer has
       a dynamic dim is not bucketed. The combined op goes after the last
       definition of its operands (no earlier than the first member); ops
       that use a member's result and sit above that point move below it
       when they have no memory effects, or the member stays out. Calls and
       ops whose regions hold collectives or calls are not crossed.
    3. *Overlap*: each collective becomes a `dtensor.start`, hoisted as far
       as its operands, the previous start and calls allow, and a
       `dtensor.wait` right before the first user of its results (or the
       block terminator).

    ```mlir
    %a = dtensor.all_reduce sum %x on @tp mesh_dims [0] : tensor<8xf32>
    %b = dtensor.all_reduce sum %y on @tp mesh_dims [0] : tensor<4xf32>
    ```

    becomes

    ```mlir
    %f:2 = dtensor.start {
      %r:2 = dtensor.all_reduce sum %x, %y on @tp mesh_dims [0]
          : tensor<8xf32>, tensor<4xf32>
      dtensor.yield %r#0, %r#1 : tensor<8xf32>, tensor<4xf32>
    } : !dtensor.future<tensor<8xf32>>, !dtensor.future<tensor<4xf32>>
    %a, %b = dtensor.wait %f#0, %f#1
        : !dtensor.future<tensor<8xf32>>, !dtensor.future<tensor<4xf32>>
    ```

    docs/collectives.md gives the argument for each rewrite.

    With `explain`, each rewrite is a remark at the collective it rewrote
    (`explain: chunk-of-all-gather: ...`, named as in docs/collectives.md),
    and each bucket a remark at its first member listing how many
    collectives it combines and their bytes.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "uint64_t",
           /*default=*/"25 * 1024 * 1024",
           "Largest combined size, in bytes per rank, of the tensors of one "
           "bucketed collective; 0 disables bucketing (default 25 MiB)">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Split each collective into dtensor.start and dtensor.wait to "
           "overlap it with independent computation (default true)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "A remark for each rewrite: the collective cancelled or "
           "strength-reduced and which rewrite did it, and each bucket with "
           "the collectives it combines">,
    Option<"statistics", "statistics", "bool", /*default=*/"false",
           "Report, as a remark on the module, the collectives of the input, "
           "those cancelling and strength reduction removed, the buckets "
           "created and the collectives they combine, and the collectives "
           "split for overlap">,
  ];
  let dependentDialects = ["::dtensor::DTensorDialect"];
}

#endif // DTENSOR_COLLECTIVES_PASSES_TD

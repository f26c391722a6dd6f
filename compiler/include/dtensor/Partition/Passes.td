//===- Passes.td - dtensor partitioning passes -------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_PARTITION_PASSES_TD
#define DTENSOR_PARTITION_PASSES_TD

include "mlir/Pass/PassBase.td"

def Partition : Pass<"dtensor-partition", "mlir::ModuleOp"> {
  let summary = "Rewrite the global program into the per-rank program";
  let description = [{
    Turns every function with layouts (the output of `--dtensor-propagate`)
    into the program each rank runs. Tensor types become the shard type of
    the rank: a sharded dim holds `ceil(N / n)` elements, split like
    `torch.chunk` (nested over several mesh dims, the first listed
    outermost); where ranks hold different sizes (uneven shards, including
    ranks holding nothing) the dim is dynamic and its size is computed from
    `dtensor.mesh_coord` at run time. Collectives on such dims move
    variable-size pieces; nothing is padded.

    Each op is rewritten to its local form. Most ops keep their meaning on
    local pieces (a matmul on shards, a reduction over a sharded dim giving
    the local partial value) and only change types. In addition:
    - `tensor.empty`, `tensor.expand_shape` and `tensor.reshape` take the
      rank's sizes; tensor constants are sliced to the rank's piece;
    - slices keep whole sharded dims at the rank's size;
    - `linalg.index` of a loop over a sharded dim adds the rank's offset,
      so loop indices stay global positions;
    - `tensor.gather` from a table sharded along a gathered dim looks up
      only the rows the rank holds and yields zeros for the others (a
      partial sum);
    - `tensor.dim` of a tensor with a static global size becomes that size;
    - `dtensor.distribute` disappears and `dtensor.redistribute` (whose
      source must be the layout its operand has) becomes
      the cheapest sequence of `all_gather`, `all_reduce`,
      `reduce_scatter`, `all_to_all`, `chunk` and the local Replicate to
      Partial step, as planned under the cost model of docs/propagation.md.

    With `explain`, each lowered `dtensor.redistribute` gets a remark at
    its location (for a model plan, its JSON position and module) naming
    the steps it became, each with the layout it leads to and its estimated
    time, and the total:

    ```
    mlp.json:17:7: remark: explain: redistribute of tensor<16x64xf32> from [P(sum)] to [R] lowered to 1 step:
      all_reduce(sum, mesh_dims=[0]) -> [R]  11.41 us
      total 11.41 us
    ```

    With `topology`, each collective step is priced over the slowest link
    class its group crosses, which the step's line names ("11.41 us over
    ib").

    Function arguments and results keep their `dtensor.layout` and gain
    `dtensor.global_shape`; declarations with layouts get the same per-rank
    signature. Functions without layouts are left alone, and so are
    functions partitioned already. Sharded dims must have static
    global sizes.
  }];
  let options = [
    Option<"callUs", "call-us", "double", /*default=*/"1.0",
           "Fixed cost of issuing one collective, in microseconds">,
    Option<"latencyUs", "latency-us", "double", /*default=*/"5.0",
           "Cost of one step of a collective, in microseconds">,
    Option<"bandwidthGBps", "bandwidth-gbps", "double", /*default=*/"10.0",
           "Bytes per second each rank sends, in GB/s">,
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "Topology file (docs/topology.md): the link class each mesh dim "
           "crosses; each collective is priced with the latency and "
           "bandwidth of the slowest class its group crosses instead of "
           "latency-us and bandwidth-gbps">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Explain each lowered redistribute (a remark naming its steps "
           "and their costs)">,
  ];
  let dependentDialects = ["::dtensor::DTensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def StripLayouts : Pass<"dtensor-strip-layouts", "mlir::ModuleOp"> {
  let summary = "Turn a global program into its single-device form";
  let description = [{
    Removes every trace of distribution from a global-level program, which
    leaves the program a single device runs: `dtensor.distribute` and
    `dtensor.redistribute` are replaced by their operand (at the global
    level they do not change values), `dtensor.layout` attributes are
    dropped from function arguments and results, and `dtensor.mesh` symbols
    are erased. `dtensor-compile` compiles this form as the artifact's
    reference program, the one `dtensor-run --check` compares against.

    A per-rank program (one that uses collectives, `dtensor.chunk` or
    `dtensor.mesh_coord`) has no single-device form: the pass fails on it,
    naming the first such op.
  }];
}

def RingAttention : Pass<"dtensor-ring-attention", "::mlir::func::FuncOp"> {
  let summary = "Attention over all-gathered keys as a ring of key blocks";
  let description = [{
    A `dtensor.attention` whose key and value are `dtensor.all_gather`s of a
    sequence sharded over one mesh dim (context parallelism) reads every
    rank's keys at once. This pass computes it as a ring instead, as
    PyTorch's `context_parallel` does with its `alltoall` rotation: each
    rank attends its queries to its own key/value block, then `n - 1` times
    passes the block it holds to the next rank (`dtensor.shift`, key and
    value in one call) and attends to the block it received, merging into
    the output through the log-sum-exp (`dtensor.attention ... accumulate`,
    exact in f32, no `[L, S]` buffer). The causal positions and an additive
    mask's key columns follow each block's global offset, so the result is
    the single-device one, for uneven blocks too (dynamic sizes). A rank
    then holds two key/value blocks at a time instead of the whole gathered
    sequence. `--dtensor-fuse-collectives` splits each shift into
    `dtensor.start` / `dtensor.wait` around the previous block's attention;
    the CPU runtime completes a collective inside its call, so there the
    transfer is not hidden. The bytes each rank sends are those of the
    all-gather.

    Which attentions: the module's `dtensor.rotate_method` (the model plan's
    `context_parallel.rotate_method`) forces it: `"alltoall"` rings every one
    it can, `"allgather"` none. Without it the cost model chooses: the two
    send the same bytes and the CPU runtime completes each collective in its
    call, so the difference is memory; the ring is chosen when the gathered
    key and value of an attention would take at least `min-gathered-bytes`
    per rank.

    It rewrites the partitioned program (the all-gathers partitioning chose
    become shifts), so `--dtensor-distribute` runs it right after
    `--dtensor-fold-attention-views`, before collective fusion, the
    communication report and the trace's site numbers, which all see the
    shifts.

    Left as they are: attentions with a KV cache's `rows` or a log-sum-exp
    already, key/value not gathered along their sequence dim over one mesh
    dim, a dynamic gathered sequence, and groups of one rank.
  }];
  let options = [
    Option<"minGatheredBytes", "min-gathered-bytes", "int64_t",
           /*default=*/"64 * 1024 * 1024",
           "Without dtensor.rotate_method: ring an attention when its "
           "gathered key and value take at least this many bytes per rank">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // DTENSOR_PARTITION_PASSES_TD

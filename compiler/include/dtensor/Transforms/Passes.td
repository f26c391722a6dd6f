//===- Passes.td - dtensor passes --------------------------*- tablegen -*-===//

#ifndef DTENSOR_TRANSFORMS_PASSES_TD
#define DTENSOR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintShardingRules : Pass<"dtensor-print-sharding-rules"> {
  let summary = "Report the sharding rule of every op on tensors";
  let description = [{
    Emits a remark on every op that produces a tensor, giving its sharding
    rule: the factors (loops) indexing each operand and result dim, their
    sizes and constraints, the inits the op accumulates into, and the ways
    Partial values flow through it. Rules come from the indexing maps and
    iterator types of linalg structured ops, from identity maps for
    elementwise ops, and from explicit rules for reshapes
    (`tensor.collapse_shape`, `tensor.expand_shape`, static `tensor.reshape`),
    static `tensor.extract_slice` and `tensor.insert_slice`, `tensor.concat`,
    `tensor.gather`, `linalg.softmax`, `tensor.empty` and tensor
    `arith.constant`; ops without a rule are reported as kept replicated.

    ```
    remark: sharding rule: ([i, k], [k, j], [i, j]) -> ([i, j]) {i=8, j=32, k=16 reduction<sum>} inits [2] partial {0, 2: sum|avg} {1, 2: sum|avg}
    remark: sharding rule: ([i, j]) -> ([i]) {i=4 even, j=8 blocked} partial {0: sum|avg|max|min}
    remark: sharding rule: () -> ([i, j]) {i=8, j=16} partial {-: sum|avg|max|min}
    ```

    Factors are named i, j, k, ... in order; `-` marks a tensor dim that no
    single factor indexes (it stays unsharded). After each factor's size
    (`?` when dynamic): `reduction<kind>` names the combiner of a reduction
    factor (`unknown` when it cannot be sharded); `even` means sharding is
    exact only when the shard count divides the size (the major dim of a
    reshape group); `blocked` means the factor must not be sharded (a
    sliced, concatenated or softmax dim, a minor dim of a reshape group).

    `inits [...]` lists the operands (by position among the tensor
    operands) that the body reads and accumulates into: with a reduction
    factor sharded they are Partial like the results. Each `{ops: kinds}`
    after `partial` is one flow: when exactly those operands are Partial of
    one of the kinds (`-`: none of them), the results are Partial of that
    kind. Sum and avg pass through linear computation; every kind passes
    through ops that only move data, and through zeros; max and min pass
    through a reduction with that combiner.
  }];
}

def Propagate : Pass<"dtensor-propagate", "mlir::ModuleOp"> {
  let summary = "Give every tensor value a layout and insert redistributes";
  let description = [{
    Chooses a layout for every tensor value of each function that uses a
    mesh, and inserts `dtensor.redistribute` exactly where an operand's
    layout differs from what its user's chosen strategy needs.

    User constraints win: layouts on function arguments, `dtensor.distribute`
    (the operand *is* that layout) and the source layout of a hand-written
    `dtensor.redistribute`. Two constraints that give one value different
    layouts, or different meshes in one function, are errors naming both
    places. A layout on a function result is a request: the returned value
    is redistributed to it when needed.

    Every op gets a strategy: for each mesh dim, shard one factor of its
    sharding rule, let Partial values flow through it (linear ops), or
    replicate. The choice is global and cost-based: each candidate is priced
    by the collectives its operands would need plus the op's local compute
    time. A deterministic local search starts twice (greedy in program
    order, and in reverse), sweeps backward and forward moving one op at a
    time (its operands' producers follow), and keeps the cheaper end point.
    The cost model, the rules and the search are described in
    docs/propagation.md.

    Each op that produces tensors gets a `dtensor.layouts` attribute (one
    layout per result); function arguments and results get `dtensor.layout`.
    Ops with no sharding rule are replicated, with a remark naming the op.
  }];
  let options = [
    Option<"callUs", "call-us", "double", /*default=*/"1.0",
           "Fixed cost of issuing one collective, in microseconds">,
    Option<"latencyUs", "latency-us", "double", /*default=*/"5.0",
           "Cost of one step of a collective, in microseconds">,
    Option<"bandwidthGBps", "bandwidth-gbps", "double", /*default=*/"10.0",
           "Bytes per second each rank sends, in GB/s">,
    Option<"computeGflops", "compute-gflops", "double", /*default=*/"100.0",
           "Per-rank compute throughput in GFLOP/s: arithmetic ops of an "
           "op's body per loop point, per nanosecond">,
    Option<"maxSweeps", "max-sweeps", "unsigned", /*default=*/"16",
           "Upper bound on forward/backward improvement sweeps">,
  ];
  let dependentDialects = ["::dtensor::DTensorDialect"];
}

def PrintLayouts : Pass<"dtensor-print-layouts", "mlir::ModuleOp"> {
  let summary = "Print a table of every tensor value's layout";
  let description = [{
    Prints, for every function with layouts (after `--dtensor-propagate`), a
    table with one row per tensor value: its name as the IR printer names
    it, its global type, its layout in DTensor notation, and the local shard
    shape each rank holds. The table goes to standard output, one blank line
    after each function; the IR is not changed.

    ```
    func @mlp on @tp shape [4] names ["tp"]
      value  type                layout    local shape per rank
      %arg0  tensor<10x64xf32>   [R]       10x64 (ranks 0-3)
      %arg1  tensor<64x256xf32>  [S(1)]    64x64 (ranks 0-3)
      %arg2  tensor<256x64xf32>  [S(0)]    64x64 (ranks 0-3)
      %0     tensor<10x256xf32>  [S(1)]    10x64 (ranks 0-3)
      %1     tensor<10x256xf32>  [S(1)]    10x64 (ranks 0-3)
      %2     tensor<10x64xf32>   [P(sum)]  10x64 (ranks 0-3)
      %3     tensor<10x64xf32>   [P(sum)]  10x64 (ranks 0-3)
      %4     tensor<10x64xf32>   [S(0)]    3x64 (ranks 0-2), 1x64 (rank 3)
    ```

    Rows list the function's arguments, then the values defined in its body
    in program order, nested regions included; values that are not tensors
    get no row. A value's layout comes from the `dtensor.layout` of an
    argument, the `dtensor.layouts` entry of the op defining it, or the
    layout a `dtensor.distribute` or `dtensor.redistribute` (its target)
    gives its result; block arguments of nested regions have none. A value
    without a layout shows `-`.

    The header names the mesh as `dtensor.mesh` writes it. Ranks are device
    ids (a mesh's `devices` list is honoured), and ranks holding the same
    local shape share one entry: `(ranks 0-2)`, `(ranks 1,3)`, `(rank 3)`.
    A dynamic global dim prints as `?` in the local shape and a rank-0
    tensor as `scalar`. A function using several meshes lists them all in
    the header and writes each layout with its mesh (`@pair [S(0)]`).
    Functions without any layout and declarations print nothing.
  }];
}

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
  ];
  let dependentDialects = ["::dtensor::DTensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

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
       program order while the bucket stays within `bucket-bytes` per rank.
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
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "uint64_t",
           /*default=*/"25 * 1024 * 1024",
           "Largest combined size, in bytes per rank, of the tensors of one "
           "bucketed collective; 0 disables bucketing (default 25 MiB)">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Split each collective into dtensor.start and dtensor.wait to "
           "overlap it with independent computation (default true)">,
  ];
  let dependentDialects = ["::dtensor::DTensorDialect"];
}

def CommReport : Pass<"dtensor-comm-report", "mlir::ModuleOp"> {
  let summary = "Report the collectives of the per-rank program";
  let description = [{
    A compile-time CommDebugMode. Prints, for every function with a body,
    the collectives it calls (`all_reduce`, `all_gather`, `reduce_scatter`,
    `all_to_all`, `broadcast`), grouped by module and then by kind, mesh,
    mesh dims and reduction, with the number of calls and the bytes each
    rank sends, then the function's total. The report goes to standard
    output; the IR is not changed. `--dtensor-comm-report=json` (or
    `format=json`) prints one JSON document instead of the text table.

    ```
    func @mlp_rank
      module            collective  reduction  mesh  mesh_dims  ranks  calls  bytes sent per rank
      layers.0.mlp.fc2  all_reduce  sum        @tp   [0]        4      1      3072
      total                                                            1      3072
    ```

    Calls are ops, counted once wherever they are nested (a collective in a
    loop body counts once, not once per iteration); a variadic collective is
    one call. The module is the name of the innermost `NameLoc` in the op's
    location (a `CallSiteLoc`'s callee before its caller, a `FusedLoc`'s
    parts in order), else that of the nearest enclosing op that has one;
    ops without a name are grouped under `<unnamed>` (`null` in JSON).
    Modules are listed in order of their first collective, and rows within
    a module in order of first call.

    Bytes sent per rank follow ring algorithms over a group of n ranks (the
    product of the sizes of the op's `mesh_dims`), each message carrying the
    largest chunk, as if uneven chunks were padded to it:

    - all_gather: (n-1) * the largest input shard
    - reduce_scatter: (n-1) * the largest result chunk
    - all_reduce: 2(n-1) * ceil(E/n) elements, E those of the input
    - all_to_all: (n-1) * the largest piece of the input's split dim
    - broadcast: the input's bytes, once
    - a group of one rank: 0

    For even shapes these are (n-1), (n-1)/n, 2(n-1)/n and (n-1)/n times
    the input's bytes. A variadic collective sums its operand/result pairs.
    Elements take their bit width rounded up to whole bytes. A chunk dim
    that is dynamic (`?`, an uneven split) is ceil(N/n) of the static size
    N on the other side of the op. A size that stays dynamic makes the
    call's bytes unknown: `?` in its row (`null` in JSON), and the total
    adds up the known calls and says how many it leaves out.
    docs/comm-report.md gives the model and both formats in full.
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false",
           "Print JSON whatever `format` says: `--dtensor-comm-report=json` "
           "is short for json=true">,
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: text (a table per function) or json">,
  ];
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

#endif // DTENSOR_TRANSFORMS_PASSES_TD

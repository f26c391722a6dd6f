//===- Passes.td - dtensor reports passes ------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_REPORTS_PASSES_TD
#define DTENSOR_REPORTS_PASSES_TD

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

def VisualizeSharding : Pass<"dtensor-visualize-sharding", "mlir::ModuleOp"> {
  let summary = "Show which rank holds which block of tensor values";
  let description = [{
    DTensor's `visualize_sharding`, for tensors of any rank: for each chosen
    value of a function with layouts (after `--dtensor-propagate`), the
    global tensor cut into the blocks the ranks' shards delimit, and for
    each block the ranks that hold it. The IR is not changed; the tables go
    to standard output.

    ```
    func @mlp: %arg1 "fc1.weight" tensor<128x64xf32> [S(0)] on @mesh shape [2] names ["tp"]
                Col 0-63
      Row 0-63    0
      Row 64-127  1
      cells: the devices holding each block, copies separated by ','
    ```

    Rows and columns are index ranges of the last two dims (inclusive);
    uneven shards show their real sizes, and ranks with an empty shard are
    listed. A tensor of rank 3 or more is shown as the 2-D slices over its
    leading dims whose holders differ (`slice [0-1, :, :]`), a 1-D tensor
    as one row, a scalar as one cell. Replicas are separate copies
    (`0, 1`); a Partial value is one copy held as the contributions of
    several ranks (`0+1`). Ranks are device ids (a mesh's `devices` list is
    honoured).

    `values` picks the values: a function argument's or result's
    `dtensor.name` (a model plan's input, parameter or output name), or the
    name the IR printer gives a value (`%arg0`, `%3`); without it, every
    argument and result of every function is shown. A result is shown with
    the layout the function returns it in, as `result #N`. A name that
    matches no value is an error listing the names there are. `svg-dir`
    also writes each view as an SVG picture, blocks in proportion to their
    sizes and coloured by rank, to `<dir>/<function>.<name>.svg`.
  }];
  let options = [
    ListOption<"values", "values", "std::string",
               "values to show (dtensor.name or IR name); default: every "
               "argument and result">,
    Option<"svgDir", "svg-dir", "std::string", /*default=*/"\"\"",
           "also write an SVG picture of each view into this folder">,
  ];
}

def CommReport : Pass<"dtensor-comm-report", "mlir::ModuleOp"> {
  let summary = "Report the collectives of the per-rank program";
  let description = [{
    A compile-time CommDebugMode. Prints, for every function with a body,
    the collectives it calls (`all_reduce`, `all_gather`, `reduce_scatter`,
    `all_to_all`, `broadcast`, `shift`), grouped by module and then by kind, mesh,
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
    - shift: the input's bytes, once (to the next rank), its shifted dim
      counted as the largest piece of `dim_size`
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

def NumberCollectiveSites
    : Pass<"dtensor-number-collective-sites", "mlir::ModuleOp"> {
  let summary = "Number the collectives of a per-rank program for its trace";
  let description = [{
    Gives every collective of the per-rank program (`all_reduce`,
    `all_gather`, `reduce_scatter`, `all_to_all`, `broadcast`, `shift`,
    also inside regions) a number, its *site*, in program order over the module's
    functions: the op carries it in `dtensor.site`, and the module lists
    what the compiler knows of each site in `dtensor.collective_sites`, site
    `i` at position `i`:

    ```
    module attributes {dtensor.collective_sites = [
        {bytes_sent = 3072 : i64, kind = "all_reduce", module = "fc2",
         position = "mlp.json:17:7", reduction = "sum"} ]} {
      ...
      %1 = dtensor.all_reduce %0 ... {dtensor.site = 0 : i64} ...
    ```

    `kind` is the collective, `reduction` its reduction (when it has one),
    `module` the module its location names and `position` the first file
    position in it (each when there is one), and `bytes_sent` the bytes each
    rank sends under the model of docs/comm-report.md (absent when not
    statically known): the figures of `--dtensor-comm-report` for that one
    call. The code generator passes the number to the runtime before the
    call (`dtensor_rt_collective_site`), the artifact's manifest carries the
    table, and `dtensor-run --comm-trace` compares what each site did at
    run time with it. Running the pass again renumbers from 0.
  }];
}

#endif // DTENSOR_REPORTS_PASSES_TD

//===- DTensorOps.td - dtensor operations ------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_DIALECT_DTENSOR_DTENSOROPS_TD
#define DTENSOR_DIALECT_DTENSOR_DTENSOROPS_TD

include "dtensor/Dialect/DTensor/DTensor.td"
include "dtensor/Dialect/DTensor/DTensorAttrs.td"
include "dtensor/Dialect/DTensor/DTensorTypes.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def DTensor_MeshOp : DTensor_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "an N-D array of devices";
  let description = [{
    Declares a device mesh as a module-level symbol. `shape` gives the size of
    each mesh dim; `names` (the `dim_names` attribute) optionally names the
    dims; `devices` (the `device_ids` attribute) optionally lists the device
    (rank) at each mesh position in row-major order. Without `devices` the
    mesh holds ranks 0..N-1 in row-major order, like
    `DeviceMesh(arange(N).reshape(shape))`.

    ```mlir
    dtensor.mesh @tp shape [4]
    dtensor.mesh @mesh2d shape [2, 4] names ["dp", "tp"]
    dtensor.mesh @swapped shape [2] devices [1, 0]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       DenseI64ArrayAttr:$shape,
                       OptionalAttr<StrArrayAttr>:$dim_names,
                       OptionalAttr<DenseI64ArrayAttr>:$device_ids);
  let assemblyFormat = [{
    $sym_name `shape` $shape (`names` $dim_names^)? (`devices` $device_ids^)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of mesh dims.
    int64_t getRank() { return getShape().size(); }
    /// Number of devices in the mesh.
    int64_t getNumDevices();
    /// Number of ranks in a group over `meshDims` (valid mesh dims).
    int64_t getGroupSize(::llvm::ArrayRef<int64_t> meshDims);
    /// The mesh in the layout-math representation.
    ::dtensor::layout::Mesh getLayoutMesh();
  }];
}

//===----------------------------------------------------------------------===//
// Global-level ops
//===----------------------------------------------------------------------===//

def DTensor_DistributeOp : DTensor_Op<"distribute", [Pure,
    SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "constrain a value to a layout";
  let description = [{
    A user annotation: the result is `input`, and it must have `layout`. It
    is the highest-priority constraint for sharding propagation. The tensor
    keeps its global type.

    ```mlir
    %w = dtensor.distribute %arg0 to <@mesh, [shard<1>]> : tensor<64x256xf32>
    ```

    `open_mesh_dims` lists mesh dims the claim leaves open: their
    placements in `layout` are ignored (write `replicate`) and propagation
    chooses them, so the claim constrains only the other mesh dims (as an
    open dimension of Shardy's sharding constraints). Propagation writes
    the chosen placements into `layout` and drops the list. Context
    parallelism claims q, k and v sequence-sharded over its mesh dim this
    way, whatever tensor parallelism does to their heads.

    ```mlir
    %k = dtensor.distribute %k0 to <@mesh, [shard<2>, replicate]>
        {open_mesh_dims = array<i64: 1>} : tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DTensor_LayoutAttr:$layout,
                       OptionalAttr<DenseI64ArrayAttr>:$open_mesh_dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `to` $layout attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def DTensor_ToLayoutOp : DTensor_Op<"to_layout", [Pure,
    SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "ask for a value in a layout, whatever layout it has";
  let description = [{
    The result is `input` laid out as `layout`, like PyTorch's
    `DTensor.redistribute(placements)`. Unlike `dtensor.distribute`, it says
    nothing about the layout of `input`: sharding propagation lets the
    producer choose, redistributes from that choice to `layout` where they
    differ, and then rewrites the op into a `dtensor.distribute`.

    ```mlir
    %r = dtensor.to_layout %y to <@tp, [replicate]> : tensor<8x64xf32>
    ```

    `open_mesh_dims` lists mesh dims the request leaves open, as for
    `dtensor.distribute`: propagation chooses their placements (keeping
    the input's where that is cheapest) and writes them into `layout`.
  }];
  let arguments = (ins AnyRankedTensor:$input, DTensor_LayoutAttr:$layout,
                       OptionalAttr<DenseI64ArrayAttr>:$open_mesh_dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `to` $layout attr-dict `:` type($input)";
  let hasFolder = 1;
  let hasVerifier = 1;
}

def DTensor_RedistributeOp : DTensor_Op<"redistribute", [Pure,
    SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "change a value's layout";
  let description = [{
    The result holds the same global value as `input`, laid out as `target`
    instead of `source`. Both layouts must be on the same mesh. Partitioning
    turns it into local collectives. It folds away when `source` equals
    `target`.

    ```mlir
    %r = dtensor.redistribute %x from <@mesh, [partial<sum>]>
                                  to <@mesh, [replicate]> : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       DTensor_LayoutAttr:$source,
                       DTensor_LayoutAttr:$target);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `from` $source `to` $target attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}
def DTensor_LocalMapOp : DTensor_Op<"local_map", [IsolatedFromAbove,
    RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "per-rank code inside a global program (PyTorch's local_map)";
  let description = [{
    Runs its body on each rank's local pieces of `inputs`, as PyTorch's
    `torch.distributed.tensor.experimental.local_map` runs a function on
    local shards. Input `i` is taken in layout `in_layouts[i]`; the body's
    argument `i` is the rank's piece of it, typed as partitioning types it
    (a dim is static where every rank holds the same size and dynamic
    where ranks differ). The body's `dtensor.yield` returns each rank's
    piece of result `i`, which is *claimed* to be laid out as
    `out_layouts[i]`; the result types are global, and the verifier checks
    the yielded types against the local types those layouts give.

    Without `redistribute_inputs` the input layouts are claims on the
    operands (a value laid out otherwise is an error, as in PyTorch); with
    it, sharding propagation redistributes an operand to its input layout.
    Propagation does not look into the body: the op is a boundary with
    fixed layouts. Partitioning inlines the body into the per-rank
    program.

    The body is per-rank code: it may not use values defined outside the
    op (pass them as inputs), nor hold layout ops (`distribute`,
    `to_layout`, `redistribute`) or another `local_map`. It may read the
    rank's mesh coordinate (`dtensor.mesh_coord`).

    ```mlir
    // A row-parallel matmul whose partial sums the user declares Partial.
    %y = dtensor.local_map (%x, %w)
        in [#dtensor.layout<@tp, [shard<1>]>, #dtensor.layout<@tp, [shard<0>]>]
        out [#dtensor.layout<@tp, [partial<sum>]>] {
    ^bb0(%lx: tensor<8x16xf32>, %lw: tensor<16x4xf32>):
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<8x4xf32>
      %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
      %p = linalg.matmul ins(%lx, %lw : tensor<8x16xf32>, tensor<16x4xf32>)
                         outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
      dtensor.yield %p : tensor<8x4xf32>
    } : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
                       TypedArrayAttrBase<DTensor_LayoutAttr,
                                          "array of layouts">:$in_layouts,
                       TypedArrayAttrBase<DTensor_LayoutAttr,
                                          "array of layouts">:$out_layouts,
                       UnitAttr:$redistribute_inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` `in` $in_layouts `out` $out_layouts
    (`redistribute_inputs` $redistribute_inputs^)? $body attr-dict
    `:` functional-type($inputs, $results)
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's terminator.
    YieldOp getYield();
    /// Input and result layouts as attributes.
    LayoutAttr getInLayout(unsigned i) {
      return ::llvm::cast<LayoutAttr>(getInLayouts()[i]);
    }
    LayoutAttr getOutLayout(unsigned i) {
      return ::llvm::cast<LayoutAttr>(getOutLayouts()[i]);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Ops of both levels
//===----------------------------------------------------------------------===//

def DTensor_WriteRowsOp : DTensor_Op<"write_rows", [Pure,
    AllTypesMatch<["cache", "result"]>,
    DestinationStyleOpInterface]> {
  let summary = "write rows of new values into a cache at per-row offsets";
  let description = [{
    The result is `cache` with `T` consecutive rows of one of its slots
    overwritten for each `b < B`: `cache` is `[S, M, rest...]`, `values`
    `[B, T, rest...]` (same trailing dims and element type), and `slots` and
    `positions` are 1-D `i32` or `i64` tensors of `B` elements:

    ```
    result = cache
    for b in 0..B:
      for t in 0..T:
        result[slots[b], positions[b] + t, ...] = values[b, t, ...]
    ```

    This is the write of new keys or values into a KV cache: `S` slots
    (sequences) of `M` positions, each of `rest` (e.g. KV heads, head dim).

    A row `b` whose slot is outside `[0, S)`, whose position is negative or
    whose `positions[b] + T` exceeds `M` is skipped: the cache keeps its
    contents there and nothing is written outside it. Rows are written in
    order of `b`, so where two rows overlap the later one wins.

    When `cache` is a `dtensor.state` argument of an entry (directly or
    through other `write_rows` into it) and `slots` and `positions` are the
    entry's replicated inputs, `dtensor-compile` records the write in the
    manifest (`row_writes`) and the runtime refuses a call with such a row
    before the step, on every rank, changing nothing; a negative slot there
    marks a padding row, written nowhere. The skipping above is then the
    fallback for indices the runtime cannot see.

    The op is in destination-passing style: `cache` is its init, and the
    result bufferizes into the cache's buffer, updated in place unless the
    old cache is read afterwards. `S`, `M`, `B` and `T` cannot be sharded;
    the trailing dims can (each rank writes its heads of every row).

    ```mlir
    %k = dtensor.write_rows %new into %cache at slots(%slots)
        positions(%positions)
        : tensor<2x1x4x8xf32> into tensor<4x16x4x8xf32>, tensor<2xi64>,
          tensor<2xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$values, AnyRankedTensor:$cache,
                       AnyRankedTensor:$slots, AnyRankedTensor:$positions);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $values `into` $cache `at` `slots` `(` $slots `)`
    `positions` `(` $positions `)` attr-dict
    `:` type($values) `into` type($cache) `,` type($slots) `,`
    type($positions)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getCacheMutable();
    }
  }];
}

def DTensor_ScatterAddOp : DTensor_Op<"scatter_add", [Pure,
    AllTypesMatch<["init", "result"]>,
    DestinationStyleOpInterface]> {
  let summary = "add rows of updates into a table at per-row indices";
  let description = [{
    The result is `init` with row `indices[n]` increased by row `n` of
    `updates`, for each `n < N`: `updates` is `[N, rest...]`, `init`
    `[V, rest...]` (same trailing dims and element type, a float), and
    `indices` a 1-D `i32` or `i64` tensor of `N` elements:

    ```
    result = init
    for n in 0..N:
      if 0 <= indices[n] < V:
        result[indices[n], ...] += updates[n, ...]
    ```

    This is the gradient of an embedding lookup (a `tensor.gather` of rows):
    each looked-up row's gradient is added to the row of the table it read,
    with `N * rest` additions rather than the `N * V * rest` of a one-hot
    contraction. An index outside `[0, V)` adds nothing, as the lookup of
    such an id reads zeros (tensor.gather is lowered with that bounds
    check); rows that share an index add up.

    Sharding: the trailing dims may be sharded (each rank adds its piece of
    every row); `N` may be sharded, leaving each rank with a partial sum
    (`init` then is a partial sum too, e.g. zeros); `V` may be sharded (the
    vocabulary-parallel embedding's gradient): each rank adds only the
    indices in its range of rows, the others fall outside its piece and are
    skipped.

    The op is in destination-passing style: `init` is its init, and the
    result bufferizes into init's buffer, updated in place unless the old
    contents are read afterwards.

    ```mlir
    %grad = dtensor.scatter_add %rows into %zeros at %ids
        : tensor<32x64xf32> into tensor<256x64xf32>, tensor<32xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$updates, AnyRankedTensor:$init,
                       AnyRankedTensor:$indices);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $updates `into` $init `at` $indices attr-dict
    `:` type($updates) `into` type($init) `,` type($indices)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
  }];
}

def DTensor_CustomCallOp : DTensor_Op<"custom_call", [Pure,
    AllTypesMatch<["init", "result"]>,
    DestinationStyleOpInterface]> {
  let summary = "a user's kernel, from a shared library, on local tensors";
  let description = [{
    Calls the C function `symbol` of a custom-op library (named at compile
    time, `dtensor-compile --custom-op-library`) on the local tensors of each
    rank: the kernel reads `inputs` and writes the whole result into the
    buffer of `init` (docs/custom-ops.md gives the kernel ABI). `op_name` is
    the custom op's name in the model plan; every call of one name has one
    symbol and one signature.

    `strategies` are the op's sharding strategies in PyTorch's
    `register_sharding` form: each entry is one way to run the op along one
    mesh dim, the result's placement first, then one placement per input.
    Propagation expands them to the whole mesh (any entry along each mesh
    dim) and picks the cheapest combination like a built-in rule; without
    `strategies` the op runs replicated. A strategy is a claim: the kernel
    computing on the chosen local pieces must give the result's local piece
    (or, for a `partial` result, a partial value).

    `backward` (optional) declares the op's gradient: one entry per input,
    either `unit` (the input gets no gradient) or a dictionary
    `{op_name, symbol, strategies?}` naming the custom op that computes
    that input's gradient. That op takes this op's inputs followed by the
    result's gradient and returns a tensor of the input's type, so the
    reverse sweep (`--dtensor-differentiate`) calls it as one more
    `dtensor.custom_call` with these strategies (result first, then one
    per input of the backward op). Without `backward`, a call on the path
    from a differentiated argument to the loss is an error at the call.

    ```mlir
    %y = dtensor.custom_call "swiglu" symbol "example_swiglu"
        (%gate, %up) into %empty
        strategies [[#dtensor.shard<0>, #dtensor.shard<0>, #dtensor.shard<0>],
                    [#dtensor.shard<1>, #dtensor.shard<1>, #dtensor.shard<1>]]
        : (tensor<8x64xf32>, tensor<8x64xf32>) into tensor<8x64xf32>
    ```
  }];
  // The init comes first among the operands: the result type is inferred
  // from it, which needs its position to be fixed.
  let arguments = (ins AnyRankedTensor:$init,
                       Variadic<AnyRankedTensor>:$inputs,
                       StrAttr:$op_name, StrAttr:$symbol,
                       OptionalAttr<ArrayAttr>:$strategies,
                       OptionalAttr<ArrayAttr>:$backward);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $op_name `symbol` $symbol `(` $inputs `)` `into` $init
    (`strategies` $strategies^)? (`backward` $backward^)? attr-dict
    `:` `(` type($inputs) `)` `into` type($init)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
  }];
}

def DTensor_AttentionOp : DTensor_Op<"attention", [Pure,
    AttrSizedOperandSegments, DestinationStyleOpInterface]> {
  let summary = "fused attention of one rank, read in place";
  let description = [{
    `softmax(query x key^T * scale + mask) x value` over the last two
    logical dims of each `[batch, head]`, written into `init`'s shape. The
    frontend imports `scaled_dot_product_attention` as this op on global
    tensors, and it stays whole through the stages that need it: its
    sharding rule lets propagation and partitioning handle it (each rank
    attends its own batch rows, heads or queries; a causal one over a piece
    of the queries is given the piece's offset as its `positions`, one op
    per piece for queries held head-tail), and the ring of key blocks
    (`--dtensor-ring-attention`) rewrites it. `--dtensor-decompose-attention`
    writes it as linalg ops where no kernel runs it; on the CPU target it
    bufferizes into a `dtensor_rt_attention` call (f32 or f64): the
    runtime's kernel tiled over keys with an online softmax, with no
    `[L, S]` scores buffer. The element type is any float type; f16 and bf16
    are computed in f32 by the decomposition.

    Each operand is rank 4 and is read through a permutation: logical dim
    `i` of the query `[B, H, L, E]` is its dim `query_dims[i]`, and so for
    the key `[Bk, Hkv, S, E]`, the value `[Bk, Hkv, S, Ev]` and the result
    `[B, H, L, Ev]` (`key_dims`, `value_dims`, `result_dims`). A transpose
    before or after the attention is thus no copy.

    - `H` is a multiple of `Hkv`: query head `h` reads key/value head
      `h / (H / Hkv)` (grouped-query attention, without a repeat).
    - `mask` (optional, the element type) is `[B, H, L, S]` in logical
      order, any dim of it 1 to broadcast, and is added to the scaled
      scores.
    - `rows` (optional, `[B]` of `i64`): batch row `b` reads key/value row
      `rows[b]` (a KV cache's slot); a row outside `[0, Bk)` reads no key.
      Without it `Bk` is `B`.
    - `causal`: query `i` sees key `j` iff `j <= i`, or with `positions`
      (`[B]` of `i64`) iff `j <= positions[b] + i`.
    - A query that sees no key gets 0, as PyTorch's attention.
    - `log_sum_exp` (optional init, `[B, H, L]` in logical order, the
      element type) gives a second result: each query's
      `log(sum_j exp(score_j))`, `-inf` where it sees no key. With
      `accumulate` the two inits are read too: they hold the attention of
      the same queries over other keys (`-inf`: none), and the results are
      the attention over those keys and these together, merged through the
      log-sum-exp (one step of ring attention, `--dtensor-ring-attention`).
    - Sizes may be dynamic (the rank's piece of an uneven shard: heads under
      tensor parallelism, queries under context parallelism). The verifier
      compares the sizes it knows; the kernel checks the rest at run time
      and fails the step with the shapes it got.

    ```mlir
    %o = dtensor.attention %q, %cache_k, %cache_v rows(%slots : tensor<4xi64>)
        positions(%start : tensor<4xi64>) into %init {causal,
        scale = 0.35355339059327379 : f64,
        query_dims = array<i64: 0, 2, 1, 3>, key_dims = array<i64: 0, 2, 1, 3>,
        value_dims = array<i64: 0, 2, 1, 3>, result_dims = array<i64: 0, 2, 1, 3>}
        : tensor<4x1x4x8xf32>, tensor<4x256x1x8xf32>, tensor<4x256x1x8xf32>
          into tensor<4x1x4x8xf32> -> tensor<4x1x4x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value,
                       Optional<AnyRankedTensor>:$mask,
                       Optional<AnyRankedTensor>:$rows,
                       Optional<AnyRankedTensor>:$positions,
                       AnyRankedTensor:$init,
                       Optional<AnyRankedTensor>:$log_sum_exp_init,
                       F64Attr:$scale, UnitAttr:$causal,
                       UnitAttr:$accumulate,
                       DenseI64ArrayAttr:$query_dims,
                       DenseI64ArrayAttr:$key_dims,
                       DenseI64ArrayAttr:$value_dims,
                       DenseI64ArrayAttr:$result_dims);
  let results = (outs AnyRankedTensor:$result,
                      Optional<AnyRankedTensor>:$log_sum_exp);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`rows` `(` $rows^ `:` type($rows) `)`)?
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    `into` $init
    (`log_sum_exp` `(` $log_sum_exp_init^ `:` type($log_sum_exp_init) `)`)?
    attr-dict
    `:` type($query) `,` type($key) `,` type($value)
    `into` type($init) `->` type(results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The init and, when present, the log-sum-exp init (adjacent, last).
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      unsigned begin = getInitMutable().getOperandNumber();
      return ::mlir::MutableOperandRange(getOperation(), begin,
                                         getLogSumExpInit() ? 2 : 1);
    }
    /// The size of logical dim `dim` of `operand` read through `dims`.
    static int64_t logicalSize(::mlir::Value operand,
                               ::llvm::ArrayRef<int64_t> dims, int64_t dim) {
      return ::llvm::cast<::mlir::RankedTensorType>(operand.getType())
          .getDimSize(dims[dim]);
    }
  }];
}

def DTensor_AttentionBackwardOp : DTensor_Op<"attention_backward", [Pure,
    AttrSizedOperandSegments, DestinationStyleOpInterface]> {
  let summary = "the gradients of a dtensor.attention, without its weights";
  let description = [{
    The gradients of `dtensor.attention` with respect to its query, key and
    value, given the forward's result `out`, its log-sum-exp `lse` and the
    gradient `d_out` of the loss with respect to `out`:

    ```
    P  = exp(query x key^T * scale + mask - lse)   (0 where lse is -inf)
    dV = P^T x d_out
    dS = P * (d_out x value^T - rowsum(d_out * out))
    dQ = dS x key * scale,   dK = dS^T x query * scale
    ```

    `--dtensor-differentiate` writes the adjoint of each attention as this
    op (the forward then gives its `log_sum_exp`), so that the `[L, S]`
    weights are never stored: on the CPU target it bufferizes into a
    `dtensor_rt_attention_backward` call (f32 or f64; FlashAttention-2's
    backward, recomputing `P` over blocks of keys and queries), and
    `--dtensor-decompose-attention` writes it as linalg ops where no kernel
    runs it (the CUDA target, `--no-fused-attention`, f16 and bf16; computed
    in f32, f64 for f64).

    The operands and attributes mean what the forward's do (`causal`,
    `scale`, the `*_dims` permutations, `mask` `[B, H, L, S]` with
    broadcast dims of size 1, `positions` `[B]` of `i64` with `causal`); there
    is no `rows` and no `accumulate` (those forms are inference only). `out`
    and `d_out` are read through `result_dims`, `lse` is `[B, H, L]` in
    logical order. The three inits, `d_query`, `d_key` and `d_value`, are
    read through the dims of the query, the key and the value, and written
    whole. Under grouped-query attention (`H` a multiple of `Hkv`) `d_key`
    and `d_value` sum over the query heads that read each key/value head.
    The mask gets no gradient.

    Its sharding rule is the forward's with the queries blocked: each rank
    computes the gradients of its own batch rows and heads (uneven heads
    included; under grouped-query attention the heads are blocked, as the
    forward's). The gradients of key and value sum over the queries, so a
    rank holding a piece of the queries would hold a partial sum: the
    queries are blocked, and propagation redistributes sharded queries
    (to a batch sharding, or replicated). `d_out` may be a Partial sum (the
    gradients are linear in it); the results are then Partial sums.

    ```mlir
    %dq, %dk, %dv = dtensor.attention_backward %q, %k, %v, %out, %dout, %lse
        into %eq, %ek, %ev {causal, scale = 0.35355339059327379 : f64,
        query_dims = array<i64: 0, 1, 2, 3>, key_dims = array<i64: 0, 1, 2, 3>,
        value_dims = array<i64: 0, 1, 2, 3>, result_dims = array<i64: 0, 1, 2, 3>}
        : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>,
          tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
          into tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>
          -> tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value, AnyRankedTensor:$out,
                       AnyRankedTensor:$d_out, AnyRankedTensor:$lse,
                       Optional<AnyRankedTensor>:$mask,
                       Optional<AnyRankedTensor>:$positions,
                       AnyRankedTensor:$d_query_init,
                       AnyRankedTensor:$d_key_init,
                       AnyRankedTensor:$d_value_init,
                       F64Attr:$scale, UnitAttr:$causal,
                       DenseI64ArrayAttr:$query_dims,
                       DenseI64ArrayAttr:$key_dims,
                       DenseI64ArrayAttr:$value_dims,
                       DenseI64ArrayAttr:$result_dims);
  let results = (outs AnyRankedTensor:$d_query, AnyRankedTensor:$d_key,
                      AnyRankedTensor:$d_value);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $d_out `,` $lse
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    `into` $d_query_init `,` $d_key_init `,` $d_value_init
    attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($out) `,`
        type($d_out) `,` type($lse)
    `into` type($d_query_init) `,` type($d_key_init) `,` type($d_value_init)
    `->` type(results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The three inits (adjacent, last).
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      unsigned begin = getDQueryInitMutable().getOperandNumber();
      return ::mlir::MutableOperandRange(getOperation(), begin, 3);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Local-level ops
//===----------------------------------------------------------------------===//

// An op acting on the groups of ranks that differ only in `mesh_dims`. Within
// a group, ranks are ordered row-major over `mesh_dims` in the order listed.
// The MeshGroup trait checks the list itself; mesh lookups and group-size
// checks happen in verifySymbolUses, which hands over to the op's
// verifyGroupShapes.
def DTensor_MeshGroupTrait : NativeOpTrait<"MeshGroup"> {
  let cppNamespace = "::dtensor";
}

class DTensor_MeshGroupOp<string mnemonic, list<Trait> traits = []>
    : DTensor_Op<mnemonic, !listconcat(traits,
        [DTensor_MeshGroupTrait,
         DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag meshArguments = (ins FlatSymbolRefAttr:$mesh,
                           DenseI64ArrayAttr:$mesh_dims);
  code groupDeclarations = [{
    /// Checks the types against the group size of `mesh_dims` on `mesh`.
    ::llvm::LogicalResult verifyGroupShapes(MeshOp mesh, int64_t groupSize);
  }];
  let extraClassDeclaration = groupDeclarations;
  let extraClassDefinition = [{
    ::llvm::LogicalResult
    $cppClass::verifySymbolUses(::mlir::SymbolTableCollection &tables) {
      return ::dtensor::detail::verifyMeshGroupOp(*this, tables);
    }
  }];
}

// Marks the ops that communicate, the ops `dtensor.start` may issue.
def DTensor_CollectiveTrait : NativeOpTrait<"Collective"> {
  let cppNamespace = "::dtensor";
}

// A collective: every rank of each group takes part. Collectives have no
// memory effects (unused ones may be erased on all ranks alike) and are not
// speculatable, so they are not hoisted out of conditional code. Without an
// effect, though, a pass that sinks effect-free ops into branches
// (--control-flow-sink) could move one into code only some ranks run: such
// passes must not run on per-rank programs.
class DTensor_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : DTensor_MeshGroupOp<mnemonic, !listconcat(traits,
        [DTensor_CollectiveTrait, NoMemoryEffect])>;

// A collective over several tensors at once: input i gives result i, and all
// of them travel in one call. They share one element type (one buffer type
// on the wire).
class DTensor_VariadicCollectiveOp<string mnemonic, list<Trait> traits = []>
    : DTensor_CollectiveOp<mnemonic, traits> {
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let hasVerifier = 1;
}

def DTensor_AllReduceOp : DTensor_VariadicCollectiveOp<"all_reduce"> {
  let summary = "reduce across each group; every rank gets the result";
  let description = [{
    Turns partial values into their reduction (`sum`, `avg`, `max`, `min`);
    every rank of the group receives the same result. Result i is the
    reduction of input i and has its type; several inputs are reduced in
    one call.

    ```mlir
    %r = dtensor.all_reduce sum %x on @mesh mesh_dims [0] : tensor<4x8xf32>
    %a, %b = dtensor.all_reduce max %x, %y on @mesh mesh_dims [0]
        : tensor<4x8xf32>, tensor<16xf32>
    ```
  }];
  let arguments = !con((ins Variadic<AnyRankedTensor>:$inputs,
                            DTensor_ReductionKind:$reduction),
                       meshArguments);
  let assemblyFormat = [{
    $reduction $inputs `on` $mesh `mesh_dims` $mesh_dims attr-dict
    `:` custom<InputTypes>(type($inputs), type($results))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "ReductionKind":$reduction,
                   "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<int64_t>":$meshDims), [{
      build($_builder, $_state, ::mlir::ValueRange(input), reduction, mesh,
            meshDims);
    }]>,
    OpBuilder<(ins "::mlir::ValueRange":$inputs, "ReductionKind":$reduction,
                   "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<int64_t>":$meshDims), [{
      build($_builder, $_state, inputs.getTypes(), inputs, reduction, mesh,
            meshDims);
    }]>
  ];
}

def DTensor_AllGatherOp : DTensor_VariadicCollectiveOp<"all_gather"> {
  let summary = "concatenate the group's shards along a dim";
  let description = [{
    Every rank receives the concatenation, in group order, of the group's
    `input` shards along `gather_dim`: the inverse of `dtensor.chunk` over
    the same mesh dims. Shards may differ in size (uneven sharding); the
    input dim is then dynamic. Several inputs are gathered in one call,
    each along `gather_dim`: result i is the concatenation of input i.

    ```mlir
    %g = dtensor.all_gather %x on @mesh mesh_dims [0] gather_dim 1
        : tensor<4x3xf32> -> tensor<4x12xf32>
    %a, %b = dtensor.all_gather %x, %y on @mesh mesh_dims [0] gather_dim 0
        : tensor<4x3xf32>, tensor<?xf32> -> tensor<16x3xf32>, tensor<10xf32>
    ```
  }];
  let arguments = !con((ins Variadic<AnyRankedTensor>:$inputs,
                            I64Attr:$gather_dim),
                       meshArguments);
  let assemblyFormat = [{
    $inputs `on` $mesh `mesh_dims` $mesh_dims `gather_dim` $gather_dim
    attr-dict `:` type($inputs) `->` type($results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "uint64_t":$gatherDim, "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<int64_t>":$meshDims), [{
      build($_builder, $_state, ::mlir::TypeRange(result),
            ::mlir::ValueRange(input), gatherDim, mesh, meshDims);
    }]>
  ];
}

def DTensor_ReduceScatterOp : DTensor_VariadicCollectiveOp<"reduce_scatter"> {
  let summary = "reduce across each group, keep this rank's chunk";
  let description = [{
    Reduces `input` across the group like `all_reduce`, then keeps this
    rank's piece of `scatter_dim`, split as `dtensor.chunk` splits it.
    Several inputs are reduced and scattered in one call, each along
    `scatter_dim`: result i is this rank's piece of the reduced input i.

    ```mlir
    %s = dtensor.reduce_scatter sum %x on @mesh mesh_dims [0] scatter_dim 0
        : tensor<8x8xf32> -> tensor<2x8xf32>
    %a, %b = dtensor.reduce_scatter sum %x, %y on @mesh mesh_dims [0]
        scatter_dim 0 : tensor<8x8xf32>, tensor<10xf32>
                     -> tensor<2x8xf32>, tensor<?xf32>
    ```
  }];
  let arguments = !con((ins Variadic<AnyRankedTensor>:$inputs,
                            DTensor_ReductionKind:$reduction,
                            I64Attr:$scatter_dim),
                       meshArguments);
  let assemblyFormat = [{
    $reduction $inputs `on` $mesh `mesh_dims` $mesh_dims
    `scatter_dim` $scatter_dim attr-dict `:` type($inputs) `->` type($results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "ReductionKind":$reduction, "uint64_t":$scatterDim,
                   "::llvm::StringRef":$mesh,
                   "::llvm::ArrayRef<int64_t>":$meshDims), [{
      build($_builder, $_state, ::mlir::TypeRange(result),
            ::mlir::ValueRange(input), reduction, scatterDim, mesh, meshDims);
    }]>
  ];
}

def DTensor_AllToAllOp : DTensor_CollectiveOp<"all_to_all"> {
  let summary = "re-shard from one dim to another";
  let description = [{
    Each rank splits its `input` along `split_dim` as `dtensor.chunk` would,
    sends piece i to the group member with group index i, and concatenates
    what it receives along `concat_dim` in group order: a shard of
    `concat_dim` becomes a shard of `split_dim`.

    ```mlir
    %t = dtensor.all_to_all %x on @mesh mesh_dims [0] split_dim 1
        concat_dim 0 : tensor<2x8xf32> -> tensor<8x2xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input, I64Attr:$split_dim,
                            I64Attr:$concat_dim),
                       meshArguments);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_dims` $mesh_dims `split_dim` $split_dim
    `concat_dim` $concat_dim attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def DTensor_BroadcastOp : DTensor_CollectiveOp<"broadcast",
    [SameOperandsAndResultType]> {
  let summary = "copy the root's tensor to every rank of the group";
  let description = [{
    Every rank receives the `input` of the group member whose group index is
    `root`.

    ```mlir
    %b = dtensor.broadcast %x on @mesh mesh_dims [0] root 0 : tensor<4x8xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input, I64Attr:$root),
                       meshArguments);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_dims` $mesh_dims `root` $root attr-dict
    `:` type($input)
  }];
}

def DTensor_ShiftOp : DTensor_VariadicCollectiveOp<"shift"> {
  let summary = "pass each rank's piece of a dim to the next rank of the group";
  let description = [{
    One step of a ring over the group (one mesh dim, `n` ranks): the rank at
    group index `g` holds piece `(g - step) mod n` of dim `dim` of each input
    (a dim of `dim_size` elements split as `dtensor.chunk` splits it), sends
    it to group index `(g + 1) mod n` and receives piece
    `(g - step - 1) mod n` from group index `(g - 1) mod n`. After steps
    `0 .. n - 2` every rank has seen every piece once, one piece in flight
    at a time (the point-to-point rotation of ring attention). Other dims
    are unchanged. A piece whose size differs across the group (an uneven
    split) has a dynamic size. Several inputs travel in one call, each
    along `dim`.

    ```mlir
    %k1, %v1 = dtensor.shift %k0, %v0 on @mesh mesh_dims [0] dim 1
        dim_size 15 step 0 : tensor<1x?x4xf32>, tensor<1x?x4xf32>
                          -> tensor<1x?x4xf32>, tensor<1x?x4xf32>
    ```
  }];
  let arguments = !con((ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$dim,
                            I64Attr:$dim_size, I64Attr:$step),
                       meshArguments);
  let assemblyFormat = [{
    $inputs `on` $mesh `mesh_dims` $mesh_dims `dim` $dim
    `dim_size` $dim_size `step` $step attr-dict `:` type($inputs) `->`
    type($results)
  }];
}

def DTensor_ChunkOp : DTensor_MeshGroupOp<"chunk", [Pure]> {
  let summary = "keep this rank's piece of a dim, without communication";
  let description = [{
    `input` is the same on every rank of the group; the result is this
    rank's piece of `dim` (the replicate-to-shard transition). `dim` is split
    like `torch.chunk` over the first listed mesh dim, each piece again over
    the next one, and so on: with several mesh dims the first listed is
    outermost, as when a layout shards one tensor dim on several mesh dims.
    10 rows over mesh dims [0, 1] of a 2x2 mesh give 3, 2, 3 and 2 rows.

    ```mlir
    %c = dtensor.chunk %x on @mesh mesh_dims [0] dim 0
        : tensor<8x8xf32> -> tensor<2x8xf32>
    %u = dtensor.chunk %y on @mesh mesh_dims [0] dim 0
        : tensor<10x8xf32> -> tensor<?x8xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input, I64Attr:$dim),
                       meshArguments);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh `mesh_dims` $mesh_dims `dim` $dim attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def DTensor_MeshCoordOp : DTensor_MeshGroupOp<"mesh_coord", [Pure]> {
  let summary = "this rank's coordinates along mesh dims";
  let description = [{
    One `index` result per listed mesh dim: the rank's coordinate along it.

    ```mlir
    %i, %j = dtensor.mesh_coord on @mesh mesh_dims [0, 1] : index, index
    ```
  }];
  let arguments = meshArguments;
  let results = (outs Variadic<Index>:$coords);
  let assemblyFormat = [{
    `on` $mesh `mesh_dims` $mesh_dims attr-dict `:` type($coords)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

def DTensor_StartOp : DTensor_Op<"start", [RecursiveMemoryEffects]> {
  let summary = "issue a collective without waiting for it";
  let description = [{
    Issues the one collective in its body (`all_reduce`, `all_gather`,
    `reduce_scatter`, `all_to_all`, `broadcast` or `shift`) and returns at
    once, with one `!dtensor.future` per result of the collective. The body
    holds the collective and a `dtensor.yield` of all its results, in order;
    it may use values defined above. The results become available at the
    `dtensor.wait` on the futures, so ops placed between the two overlap the
    communication.

    ```mlir
    %f = dtensor.start {
      %r = dtensor.all_reduce sum %x on @mesh mesh_dims [0] : tensor<8xf32>
      dtensor.yield %r : tensor<8xf32>
    } : !dtensor.future<tensor<8xf32>>
    // ... computation independent of %r ...
    %y = dtensor.wait %f : !dtensor.future<tensor<8xf32>>
    ```

    Like the collective it holds, a start has no memory effects and is not
    speculatable.
  }];
  let results = (outs Variadic<DTensor_FutureType>:$futures);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$body attr-dict `:` type($futures)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The collective this op issues.
    ::mlir::Operation *getCollective();
  }];
}

def DTensor_YieldOp : DTensor_Op<"yield", [Pure, Terminator,
    ParentOneOf<["StartOp", "LocalMapOp"]>]> {
  let summary = "the results of a dtensor.start or dtensor.local_map body";
  let description = [{
    Terminates the body of `dtensor.start` (its operands are the results of
    the collective, in order) and of `dtensor.local_map` (the rank's pieces
    of the results, in order).
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def DTensor_WaitOp : DTensor_Op<"wait", [NoMemoryEffect,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "complete a collective issued by dtensor.start";
  let description = [{
    Blocks until the collective issued by a `dtensor.start` has completed
    and returns its results. It takes all the futures of that one start, in
    order; result i is the tensor future i stands for.

    ```mlir
    %a, %b = dtensor.wait %f#0, %f#1
        : !dtensor.future<tensor<8xf32>>, !dtensor.future<tensor<4x4xf32>>
    ```
  }];
  let arguments = (ins Variadic<DTensor_FutureType>:$futures);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$futures attr-dict `:` type($futures)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The dtensor.start whose futures this op waits on, or null if the
    /// first future is not the result of one.
    StartOp getStart();
  }];
}

//===----------------------------------------------------------------------===//
// Recomputation
//===----------------------------------------------------------------------===//

def DTensor_OptimizationBarrierOp : DTensor_Op<"optimization_barrier",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "an identity that optimizations must not see through";
  let description = [{
    Returns its operand, as XLA's optimization barrier does; it exists so
    that the ops reading its result stay apart from the ops reading the
    operand. Activation checkpointing (`docs/training.md`) reads a
    checkpointed module's inputs through barriers where the backward
    recomputes the module's forward: the recomputed ops then have other
    operands than the forward's, so CSE cannot merge them back into the
    forward, and elementwise fusion cannot fuse the forward's producers into
    them (which would recompute values outside the module). The op has no
    folder and declares no memory effects, so passes treat it as having
    unknown ones: it is neither removed, merged nor moved, and collective
    bucketing moves no op below it (which would run the recomputation
    before that part of the backward). Propagation
    gives the result the operand's layout (a copy); partitioning keeps it
    per rank; `--dtensor-lower-optimization-barriers` replaces it by its
    operand after elementwise fusion, before bufferization.

    ```mlir
    %kept = dtensor.optimization_barrier %x : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

def DTensor_StepSeedOp : DTensor_Op<"step_seed", [Pure]> {
  let summary = "the seed of the running step's random ops";
  let description = [{
    The 64-bit seed of the step being run, the same on every rank: the
    runtime derives it from the run's seed and its count of the program's
    steps (`stepSeed` of `dtensor/Formats/Random.h`; `docs/runtime.md`).
    Within one step it is a constant, so the op is pure; successive steps
    get different seeds. The random ops of a model plan draw from streams
    of it, by global element index, so a value does not depend on how the
    tensor is sharded. `--dtensor-lower-step-seed` turns it into a call of
    `dtensor_rt_step_seed`.

    ```mlir
    %seed = dtensor.step_seed : i64
    ```
  }];
  let results = (outs I64:$seed);
  let assemblyFormat = "attr-dict `:` type($seed)";
}

#endif // DTENSOR_DIALECT_DTENSOR_DTENSOROPS_TD

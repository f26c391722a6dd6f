//===- Passes.td - dtensor layout propagation passes -------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#ifndef DTENSOR_PROPAGATION_PASSES_TD
#define DTENSOR_PROPAGATION_PASSES_TD

include "mlir/Pass/PassBase.td"

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

    With `explain`, every inserted redistribute is explained by a remark
    at the op (or the function result) that needs it, whose location names
    the model plan's module and JSON position:

    ```
    mlp.json:17:7: remark: explain: operand #0 is redistributed from [P(sum)] to
    [R] (11.4 us) for this op (linalg.generic, module 'fc2'), whose chosen
    strategy #0 needs [R]; its strategies, given its operands' producers
    (local + redistributes = total us): #3 [P(sum)], [P(sum)], [R] ->
    [P(sum)]: 0.0112 + 0.0128 = 0.024; ...; #0 [R], [R], [R] -> [R]: 0.0102
    + 11.4 = 11.4 (chosen); ...
    ```

    The strategies are listed cheapest first (at most 8); a strategy's
    total can exceed the chosen one's when the chosen one saves work
    elsewhere (its results' users).

    In a gradient function or training step (--dtensor-differentiate marks
    the backward's ops, Autodiff/BackwardMark.h), the remark says when the
    op is of the backward, names the weight whose gradient the op computes
    with the layout chosen for it ("computing the gradient of 'fc1.weight'
    as [R]"), and names the weight when the moved value is its gradient
    ("operand #0 (the gradient of 'fc1.weight')") or computed from it
    alone ("computed from the gradient of ..."). The reductions of N > 1
    weights' gradients are priced with 1/N of a collective's call and
    latency each, since collective fusion buckets them.

    With `topology` (a file, docs/topology.md), each mesh dim's collectives
    are priced with the latency and bandwidth of its link class, a group
    over several dims with the slowest of theirs. With `explain`, the mesh
    gets a remark naming each dim's class, and each redistribute's remark
    names the classes of the mesh dims it changes
    ("(6.2e+03 us, mesh dim 0 on ib)").

    Compute is priced at `compute-gflops` when it is given, else at the
    topology file's `compute_gflops` (a machine's measured rate,
    `dtensor-bench-ceilings --calibrate-topology`), else at an assumed
    100 GFLOP/s; with `explain`, the mesh gets a remark saying which.
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
    Option<"computeGflops", "compute-gflops", "double", /*default=*/"0.0",
           "Per-rank compute throughput in GFLOP/s: arithmetic ops of an "
           "op's body per loop point, per nanosecond; 0 (the default): the "
           "topology file's compute_gflops, else an assumed 100">,
    Option<"maxSweeps", "max-sweeps", "unsigned", /*default=*/"16",
           "Upper bound on forward/backward improvement sweeps">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "For each inserted redistribute, a remark at the op that needs "
           "it: the layouts, its cost, the strategy of that op that asks "
           "for it and every strategy it had with its cost">,
    Option<"statistics", "statistics", "bool", /*default=*/"false",
           "Report, as a remark on the module, the functions given layouts, "
           "the redistributes inserted, the producers recreated in a second "
           "layout and the improvement sweeps of the search">,
  ];
  let dependentDialects = ["::dtensor::DTensorDialect"];
}

#endif // DTENSOR_PROPAGATION_PASSES_TD

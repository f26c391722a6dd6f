#!/usr/bin/env python3
"""Writes the model plans of test/Frontend/e2e/zero-size-ops.test: every op
of the model plan with a dim of size 0, op by op, merged into one plan so
that it compiles and runs once per mesh.

  zero-size-ops.py DIR

DIR/zero.json holds the cases PyTorch computes too (torch_model.py is their
oracle); DIR/zero-only.json the one whose semantics are dtensor's own (an
embedding of 0 rows: every id is outside the table, a row of zeros).
DIR/outputs and DIR/outputs-only list their outputs. Each case is the op on
its smallest shapes with one dim of size 0: the leading (batch or token)
dim, and, where the op reads it specially, a contracted, reduced, gathered
or class dim; the placements shard a dim of size 0 or the others. The ops
that refuse a dim of size 0 (max and argmax over it, cross_entropy with no
classes) are in test/Frontend/ops/zero-size-errors.test.
"""

import json
import os
import sys


def T(name, shape, dtype="f32"):
    return {"name": name, "shape": shape, "dtype": dtype}


def plan(inputs, ops, outputs, params=(), styles=None, placements=None):
    return {"inputs": inputs, "parameters": list(params), "ops": ops,
            "outputs": outputs, "styles": styles or {},
            "placements": placements or {}}


def op(kind, inputs, out, module=None, **attrs):
    d = {"op": kind, "inputs": inputs}
    if isinstance(out, list):
        d["outputs"] = out
    else:
        d["output"] = out
    if module:
        d["module"] = module
    d.update(attrs)
    return d


Z = 0
CASES = {}
x = T("x", [Z, 8])
CASES["linear"] = plan([x], [op("linear", ["x", "w", "b"], "y", module="fc")], ["y"], [T("w", [6, 8]), T("b", [6])], styles={"fc": "colwise"})
CASES["linear_rowwise"] = plan([x], [op("linear", ["x", "w"], "y", module="fc")], ["y"], [T("w", [6, 8])], styles={"fc": "rowwise"})
CASES["linear_in0"] = plan([T("x", [4, Z])], [op("linear", ["x", "w"], "y", module="fc")], ["y"], [T("w", [6, Z])], styles={"fc": "colwise"})
CASES["linear_out0"] = plan([T("x", [4, 8])], [op("linear", ["x", "w"], "y", module="fc")], ["y"], [T("w", [Z, 8])], styles={"fc": "colwise"})
CASES["matmul"] = plan([T("a", [Z, 4, 8]), T("b", [Z, 8, 6])], [op("matmul", ["a", "b"], "y")], ["y"], placements={"a": "S(0)", "b": "S(0)"})
CASES["matmul_k0"] = plan([T("a", [3, 4, Z]), T("b", [3, Z, 6])], [op("matmul", ["a", "b"], "y")], ["y"], placements={"a": "S(2)", "b": "S(1)"})
CASES["bmm"] = plan([T("a", [Z, 4, 8]), T("b", [Z, 8, 6])], [op("bmm", ["a", "b"], "y")], ["y"])
for k in ["add", "sub", "mul", "div"]:
    CASES[k] = plan([T("a", [Z, 8]), T("b", [8])], [op(k, ["a", "b"], "y"), op(k, ["y"], "z", scalar=2.0)], ["y", "z"], placements={"a": "S(1)"})
un = ["neg", "exp", "tanh", "relu", "silu", "gelu", "sqrt", "rsqrt", "sigmoid", "cos", "sin"]
CASES["unary"] = plan([x], [op(k, ["x"], "y_" + k) for k in un] + [op("pow", ["x"], "y_pow", exponent=3.0), op("cast", ["x"], "y_cast", dtype="f16")], ["y_" + k for k in un + ["pow", "cast"]], placements={"x": "S(0)"})
CASES["where"] = plan([T("c", [Z, 8], "i64"), T("a", [Z, 8]), T("b", [8])], [op("where", ["c", "a", "b"], "y"), op("masked_fill", ["a", "c"], "z", value=-1.0)], ["y", "z"])
CASES["softmax"] = plan([x], [op("softmax", ["x"], "y"), op("log_softmax", ["x"], "z", dim=0)], ["y", "z"], placements={"x": "S(0)"})
CASES["softmax_dim0"] = plan([T("x", [4, Z])], [op("softmax", ["x"], "y")], ["y"], placements={"x": "S(1)"})
CASES["norms"] = plan([x], [op("layer_norm", ["x", "g", "b"], "y"), op("rms_norm", ["x", "g"], "z")], ["y", "z"], [T("g", [8]), T("b", [8])], placements={"x": "S(0)"})
CASES["norm_dim0"] = plan([T("x", [4, Z])], [op("layer_norm", ["x"], "y"), op("rms_norm", ["x"], "z", eps=1e-6)], ["y", "z"])
CASES["embedding"] = plan([T("ids", [Z, 5], "i64")], [op("embedding", ["ids", "emb"], "y", module="embed")], ["y"], [T("emb", [16, 8])], styles={"embed": "rowwise"})
CASES["embedding_col"] = plan([T("ids", [Z, 5], "i64")], [op("embedding", ["ids", "emb"], "y", module="embed")], ["y"], [T("emb", [16, 8])], styles={"embed": "colwise"})
CASES["embedding_v0"] = plan([T("ids", [3, 5], "i64")], [op("embedding", ["ids", "emb"], "y", module="embed")], ["y"], [T("emb", [Z, 8])], styles={"embed": "rowwise"})
CASES["index_select"] = plan([T("x", [6, 8]), T("i", [Z], "i64")], [op("index_select", ["x", "i"], "y", dim=0)], ["y"], placements={"x": "S(1)"})
CASES["index_select_x0"] = plan([T("x", [6, Z]), T("i", [3], "i64")], [op("index_select", ["x", "i"], "y", dim=0)], ["y"])
CASES["cache_write"] = plan([T("c", [4, 6, 2, 4]), T("v", [Z, 1, 2, 4]), T("s", [Z], "i64"), T("p", [Z], "i64")], [op("cache_write", ["c", "v", "s", "p"], "y")], ["y"], placements={"c": "S(2)"})
CASES["shape"] = plan([T("x", [Z, 4, 6])], [op("transpose", ["x"], "t", dim0=0, dim1=2), op("permute", ["x"], "p", dims=[1, 2, 0]), op("reshape", ["x"], "r", shape=[Z, 24]), op("view", ["x"], "v", shape=[-1, 2, 12]), op("unsqueeze", ["x"], "u", dim=1), op("squeeze", ["u"], "s", dim=1), op("expand", ["u"], "e", shape=[-1, 3, 4, 6]), op("repeat_interleave", ["x"], "ri", repeats=2, dim=1)], ["t", "p", "r", "v", "s", "e", "ri"], placements={"x": "S(1)"})
CASES["concat"] = plan([T("a", [Z, 4]), T("b", [Z, 6])], [op("concat", ["a", "b"], "y", dim=1), op("split", ["y"], ["s0", "s1"], split_size_or_sections=[3, 7], dim=1), op("slice", ["y"], "z", dim=1, start=1, end=9, step=2), op("slice", ["y"], "w", dim=0, start=0, end=5)], ["y", "s0", "s1", "z", "w"])
CASES["concat_dim0"] = plan([T("a", [Z, 4]), T("b", [3, 4])], [op("concat", ["a", "b"], "y", dim=0), op("split", ["b"], ["s0", "s1"], split_size_or_sections=[3, 0], dim=0)], ["y", "s0", "s1"], placements={"a": "S(0)"})
CASES["slice_empty"] = plan([T("x", [4, 6])], [op("slice", ["x"], "y", dim=1, start=4, end=2)], ["y"], placements={"x": "S(1)"})
CASES["rotary"] = plan([T("x", [Z, 5, 2, 4])], [op("rotary", ["x"], "y")], ["y"], placements={"x": "S(2)"})
CASES["rotary_pos"] = plan([T("x", [Z, 5, 2, 4]), T("p", [Z], "i64")], [op("rotary", ["x", "p"], "y")], ["y"])
CASES["sdpa"] = plan([T("q", [Z, 2, 5, 4]), T("k", [Z, 2, 5, 4]), T("v", [Z, 2, 5, 4])], [op("scaled_dot_product_attention", ["q", "k", "v"], "y", is_causal=True)], ["y"], placements={"q": "S(1)", "k": "S(1)", "v": "S(1)"})
CASES["sdpa_L0"] = plan([T("q", [1, 2, Z, 4]), T("k", [1, 2, 5, 4]), T("v", [1, 2, 5, 4])], [op("scaled_dot_product_attention", ["q", "k", "v"], "y")], ["y"])
CASES["sdpa_S0"] = plan([T("q", [1, 2, 5, 4]), T("k", [1, 2, Z, 4]), T("v", [1, 2, Z, 4])], [op("scaled_dot_product_attention", ["q", "k", "v"], "y")], ["y"])
CASES["factory"] = plan([], [op("arange", [], "a", end=0), op("full", [], "f", shape=[Z, 3], value=2.0), op("zeros", [], "z", shape=[3, Z]), op("ones", [], "o", shape=[Z], dtype="i64")], ["a", "f", "z", "o"])
CASES["reductions"] = plan([x], [op("sum", ["x"], "s", dim=1), op("mean", ["x"], "m", dim=-1, keepdim=True), op("max", ["x"], "mx", dim=1), op("argmax", ["x"], "am", dim=1)], ["s", "m", "mx", "am"], placements={"x": "S(0)"})
CASES["reduce_empty_sum"] = plan([x], [op("sum", ["x"], "s", dim=0), op("sum", ["x"], "all")], ["s", "all"], placements={"x": "S(0)"})
CASES["reduce_empty_mean"] = plan([x], [op("mean", ["x"], "m", dim=0)], ["m"])
CASES["cross_entropy"] = plan([T("l", [Z, 10]), T("t", [Z], "i64")], [op("cross_entropy", ["l", "t"], "s", reduction="sum"), op("cross_entropy", ["l", "t"], "n", reduction="none")], ["s", "n"], placements={"l": "S(1)"})
CASES["cross_entropy_mean"] = plan([T("l", [Z, 10]), T("t", [Z], "i64")], [op("cross_entropy", ["l", "t"], "m")], ["m"])


def merge(names):
    """One plan of the cases `names`: each case's tensors and modules are
    prefixed with its name, so the cases share nothing."""
    model = {"name": "zero_size", "inputs": [], "parameters": [], "ops": [],
             "outputs": []}
    styles, placements = {}, {}
    for name in names:
        case = CASES[name]
        rename = lambda n: f"{name}.{n}"
        for key in ("inputs", "parameters"):
            model[key] += [dict(t, name=rename(t["name"])) for t in case[key]]
        for o in case["ops"]:
            o = dict(o, inputs=[rename(i) for i in o["inputs"]],
                     module=rename(o.get("module", "op")))
            if "output" in o:
                o["output"] = rename(o["output"])
            else:
                o["outputs"] = [rename(n) for n in o["outputs"]]
            model["ops"].append(o)
        model["outputs"] += [rename(n) for n in case["outputs"]]
        styles.update({rename(m): s for m, s in case["styles"].items()})
        placements.update({rename(t): p for t, p in case["placements"].items()})
    return {"format": "dtensor.model_plan", "version": 1,
            "mesh": {"shape": [2], "names": ["tp"]}, "model": model,
            "plan": {"styles": styles, "placements": placements}}


ONLY_DTENSOR = ["embedding_v0"]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for file, names in (("zero", [n for n in CASES if n not in ONLY_DTENSOR]),
                        ("zero-only", ONLY_DTENSOR)):
        merged = merge(names)
        with open(os.path.join(out, file + ".json"), "w") as f:
            json.dump(merged, f, indent=1)
        with open(os.path.join(out, "outputs" + file[4:]), "w") as f:
            f.write(" ".join(merged["model"]["outputs"]) + "\n")


if __name__ == "__main__":
    main()

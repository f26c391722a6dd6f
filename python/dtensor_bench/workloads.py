# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmark's workloads: the models and token counts of its cases,
their plans (gen_model_plan) and what a step of each computes and moves
(FLOPs, bytes) per rank."""

import fnmatch
import json
import math
import sys

from dtensor_bench.support import module_command, run


# --- cases ---------------------------------------------------------------

# Models: gen-model-plan.py arguments. The tiny ones are the examples'
# sizes (examples/mlp.json, transformer_block.json, llama_tiny.json); the
# large ones are sized so that compute dominates their prefill.
MODELS = {
    "mlp": ["--model", "mlp", "--dim", "64", "--ffn", "128"],
    "block": ["--model", "block", "--layers", "1", "--dim", "64", "--heads",
              "4", "--ffn", "128"],
    "llama_tiny": ["--model", "llama", "--layers", "2", "--dim", "64",
                   "--heads", "4", "--ffn", "128", "--vocab", "256"],
    "mlp_large": ["--model", "mlp", "--dim", "2048", "--ffn", "8192"],
    "block_large": ["--model", "block", "--layers", "1", "--dim", "2048",
                    "--heads", "16", "--ffn", "8192"],
}

# Token counts: (name, batch, seq). Decode-like: one new token per sequence
# (seq 1); prefill-like: one long sequence.
SHAPES = {
    "decode1": (1, 1),
    "decode8": (8, 1),
    "prefill256": (1, 256),
    "prefill1024": (1, 1024),
    "prefill2048": (1, 2048),
}


# --- plans, FLOPs and bytes -----------------------------------------------------------

def generate_plan(model, shape, ranks, path):
    batch, seq = SHAPES[shape]
    run(module_command(sys.executable, "dtensor_testing.gen_model_plan") +
        MODELS[model] + ["--batch", str(batch), "--seq", str(seq),
                         "--plan", "tp", "--mesh", str(ranks), "-o", path])
    with open(path) as f:
        return json.load(f)


def style_of(plan, module):
    """The tp style (colwise/rowwise/...) the plan gives a module, if any."""
    for pattern, style in plan.get("plan", {}).get("styles", {}).items():
        if fnmatch.fnmatchcase(module, pattern):
            return style if isinstance(style, str) else style.get("style")
    return None


def gemm_list(plan, ranks, shapes_of):
    """The matrix products of one step on one rank, for
    `dtensor-bench-ceilings --gemm-list`: "BxMxNxKxT" each (T: t when the
    right operand is stored N x K, as a linear's weight). A split dim counts
    its largest shard."""
    model = plan["model"]
    shapes = shapes_of(model)

    def part(size, split):
        return -(-size // split)

    items = []
    for op in model["ops"]:
        kind, ins = op["op"], [shapes[n] for n in op["inputs"]]
        module = op.get("module", "")
        style = style_of(plan, module)
        if kind == "linear":
            m, k, n = math.prod(ins[0][:-1]), ins[0][-1], ins[1][0]
            if style == "colwise":
                n = part(n, ranks)
            elif style == "rowwise":
                k = part(k, ranks)
            items.append(f"1x{m}x{n}x{k}xt")
        elif kind in ("matmul", "bmm"):
            m, k, n = ins[0][-2], ins[0][-1], ins[1][-1]
            items.append(f"{math.prod(ins[0][:-2])}x{m}x{n}x{k}xn")
        elif kind == "scaled_dot_product_attention":
            q, kk, v = ins[:3]
            heads = q[-3] if len(q) >= 3 else 1
            if style_of(plan, module + ".wq") == "colwise":
                heads = part(heads, ranks)
            batch = math.prod(q[:-3]) * heads
            length, source, e = q[-2], kk[-2], q[-1]
            items.append(f"{batch}x{length}x{source}x{e}xt")   # q k^T
            items.append(f"{batch}x{length}x{v[-1]}x{source}xn")  # p v
    return ",".join(i for i in items if "x0x" not in i)


def count_work(plan, ranks, shapes_of):
    """FLOPs and minimal bytes of one step, in total and per rank (see the
    definitions in the module docstring)."""
    model = plan["model"]
    shapes = shapes_of(model)
    params = {p["name"]: p for p in model.get("parameters", [])}
    elt = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8}

    def numel(shape):
        return math.prod(shape) if shape else 1

    flops = flops_rank = 0.0
    weight_bytes = weight_bytes_rank = 0.0
    for op in model["ops"]:
        kind, ins = op["op"], [shapes[n] for n in op["inputs"]]
        module = op.get("module", "")
        style = style_of(plan, module)
        split = ranks if style in ("colwise", "rowwise") else 1
        if kind == "linear":
            m, k, n = numel(ins[0][:-1]), ins[0][-1], ins[1][0]
            f = 2.0 * m * n * k
        elif kind in ("matmul", "bmm"):
            m, k, n = ins[0][-2], ins[0][-1], ins[1][-1]
            f = 2.0 * numel(ins[0][:-2]) * m * n * k
        elif kind == "scaled_dot_product_attention":
            q, kk, v = ins[:3]
            batch, length, e = numel(q[:-2]), q[-2], q[-1]
            f = 2.0 * batch * length * kk[-2] * (e + v[-1])
            # Heads are split when the projections are column-parallel.
            split = ranks if style_of(plan, module + ".wq") == "colwise" else 1
        else:
            f = 0.0
        flops += f
        flops_rank += f / split
        # Weights: each read once; an embedding only its looked-up rows.
        for i, name in enumerate(op["inputs"]):
            if name not in params:
                continue
            size = numel(params[name]["shape"]) * elt[params[name]["dtype"]]
            share = split
            if kind == "embedding":
                size = numel(ins[0]) * ins[1][1] * elt[params[name]["dtype"]]
                share = ranks if style == "rowwise" else 1
            elif style == "rowwise" and i == 2:
                share = 1  # a row-parallel bias is added once, whole
            weight_bytes += size
            weight_bytes_rank += size / share
    io = sum(numel(t["shape"]) * elt[t["dtype"]] for t in model["inputs"])
    decl = {n: shapes[n] for n in model["outputs"]}
    out_dtype = {}
    for op in model["ops"]:
        name = op.get("output")
        if name in decl:
            out_dtype[name] = "i64" if op["op"] == "argmax" else "f32"
    io += sum(numel(s) * elt[out_dtype.get(n, "f32")] for n, s in decl.items())
    act, act_rank = activation_bytes(plan, ranks, shapes)
    return {"flops": flops, "flops_per_rank": flops_rank,
            "bytes": weight_bytes + io + act,
            "bytes_per_rank": weight_bytes_rank + io + act_rank,
            "weight_bytes": weight_bytes, "activation_bytes": act,
            "activation_bytes_per_rank": act_rank}


# Ops that only reinterpret their input's layout: no bytes of their own.
VIEW_OPS = ("view", "reshape")


def activation_bytes(plan, ranks, shapes):
    """Bytes of the step's intermediate tensors, in total and per rank: each
    op output that is not a step output written once and read once (f32, as
    our programs compute them), and for attention its L x S scores, written
    and read once more. A tensor counts 1/R per rank when it is split: the
    output of a column-parallel linear, attention whose query projection is
    column-parallel, and ops on a split first input (a row-parallel linear's
    output is whole after its all-reduce). Without them a dim-64 model, whose
    weights are a few KiB, passed for GEMM-bound while its steps move
    megabytes of activations."""
    model = plan["model"]
    outputs = set(model["outputs"])
    split = {}
    total = per_rank = 0.0
    for op in model["ops"]:
        kind, name = op["op"], op.get("output")
        module = op.get("module", "")
        style = style_of(plan, module)
        if kind == "linear":
            parts = ranks if style == "colwise" else 1
        elif kind == "scaled_dot_product_attention":
            parts = ranks if style_of(plan, module + ".wq") == "colwise" else 1
        else:
            parts = split.get(op["inputs"][0], 1) if op["inputs"] else 1
        split[name] = parts
        size = 0.0
        if name not in outputs and kind not in VIEW_OPS and name in shapes:
            size = 2.0 * 4 * math.prod(shapes[name])
        if kind == "scaled_dot_product_attention":
            q, k = shapes[op["inputs"][0]], shapes[op["inputs"][1]]
            size += 2.0 * 4 * math.prod(q[:-1]) * k[-2]
        total += size
        per_rank += size / parts
    return total, per_rank



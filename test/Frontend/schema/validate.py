#!/usr/bin/env python3
"""Checks docs/model-plan.schema.json: every plan given validates, and each
deliberately broken copy of the first one is rejected.

  validate.py SCHEMA PLAN.json ...

Prints `valid: FILE` per plan, then `rejected: CASE: MESSAGE` per broken
copy; exits 1 when a plan is invalid or a broken copy is accepted."""

import copy
import json
import os
import sys

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match


def op(plan, i):
    return plan["model"]["ops"][i]


def mlp_like(plan):
    """The cases below edit a plan with a linear at ops[0]."""
    assert op(plan, 0)["op"] == "linear", "the first plan must start with a linear"


def add_op(plan, entry):
    plan["model"]["ops"].append(entry)


# name -> edit of a copy of the first plan (an MLP: linear, gelu, linear).
BROKEN = {
    "unknown top-level member": lambda p: p.update(extra=1),
    "wrong format": lambda p: p.update(format="dtensor"),
    "version 2": lambda p: p.update(version=2),
    "mesh dim of size 0": lambda p: p["mesh"].update(shape=[0]),
    "repeated mesh names": lambda p: p["mesh"].update(shape=[2, 2], names=["tp", "tp"]),
    "unknown dtype": lambda p: p["model"]["inputs"][0].update(dtype="f64"),
    "negative shape": lambda p: p["model"]["inputs"][0].update(shape=[-1, 64]),
    "no outputs": lambda p: p["model"].update(outputs=[]),
    "misspelt tensor member": lambda p: p["model"]["inputs"][0].update(dtpye="f32"),
    "unknown op": lambda p: op(p, 0).update(op="conv2d"),
    "misspelt attribute": lambda p: op(p, 1).update(approximat="tanh"),
    "attribute of another op": lambda p: op(p, 0).update(dim=0),
    "bad gelu approximation": lambda p: op(p, 1).update(approximate="erf"),
    "output and outputs": lambda p: op(p, 0).update(outputs=["h"]),
    "neither output nor outputs": lambda p: op(p, 0).pop("output"),
    "linear with one input": lambda p: op(p, 0).update(inputs=["x"]),
    "two outputs of a linear": lambda p: (op(p, 0).pop("output"),
                                          op(p, 0).update(outputs=["h", "h2"])),
    "scalar add with two inputs": lambda p: add_op(
        p, {"op": "add", "inputs": ["y", "y"], "output": "z", "scalar": 1.0}),
    "add with one input, no scalar": lambda p: add_op(
        p, {"op": "add", "inputs": ["y"], "output": "z"}),
    "transpose without dim1": lambda p: add_op(
        p, {"op": "transpose", "inputs": ["y"], "output": "z", "dim0": 0}),
    "reshape with two -1": lambda p: add_op(
        p, {"op": "reshape", "inputs": ["y"], "output": "z", "shape": [-1, -1]}),
    "split without sizes": lambda p: add_op(
        p, {"op": "split", "inputs": ["y"], "outputs": ["a", "b"]}),
    "slice step 0": lambda p: add_op(
        p, {"op": "slice", "inputs": ["y"], "output": "z", "step": 0}),
    "argmax without dim": lambda p: add_op(
        p, {"op": "argmax", "inputs": ["y"], "output": "z"}),
    "mask and is_causal": lambda p: add_op(
        p, {"op": "scaled_dot_product_attention", "inputs": ["y", "y", "y", "y"],
            "output": "z", "is_causal": True}),
    "query_positions without is_causal": lambda p: add_op(
        p, {"op": "scaled_dot_product_attention", "inputs": ["y", "y", "y", "t"],
            "output": "z", "query_positions": True}),
    "query_positions with three inputs": lambda p: add_op(
        p, {"op": "scaled_dot_product_attention", "inputs": ["y", "y", "y"],
            "output": "z", "is_causal": True, "query_positions": True}),
    "rotary positions and position_offset": lambda p: add_op(
        p, {"op": "rotary", "inputs": ["y", "t"], "output": "z", "position_offset": 1}),
    "index_select without dim": lambda p: add_op(
        p, {"op": "index_select", "inputs": ["y", "t"], "output": "z"}),
    "pow without exponent": lambda p: add_op(
        p, {"op": "pow", "inputs": ["y"], "output": "z"}),
    "cast to bool": lambda p: add_op(
        p, {"op": "cast", "inputs": ["y"], "output": "z", "dtype": "bool"}),
    "where with two inputs": lambda p: add_op(
        p, {"op": "where", "inputs": ["y", "y"], "output": "z"}),
    "arange with an input": lambda p: add_op(
        p, {"op": "arange", "inputs": ["y"], "output": "z", "end": 4}),
    "arange step 0": lambda p: add_op(
        p, {"op": "arange", "inputs": [], "output": "z", "end": 4, "step": 0}),
    "zeros with a value": lambda p: add_op(
        p, {"op": "zeros", "inputs": [], "output": "z", "shape": [2], "value": 1}),
    "dropout p above 1": lambda p: add_op(
        p, {"op": "dropout", "inputs": ["y"], "output": "z", "p": 1.5}),
    "rand of an integer dtype": lambda p: add_op(
        p, {"op": "rand", "inputs": [], "output": "z", "shape": [2], "dtype": "i32"}),
    "randn without shape": lambda p: add_op(
        p, {"op": "randn", "inputs": [], "output": "z"}),
    "repeat_interleave without dim": lambda p: add_op(
        p, {"op": "repeat_interleave", "inputs": ["y"], "output": "z", "repeats": 2}),
    "bad reduction": lambda p: add_op(
        p, {"op": "cross_entropy", "inputs": ["y", "t"], "output": "z",
            "reduction": "avg"}),
    "init on an input": lambda p: p["model"]["inputs"][0].update(init={"kind": "zeros"}),
    "unknown init kind": lambda p: p["model"]["parameters"][0].update(init={"kind": "xavier"}),
    "constant init without value": lambda p: p["model"]["parameters"][0].update(
        init={"kind": "constant"}),
    "negative std": lambda p: p["model"]["parameters"][0].update(
        init={"kind": "normal", "std": -1}),
    "zeros init with a value": lambda p: p["model"]["parameters"][0].update(
        init={"kind": "zeros", "value": 0}),
    "unknown plan member": lambda p: p["plan"].update(style={}),
    "unknown style": lambda p: p["plan"]["styles"].update(fc1="column"),
    "prepare_module_input as a string": lambda p: p["plan"]["styles"].update(
        fc1="prepare_module_input"),
    "prepare_module_input without desired layouts": lambda p: p["plan"]["styles"].update(
        fc1={"style": "prepare_module_input", "input_layouts": ["S(1)"]}),
    "option of another style": lambda p: p["plan"]["styles"].update(
        fc1={"style": "colwise", "sequence_dim": 1}),
    "bad placement in a style": lambda p: p["plan"]["styles"].update(
        fc2={"style": "rowwise", "output_layouts": "Shard"}),
    "bad placement": lambda p: p["plan"].update(placements={"x": "S(x)"}),
    "bad partial kind": lambda p: p["plan"].update(placements={"x": ["P(prod)"]}),
    "mesh_dim of the wrong type": lambda p: p["plan"].update(mesh_dim=1.5),
}


# Edits that keep the plan valid.
VALID = {
    "every init kind": lambda p: [
        t.update(init=init) for t, init in zip(p["model"]["parameters"], [
            {"kind": "normal", "mean": 0, "std": 0.02}, {"kind": "zeros"},
            {"kind": "uniform", "low": -0.1, "high": 0.1},
            {"kind": "constant", "value": 0.5}])],
    "a list of one output": lambda p: op(p, 0).update(outputs=[op(p, 0).pop("output")]),
    "long placement forms": lambda p: p["plan"].update(placements={
        "x": ["Replicate()"], "h": "Shard(-1)", "y": "Partial(avg)", "a": "Replicate"}),
    "kv-cache ops": lambda p: [add_op(p, entry) for entry in [
        {"op": "index_select", "inputs": ["y", "t"], "output": "z0", "dim": 0},
        {"op": "rotary", "inputs": ["y", "t"], "output": "z1"},
        {"op": "scaled_dot_product_attention", "inputs": ["y", "y", "y", "t"],
         "output": "z2", "is_causal": True, "enable_gqa": True,
         "query_positions": True}]],
    "ops of exported models": lambda p: [add_op(p, entry) for entry in [
        {"op": "arange", "inputs": [], "output": "z0", "end": 8},
        {"op": "full", "inputs": [], "output": "z1", "shape": [2, 8], "value": -1e9},
        {"op": "zeros", "inputs": [], "output": "z2", "shape": [8], "dtype": "i64"},
        {"op": "ones", "inputs": [], "output": "z3", "shape": [8]},
        {"op": "where", "inputs": ["z2", "y", "z3"], "output": "z4"},
        {"op": "masked_fill", "inputs": ["y", "z2"], "output": "z5", "value": 0},
        {"op": "to", "inputs": ["z0"], "output": "z6", "dtype": "f32"},
        {"op": "pow", "inputs": ["y"], "output": "z7", "exponent": 2},
        {"op": "rsqrt", "inputs": ["y"], "output": "z8"},
        {"op": "unsqueeze", "inputs": ["y"], "output": "z9", "dim": 0},
        {"op": "expand", "inputs": ["z9"], "output": "z10", "shape": [3, -1, -1]},
        {"op": "squeeze", "inputs": ["z9"], "output": "z11", "dim": [0]},
        {"op": "repeat_interleave", "inputs": ["y"], "output": "z12", "repeats": 2, "dim": 1},
        {"op": "cat", "inputs": ["y", "y"], "output": "z13", "dim": -1}]],
    "random ops": lambda p: [add_op(p, entry) for entry in [
        {"op": "rand", "inputs": [], "output": "r0", "shape": [2, 8]},
        {"op": "randn", "inputs": [], "output": "r1", "shape": [8], "dtype": "bf16"},
        {"op": "rand_like", "inputs": ["y"], "output": "r2", "dtype": "f16"},
        {"op": "dropout", "inputs": ["y"], "output": "r3", "p": 0.1, "training": True},
        {"op": "bernoulli", "inputs": ["r0"], "output": "r4"},
        {"op": "bernoulli", "inputs": ["y"], "output": "r5", "p": 0.5}]],
    "styles with every option": lambda p: p["plan"]["styles"].update(
        fc1={"style": "colwise", "input_layouts": ["R"], "output_layouts": "S(-1)",
             "use_local_output": False, "mesh_dim": "tp"},
        act={"style": "sequence_parallel", "sequence_dim": 0, "use_local_output": True,
             "mesh_dim": 0}),
}


def main(argv):
    with open(argv[0]) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    ok = True
    plans = []
    for path in argv[1:]:
        with open(path) as f:
            plan = json.load(f)
        plans.append(plan)
        errors = sorted(validator.iter_errors(plan), key=lambda e: list(e.path))
        name = os.path.basename(path)
        if errors:
            ok = False
            for e in errors:
                print(f"INVALID: {name}: $.{'.'.join(map(str, e.path))}: {e.message}")
        else:
            print(f"valid: {name}")
    base = plans[0]
    mlp_like(base)
    for case, edit in VALID.items():
        plan = copy.deepcopy(base)
        edit(plan)
        error = best_match(validator.iter_errors(plan))
        if error is None:
            print(f"accepted: {case}")
        else:
            ok = False
            print(f"REJECTED: {case}: {error.message}")
    for case, edit in BROKEN.items():
        plan = copy.deepcopy(base)
        edit(plan)
        error = best_match(validator.iter_errors(plan))
        if error is None:
            ok = False
            print(f"ACCEPTED: {case}")
        else:
            path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                                 for p in error.absolute_path)
            message = error.message
            if len(message) > 100:
                message = message[:97] + "..."
            print(f"rejected: {case}: {path}: {message}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

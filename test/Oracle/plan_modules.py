# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A JSON model plan (docs/model-plan.md) as a tree of torch.nn.Modules and
its `plan.styles` as the ParallelStyles of torch.distributed.tensor.parallel,
so that PyTorch's own parallelize_module runs the model the way a user of
PyTorch DTensor would write it.

The module tree follows the ops' `module` paths. A module holding a single
`linear` (`embedding`) op on its own `<module>.weight` (and `.bias`) is a
torch.nn.Linear (torch.nn.Embedding): ColwiseParallel and RowwiseParallel
only accept those. Any other module is a PlanModule, whose forward runs its
ops (PyTorch's functions: F.linear, F.rms_norm, F.scaled_dot_product_attention,
...) and calls its children in op order. Module inputs and outputs are the
ones docs/model-plan.md defines (values read from outside, in order of
first use; values read outside or model outputs, in order of definition),
so PrepareModuleInput's positional layouts mean what the plan's do.
"""

import fnmatch

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
from torch.distributed.tensor.parallel import (ColwiseParallel,
                                               PrepareModuleInput,
                                               PrepareModuleOutput,
                                               RowwiseParallel,
                                               SequenceParallel, loss_parallel)

# The single-device interpreter of plans (PYTHONPATH: <root>/python).
from dtensor_testing import torch_model


class Unsupported(Exception):
    """A plan this translation cannot express as PyTorch modules."""


def placement(text):
    """`R`, `S(d)`, `P`, `P(kind)` (docs/model-plan.md) as a Placement."""
    if text is None:
        return None
    text = text.strip()
    if text in ("R", "Replicate", "Replicate()"):
        return Replicate()
    if text.startswith("S(") and text.endswith(")"):
        return Shard(int(text[2:-1]))
    if text in ("P", "Partial", "Partial()"):
        return Partial()
    if text.startswith("P(") and text.endswith(")"):
        return Partial(text[2:-1])
    raise Unsupported(f"placement '{text}'")


def placements(value):
    return [placement(v) for v in value] if isinstance(value, list) \
        else placement(value)


def style_of(spec):
    """A plan style (string or object) as a ParallelStyle."""
    if isinstance(spec, str):
        spec = {"style": spec}
    options = {k: v for k, v in spec.items() if k not in ("style", "mesh_dim")}
    kind = spec["style"]
    kwargs = {}
    for key, value in options.items():
        if key.endswith("layouts"):
            kwargs[key] = placements(value)
        elif key in ("use_local_output", "sequence_dim"):
            kwargs[key] = value
        else:
            raise Unsupported(f"style option '{key}'")
    factory = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel,
               "sequence_parallel": SequenceParallel,
               "prepare_module_input": PrepareModuleInput,
               "prepare_module_output": PrepareModuleOutput}.get(kind)
    if factory is None:
        raise Unsupported(f"style '{kind}'")
    return factory(**kwargs)


def tp_plan(plan, module_paths):
    """plan.styles as parallelize_module's dict: module path -> style, with
    the patterns expanded over the modules that exist (as the importer
    does; PyTorch's own fnmatch expansion gives the same)."""
    styles = plan.get("plan", {}).get("styles", {})
    result = {}
    for pattern, spec in styles.items():
        for path in module_paths:
            if path and fnmatch.fnmatchcase(path, pattern) and \
                    path.count(".") == pattern.count("."):
                result[path] = style_of(spec)
    return result


# --- ops, as PyTorch's own functions -----------------------------------------


# (global batch, this rank's batch) under data parallelism, else None: a
# user's data-parallel model code sees its own part of the batch, so the
# plan's view and reshape shapes, written for the global batch, are given
# the local one in dim 0 (set_local_batch).
_local_batch = None


def set_local_batch(global_batch, local_batch):
    global _local_batch
    _local_batch = None if global_batch == local_batch else \
        (global_batch, local_batch)


def run_op(op, values, where):
    """One op of the plan on `values`. The ops that PyTorch has as one
    function run as that function (so DTensor dispatches them as it would
    in a user's model); the rest as dtensor_testing.torch_model writes them."""
    kind = op["op"]
    ins = [values[n] for n in op["inputs"]]
    if kind in ("view", "reshape") and _local_batch and \
            op["shape"] and op["shape"][0] == _local_batch[0]:
        op = dict(op, shape=[_local_batch[1]] + list(op["shape"][1:]))
        return torch_model.run_op(op, values, where)
    if kind == "rms_norm":
        x = ins[0]
        shape = op.get("normalized_shape", [x.shape[-1]])
        shape = [shape] if isinstance(shape, int) else shape
        result = F.rms_norm(x, shape, ins[1] if len(ins) > 1 else None,
                            op.get("eps"))
    elif kind == "scaled_dot_product_attention" and \
            not op.get("query_positions", False):
        # (With query_positions, torch_model.py builds the boolean mask.)
        # enable_gqa only when set, as a user's call would pass it. DTensor
        # runs it (torch 2.15) with the KV heads sharded with the query
        # heads; when the ranks do not divide the KV heads, colwise wk/wv
        # cut heads apart and the local view to heads fails, so the oracle
        # compares with the single-device result there (models.test).
        gqa = {"enable_gqa": True} if op.get("enable_gqa", False) else {}
        result = F.scaled_dot_product_attention(
            ins[0], ins[1], ins[2], attn_mask=ins[3] if len(ins) > 3 else None,
            is_causal=op.get("is_causal", False), scale=op.get("scale"), **gqa)
    elif kind == "cross_entropy" and isinstance(ins[0], DTensor) and any(
            isinstance(p, Shard) and p.dim % ins[0].ndim == ins[0].ndim - 1
            for p in ins[0].placements):
        # Loss parallelism: PyTorch needs its context manager for
        # cross-entropy on class-sharded logits.
        with loss_parallel():
            result = F.cross_entropy(
                ins[0], ins[1].long(), reduction=op.get("reduction", "mean"),
                ignore_index=op.get("ignore_index", -100))
    else:
        return torch_model.run_op(op, values, where)
    return {op["output"]: result}


# --- the module tree ------------------------------------------------------------


def _within(module, path):
    return path == module or (module == "" and path != "") or \
        path.startswith(module + ".")


def _child(module, path):
    """The child of `module` on the way to `path` (a descendant)."""
    rest = path if module == "" else path[len(module) + 1:]
    head = rest.split(".")[0]
    return head if module == "" else module + "." + head


class PlanModule(nn.Module):
    """A module of the plan: runs its steps (ops and child calls) in order."""

    def __init__(self):
        super().__init__()
        self.steps = []       # ("op", op, index) or ("child", attr, ins, outs)
        self.inputs = []      # value names, positional
        self.outputs = []
        self.param_names = {}  # plan name -> attribute

    def forward(self, *args):
        values = dict(zip(self.inputs, args))
        for attr, name in ((a, n) for n, a in self.param_names.items()):
            values[name] = getattr(self, attr)
        for step in self.steps:
            if step[0] == "op":
                _, op, index = step
                values.update(run_op(op, values,
                                     f"$.model.ops[{index}] ({op['op']})"))
            else:
                _, attr, ins, outs = step
                result = getattr(self, attr)(*[values[n] for n in ins])
                if len(outs) == 1:
                    result = (result,)
                values.update(zip(outs, result))
        results = [values[n] for n in self.outputs]
        return results[0] if len(results) == 1 else tuple(results)


def _leaf(ops, module, params):
    """nn.Linear or nn.Embedding for a module that holds one such op on its
    own parameters, else None."""
    if len(ops) != 1:
        return None
    _, op = ops[0]
    kind, names = op["op"], op["inputs"]
    if kind == "linear" and names[1:] == [f"{module}.weight"] + (
            [f"{module}.bias"] if len(names) == 3 else []):
        out_features, in_features = params[names[1]]["shape"]
        return nn.Linear(in_features, out_features, bias=len(names) == 3,
                         dtype=torch_model.DTYPES[params[names[1]]["dtype"]])
    if kind == "embedding" and names[1:] == [f"{module}.weight"]:
        vocab, dim = params[names[1]]["shape"]
        return nn.Embedding(vocab, dim,
                            dtype=torch_model.DTYPES[params[names[1]]["dtype"]])
    return None


def build(plan):
    """The model of `plan` as (root module, {plan parameter name: module
    parameter name}, [module paths])."""
    model = plan["model"]
    ops = list(enumerate(model["ops"]))
    params = {p["name"]: p for p in model.get("parameters", [])}
    model_inputs = [t["name"] for t in model["inputs"]]
    paths = []
    state_names = {}

    def make(module, prefix, my_ops, read_outside):
        paths.append(module)
        leaf = _leaf(my_ops, module, params) if module else None
        defined = {n for _, op in my_ops
                   for n in op.get("outputs", [op.get("output")])}
        inputs = []
        for _, op in my_ops:
            for n in op["inputs"]:
                if n not in defined and n not in params and n not in inputs:
                    inputs.append(n)
        outputs = [n for _, op in my_ops
                   for n in op.get("outputs", [op.get("output")])
                   if n in read_outside]
        if leaf is not None:
            for suffix in ("weight", "bias"):
                if f"{module}.{suffix}" in params:
                    state_names[f"{module}.{suffix}"] = prefix + suffix
            return leaf, inputs, outputs
        node = PlanModule()
        node.inputs, node.outputs = inputs, outputs
        position = 0
        while position < len(my_ops):
            index, op = my_ops[position]
            where = f"$.model.ops[{index}]"
            if op.get("module", "") == module:
                for n in op["inputs"]:
                    if n in params:
                        if not n.startswith(module + ".") or \
                                "." in n[len(module) + 1:] or module == "":
                            raise Unsupported(
                                f"{where}: parameter '{n}' is read outside "
                                f"its own module")
                        attr = n[len(module) + 1:]
                        if attr not in node.param_names.values():
                            node.param_names[n] = attr
                            shape = params[n]["shape"]
                            setattr(node, attr, nn.Parameter(torch.empty(
                                shape, dtype=torch_model.DTYPES[
                                    params[n]["dtype"]]), requires_grad=False))
                            state_names[n] = prefix + attr
                node.steps.append(("op", op, index))
                position += 1
                continue
            child = _child(module, op.get("module", ""))
            group = []
            while position < len(my_ops) and _within(
                    child, my_ops[position][1].get("module", "")) and \
                    my_ops[position][1].get("module", "") != module:
                group.append(my_ops[position])
                position += 1
            if any(_within(child, o.get("module", "")) for _, o in
                   my_ops[position:] if o.get("module", "") != module):
                raise Unsupported(f"{where}: the ops of module '{child}' are "
                                  f"not contiguous")
            attr = child.split(".")[-1]
            group_defined = {n for _, o in group
                             for n in o.get("outputs", [o.get("output")])}
            outside = set(read_outside)
            for _, o in my_ops:
                if not any(o is g for _, g in group):
                    outside.update(o["inputs"])
            outside &= group_defined
            sub, sub_in, sub_out = make(child, prefix + attr + ".", group,
                                        outside | (group_defined &
                                                   set(model["outputs"])))
            node.add_module(attr, sub)
            node.steps.append(("child", attr, sub_in, sub_out))
        return node, inputs, outputs

    root, _, _ = make("", "", ops, set(model["outputs"]))
    root.inputs = model_inputs
    return root, state_names, paths

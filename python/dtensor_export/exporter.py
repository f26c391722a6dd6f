# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""export(): torch.export's graph of a module, lowered op by op to the JSON
model plan, with the module's parallelize_plan as the plan's styles."""

import dataclasses
import fnmatch
import json
import os
import tempfile

import torch
import torch.utils._pytree as pytree

from . import composites, constants
from .builder import Builder, describe, plan_dtype
from .errors import ExportError
from .lowering import LOWERINGS
from .styles import convert_style


@dataclasses.dataclass
class ExportResult:
    """The plan (a JSON-ready dict), the weights (name -> tensor, the
    module's own parameter names plus folded constants), and the example
    inputs and the module's outputs on them, by plan name."""
    plan: dict
    weights: dict
    inputs: dict
    outputs: dict


def _output_names(tree_spec, count):
    """Names of the flattened outputs from their pytree paths: `logits` for
    a Hugging Face output's field, `output` for a single tensor."""
    leaves = pytree.tree_unflatten(list(range(count)), tree_spec)
    paths, _ = pytree.tree_flatten_with_path(leaves)
    names = []
    for path, _ in paths:
        parts = []
        for key in path:
            for attr in ("key", "name", "idx"):
                if hasattr(key, attr):
                    parts.append(str(getattr(key, attr)))
                    break
        names.append(".".join(parts) or "output")
    return names


def pattern_matches(pattern, path):
    """Whether the module pattern `pattern` matches the dotted `path`
    segment by segment (fnmatch wildcards within a segment), as the
    compiler's plan patterns match."""
    segments, parts = pattern.split("."), path.split(".")
    return len(segments) == len(parts) and all(
        fnmatch.fnmatchcase(p, s) for s, p in zip(segments, parts))


def _rename(plan_ops, old, new):
    for op in plan_ops:
        op["inputs"] = [new if i == old else i for i in op["inputs"]]
        if op.get("output") == old:
            op["output"] = new
        if "outputs" in op:
            op["outputs"] = [new if o == old else o for o in op["outputs"]]


def _check_plan_keys(parallelize_plan, modules):
    for pattern in parallelize_plan:
        if not any(pattern_matches(pattern, m) for m in modules):
            raise ExportError(f"parallelize_plan[{pattern!r}] matches no "
                              "module of the model")


def export(module, example_args=(), mesh_shape=(1,), parallelize_plan=None,
           *, example_kwargs=None, mesh_names=None, plan_path=None,
           weights_path=None, name=None, next_token=False,
           training=None, data_parallel=None, recognize_composites=True,
           strict=False):
    """Exports `module` called on `example_args` / `example_kwargs` (shapes
    are fixed to theirs) for a mesh of `mesh_shape` (names `mesh_names`,
    default `tp` for 1-D), with `parallelize_plan` (module FQN pattern ->
    ColwiseParallel(...), RowwiseParallel(...), SequenceParallel(...),
    PrepareModuleInput(...), PrepareModuleOutput(...), or a Hugging Face
    tp_plan string). Writes `plan_path` and `weights_path` when given, both
    or neither written. Raises ExportError naming the op, the module and the
    source line of anything it cannot translate. `next_token` adds an output
    `next_token`, the argmax of the output `logits` over its last dim (what
    dtensor-server reads). `training` (a model plan's training section,
    docs/training.md, without or with its `loss`) makes the plan a training
    plan: a new input `targets` (token ids, the logits' shape without the
    vocabulary), the output `loss`, the mean cross-entropy of `logits`
    against it (PyTorch's causal-LM loss over already shifted targets), and
    the section. `data_parallel` (a mesh dim name) is the plan's
    data_parallel dim: inputs sharded on their first dim over it, the
    styles on the other dims. `recognize_composites` lowers the composites of
    composites.py (RMSNorm) as one op each; False lowers every op by itself."""
    example_kwargs = dict(example_kwargs or {})
    parallelize_plan = dict(parallelize_plan or {})
    mesh_shape = [int(d) for d in mesh_shape]
    if mesh_names is None:
        mesh_names = ["tp"] if len(mesh_shape) == 1 else [
            f"d{i}" for i in range(len(mesh_shape))]
    if data_parallel is not None and data_parallel not in mesh_names:
        raise ExportError(f"--data-parallel {data_parallel!r} is not a mesh "
                          f"dim name (the mesh's names are {list(mesh_names)})")
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            program = torch.export.export(module, tuple(example_args),
                                          example_kwargs, strict=strict)
            reference = module(*example_args, **example_kwargs)
    finally:
        module.train(was_training)
    flat_reference, _ = pytree.tree_flatten(reference)

    builder = Builder()
    signature = program.graph_signature
    state = program.state_dict
    tensor_constants = program.constants
    user_inputs = {}
    flat_args, _ = pytree.tree_flatten((tuple(example_args), example_kwargs))
    user_input_names = list(signature.user_inputs)
    arg_values = dict(zip(user_input_names, flat_args))
    for node in program.graph.nodes:
        if node.op != "placeholder":
            continue
        target = node.target
        if target in signature.inputs_to_parameters:
            fqn = signature.inputs_to_parameters[target]
            builder.param_nodes[node] = (fqn, state[fqn])
        elif target in signature.inputs_to_buffers:
            fqn = signature.inputs_to_buffers[target]
            value = state[fqn] if fqn in state else tensor_constants[fqn]
            builder.constants[node] = value
            node._dtensor_fqn = fqn
        elif target in getattr(signature, "inputs_to_lifted_tensor_constants",
                               {}):
            fqn = signature.inputs_to_lifted_tensor_constants[target]
            builder.constants[node] = tensor_constants[fqn]
        else:
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                continue  # a Python value, fixed by the export
            dtype = plan_dtype(val.dtype, f"input '{node.name}'")
            builder.inputs.append({"name": node.name, "shape": list(val.shape),
                                   "dtype": dtype})
            builder.define(node.name, val.shape, dtype)
            builder.names[node] = node.name
            user_inputs[node.name] = arg_values.get(node.name)

    output_node = next(n for n in program.graph.nodes if n.op == "output")
    found, replaced = (composites.find(program.graph,
                                       builder.param_nodes.__contains__)
                       if recognize_composites else ({}, set()))
    for node in program.graph.nodes:
        if node.op != "call_function":
            continue
        if constants.is_assert(node) or node in replaced:
            continue
        if node in found:
            builder.names[node] = composites.lower(builder, node,
                                                   found[node])
            continue
        if constants.is_constant_node(node, builder.constants):
            try:
                builder.constants[node] = constants.fold(node,
                                                         builder.constants)
            except Exception as error:  # noqa: BLE001 - reported with node
                raise builder.attach_traceback(node, error) from error
            continue
        lower = LOWERINGS.get(node.target)
        if lower is None:
            raise ExportError(f"{describe(node)}: no lowering to the model "
                              "plan (docs/from-pytorch.md lists the "
                              "supported ops)")
        try:
            builder.names[node] = lower(builder, node)
        except ExportError:
            raise
        except Exception as error:  # noqa: BLE001 - reported with node
            raise builder.attach_traceback(node, error) from error

    # Outputs, named by their place in the module's result.
    results = pytree.tree_leaves(output_node.args[0])
    user_outputs = results[len(results) - len(signature.user_outputs):]
    names = _output_names(program.call_spec.out_spec, len(user_outputs))
    outputs, output_values = [], {}
    for node, wanted, value in zip(user_outputs, names, flat_reference):
        if not isinstance(node, torch.fx.Node):
            continue
        current = builder.value(node, output_node)
        produced = any(op.get("output") == current for op in builder.ops)
        if produced and wanted not in builder.used and \
                current not in outputs:
            _rename(builder.ops, current, wanted)
            builder.define(wanted, builder.shape(current),
                           builder.dtype(current))
            current = wanted
        outputs.append(current)
        output_values[current] = value
    if not builder.ops:
        raise ExportError("the module computes nothing from its inputs")
    if next_token:
        if "logits" not in outputs:
            raise ExportError("next_token needs an output named 'logits'; "
                              f"the module's outputs are {outputs}")
        shape = builder.shape("logits")[:-1]
        builder.emit("argmax", ["logits"], output_node, shape, "i64",
                     out_name="next_token", dim=-1)
        outputs.append("next_token")
        output_values["next_token"] = output_values["logits"].argmax(-1)

    training_section = None
    if training is not None:
        training_section, example_targets = _add_training_loss(
            builder, outputs, output_values, output_node, training)
        user_inputs = dict(user_inputs)
        user_inputs["targets"] = example_targets

    modules = sorted({op.get("module", "") for op in builder.ops})
    holds_embedding = {
        pattern: any(op["op"] == "embedding" and
                     pattern_matches(pattern, op.get("module", ""))
                     for op in builder.ops)
        for pattern in parallelize_plan}
    _check_plan_keys(parallelize_plan, modules)
    styles = {}
    for pattern, style in parallelize_plan.items():
        converted = convert_style(pattern, style, holds_embedding.get)
        if converted is not None:
            styles[pattern] = (converted["style"] if len(converted) == 1
                               else converted)

    model = {"inputs": builder.inputs, "parameters": builder.parameters,
             "ops": builder.ops, "outputs": outputs}
    if training_section is not None:
        model["training"] = training_section
    if name:
        model = {"name": name, **model}
    plan = {"format": "dtensor.model_plan", "version": 1,
            "mesh": {"shape": mesh_shape, "names": list(mesh_names)},
            "model": model}
    if data_parallel is not None:
        plan["plan"] = {"data_parallel": data_parallel}
    if styles:
        plan.setdefault("plan", {})["styles"] = styles
    result = ExportResult(plan=plan, weights=builder.weights,
                          inputs=user_inputs, outputs=output_values)
    if plan_path or weights_path:
        write(result, plan_path, weights_path)
    return result


def _add_training_loss(builder, outputs, output_values, node, training):
    """The input `targets`, the output `loss` (mean cross-entropy of
    `logits`) and the training section with that loss; the example
    targets (seeded random ids)."""
    if not isinstance(training, dict):
        raise ExportError("the training section must be a JSON object")
    if "logits" not in outputs:
        raise ExportError("a training plan needs an output named 'logits'; "
                          f"the module's outputs are {outputs}")
    if "targets" in builder.used or "loss" in builder.used:
        raise ExportError("the model already has a value named 'targets' or "
                          "'loss'")
    shape = builder.shape("logits")
    vocabulary, tokens = shape[-1], 1
    for size in shape[:-1]:
        tokens *= size
    builder.inputs.append({"name": "targets", "shape": shape[:-1],
                           "dtype": "i64"})
    builder.define("targets", shape[:-1], "i64")
    flat = builder.emit("view", ["logits"], node, [tokens, vocabulary],
                        builder.dtype("logits"), out_name="loss.logits",
                        shape=[tokens, vocabulary])
    flat_targets = builder.emit("view", ["targets"], node, [tokens], "i64",
                                out_name="loss.targets", shape=[tokens])
    builder.emit("cross_entropy", [flat, flat_targets], node, [],
                 builder.dtype("logits"), out_name="loss")
    outputs.append("loss")
    generator = torch.Generator().manual_seed(1)
    targets = torch.randint(0, vocabulary, shape[:-1], generator=generator)
    logits = output_values["logits"]
    output_values["loss"] = torch.nn.functional.cross_entropy(
        logits.reshape(tokens, vocabulary).float(), targets.reshape(-1))
    section = dict(training)
    if section.setdefault("loss", "loss") != "loss":
        raise ExportError(f"the training section's loss is "
                          f"'{section['loss']}'; an exported plan's loss is "
                          "'loss' (leave it out)")
    # Buffers and constant tables (rotary cos/sin) are parameters of the
    # plan but not of the module: PyTorch does not train them.
    buffers = sorted(set(builder.constant_parameters.values()))
    if buffers:
        given = section.get("frozen", [])
        given = [given] if isinstance(given, str) else list(given)
        section["frozen"] = given + [glob_escape(name) for name in buffers
                                     if glob_escape(name) not in given]
    return section, targets


def glob_escape(name):
    """`name` as a glob that matches only itself ([ and the wildcards in
    brackets)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def write(result, plan_path, weights_path):
    """Writes the plan and the weights: both, or on failure neither (each
    goes to a temporary file first, renamed into place at the end)."""
    from safetensors.torch import save_file

    if not plan_path or not weights_path:
        raise ExportError("give both a plan path and a weights path")
    temporaries = []
    try:
        for path, writer in ((weights_path, lambda p: save_file(
                {k: v.detach().clone().contiguous()
                 for k, v in result.weights.items()}, p)),
                             (plan_path, lambda p: _write_json(result.plan,
                                                               p))):
            folder = os.path.dirname(os.path.abspath(path))
            handle, temporary = tempfile.mkstemp(dir=folder,
                                                 prefix=".dtensor-export-")
            os.close(handle)
            temporaries.append((temporary, path))
            writer(temporary)
        for temporary, path in temporaries:
            os.replace(temporary, path)
    finally:
        for temporary, _ in temporaries:
            if os.path.exists(temporary):
                os.unlink(temporary)


def _write_json(plan, path):
    with open(path, "w") as f:
        json.dump(plan, f, indent=1)
        f.write("\n")

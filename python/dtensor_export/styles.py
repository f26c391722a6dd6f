# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch's parallel styles (torch.distributed.tensor.parallel) and
Hugging Face's `tp_plan` strings as model-plan styles (docs/model-plan.md,
"Styles")."""

from .errors import ExportError


def placement_string(placement, where):
    """`Replicate()` -> "R", `Shard(d)` -> "S(d)", `Partial(op)` -> "P(op)";
    None stays None (a skipped input or output)."""
    from torch.distributed.tensor import Partial, Replicate, Shard

    if placement is None:
        return None
    if isinstance(placement, Replicate):
        return "R"
    if isinstance(placement, Shard):
        return f"S({placement.dim})"
    if isinstance(placement, Partial):
        op = placement.reduce_op
        return "P" if op == "sum" else f"P({op})"
    raise ExportError(f"{where}: placement {placement!r} is not Replicate, "
                      "Shard or Partial")


def _layouts(value, where):
    if value is None:
        return []
    if not isinstance(value, (tuple, list)):
        value = (value,)
    return [placement_string(p, where) for p in value]


# Hugging Face's tp_plan strings (transformers' base_model_tp_plan and
# _tp_plan) that mean a style of the model plan; "replicated_with_grad_
# allreduce" only matters for training and means no style at all.
_HF_STRINGS = {
    "colwise": {"style": "colwise"},
    "rowwise": {"style": "rowwise"},
    "colwise_gather_output": {"style": "colwise", "output_layouts": ["R"]},
    "colwise_rep": {"style": "colwise", "output_layouts": ["R"]},
    "rowwise_split_input": {"style": "rowwise", "input_layouts": ["R"]},
    "embedding_rowwise": {"style": "rowwise"},
    "rowwise_rep": {"style": "rowwise", "input_layouts": ["R"]},
    "sequence_parallel": {"style": "sequence_parallel"},
    "replicated_with_grad_allreduce": None,
}

# What the model plan assumes when a style leaves a layout out; the
# exporter writes a layout only where it differs.
_DEFAULT_INPUT = {"colwise": ["R"], "rowwise": ["S(-1)"]}
_DEFAULT_OUTPUT = {"colwise": ["S(-1)"], "rowwise": ["R"]}


def convert_style(pattern, style, holds_embedding):
    """One parallelize_plan value as a model-plan style (a dict), or None
    for a style that changes nothing at inference. `holds_embedding(pattern)`
    says whether the modules the pattern matches look up an embedding."""
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   PrepareModuleInput,
                                                   PrepareModuleOutput,
                                                   RowwiseParallel,
                                                   SequenceParallel)

    where = f"parallelize_plan[{pattern!r}]"
    if isinstance(style, str):
        if style not in _HF_STRINGS:
            raise ExportError(
                f"{where}: unknown style string {style!r}; known: "
                + ", ".join(sorted(_HF_STRINGS)))
        converted = _HF_STRINGS[style]
        return dict(converted) if converted is not None else None
    if isinstance(style, (ColwiseParallel, RowwiseParallel)):
        kind = "colwise" if isinstance(style, ColwiseParallel) else "rowwise"
        result = {"style": kind}
        inputs = _layouts(style.input_layouts, where)
        outputs = _layouts(style.output_layouts, where)
        default_in = _DEFAULT_INPUT[kind]
        if kind == "rowwise" and holds_embedding(pattern):
            # PyTorch keeps Shard(-1) as the default input layout of a
            # rowwise embedding too, then redistributes the ids to
            # Replicate: in the global view both say the same ids.
            default_in = ["S(-1)"] if inputs == ["S(-1)"] else ["R"]
        if inputs != default_in:
            result["input_layouts"] = inputs
        if outputs != _DEFAULT_OUTPUT[kind]:
            result["output_layouts"] = outputs
        if not style.use_local_output:
            result["use_local_output"] = False
        return result
    if isinstance(style, SequenceParallel):
        (shard,) = style.sequence_sharding
        return {"style": "sequence_parallel", "sequence_dim": shard.dim}
    if isinstance(style, PrepareModuleInput):
        if style.input_kwarg_layouts or style.desired_input_kwarg_layouts:
            raise ExportError(
                f"{where}: PrepareModuleInput with input_kwarg_layouts is not "
                "supported; the model plan names a module's inputs by position")
        return {"style": "prepare_module_input",
                "input_layouts": _layouts(style.input_layouts, where),
                "desired_input_layouts":
                    _layouts(style.desired_input_layouts, where)}
    if isinstance(style, PrepareModuleOutput):
        return {"style": "prepare_module_output",
                "output_layouts": _layouts(style.output_layouts, where),
                "desired_output_layouts":
                    _layouts(style.desired_output_layouts, where)}
    raise ExportError(f"{where}: {type(style).__name__} is not a style the "
                      "model plan has (ColwiseParallel, RowwiseParallel, "
                      "SequenceParallel, PrepareModuleInput, "
                      "PrepareModuleOutput, or a Hugging Face tp_plan string)")

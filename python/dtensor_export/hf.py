# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hugging Face models: the tensor-parallel plan their users apply, as
PyTorch style objects, and models built from a config (random weights, no
download) or from a local folder."""

from .errors import ExportError

# GPT-2 declares no tp_plan; this is the one its users write (Megatron's
# split of the fused QKV and MLP projections, stored as Conv1D [in, out]).
_GPT2_PLAN = {
    "transformer.h.*.attn.c_attn": "colwise",
    "transformer.h.*.attn.c_proj": "rowwise",
    "transformer.h.*.mlp.c_fc": "colwise",
    "transformer.h.*.mlp.c_proj": "rowwise",
}


def _style(name):
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   RowwiseParallel)

    if name == "colwise":
        return ColwiseParallel()
    if name == "rowwise":
        return RowwiseParallel()
    if name == "colwise_gather_output":
        return ColwiseParallel(output_layouts=Replicate())
    if name == "embedding_rowwise":
        return RowwiseParallel(input_layouts=Replicate())
    if name == "rowwise_split_input":
        return RowwiseParallel(input_layouts=Replicate())
    if name == "replicated_with_grad_allreduce":
        return None
    raise ExportError(f"Hugging Face tp_plan style {name!r} has no "
                      "PyTorch style the exporter knows")


def tp_plan(model):
    """The model's tensor-parallel plan as `parallelize_module` takes it:
    transformers' own `base_model_tp_plan` (q/k/v/gate/up colwise,
    o/down rowwise) under the base model's prefix and `_tp_plan` (the LM head
    colwise, gathered), plus the token embedding rowwise (vocab parallel,
    torchtitan's `RowwiseParallel(input_layouts=Replicate())`). GPT-2, which
    declares none, gets the same split of its Conv1D projections."""
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   RowwiseParallel)

    config = model.config
    prefix = getattr(model, "base_model_prefix", "") or ""
    base_plan = getattr(config, "base_model_tp_plan", None)
    if base_plan:
        entries = {(f"{prefix}.{k}" if prefix else k): v
                   for k, v in base_plan.items()}
    elif config.model_type == "gpt2":
        entries = dict(_GPT2_PLAN)
    else:
        raise ExportError(f"model type {config.model_type!r} declares no "
                          "tp_plan; pass parallelize_plan yourself")
    plan = {}
    for pattern, name in entries.items():
        style = _style(name)
        if style is not None:
            plan[pattern] = style
    embeddings = model.get_input_embeddings()
    for name, module in model.named_modules():
        if module is embeddings:
            plan[name] = RowwiseParallel(input_layouts=Replicate())
    # The model's own plan (transformers fills it from the classes' plans,
    # embedding and head included) wins over the entries above.
    for pattern, name in (getattr(model, "_tp_plan", None) or {}).items():
        style = _style(name)
        if style is None:
            plan.pop(pattern, None)
        else:
            plan[pattern] = style
    if "lm_head" not in plan and hasattr(model, "lm_head"):
        plan["lm_head"] = ColwiseParallel(output_layouts=Replicate())
    return plan


def model_from_config(path_or_config, seed=0, overrides=None):
    """A causal LM with random weights from a config.json (or a dict with
    `model_type`), in eval mode, attention through SDPA."""
    import json

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    if isinstance(path_or_config, dict):
        values = dict(path_or_config)
    else:
        with open(path_or_config) as f:
            values = json.load(f)
    values.update(overrides or {})
    if "model_type" not in values:
        raise ExportError("the config has no 'model_type'")
    model_type = values.pop("model_type")
    config = AutoConfig.for_model(model_type, **values)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config,
                                             attn_implementation="sdpa")
    return model.eval()


def model_from_folder(folder):
    """A causal LM saved with save_pretrained in a local folder."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(
        folder, local_files_only=True, attn_implementation="sdpa").eval()

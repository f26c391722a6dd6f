# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Exports a PyTorch module and its tensor-parallel plan to a dtensor model
plan (JSON) and a safetensors file of its weights.

    from dtensor_export import export
    result = export(model, (ids,), mesh_shape=(2,),
                    parallelize_plan={"layers.*.attn.q_proj": ColwiseParallel()},
                    plan_path="model.json", weights_path="model.safetensors")

docs/from-pytorch.md is the guide; docs/model-plan.md the format.
"""

from .errors import ExportError
from .exporter import ExportResult, export

__all__ = ["ExportError", "ExportResult", "export"]

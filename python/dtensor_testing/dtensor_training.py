#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The PyTorch DTensor oracle of the training checks
(dtensor_testing.check_training --dtensor-peer): a gen_model_plan Llama as
dtensor_testing.llama's nn.Module, trained on a (dp, tp) DeviceMesh of
gloo processes the way a user of PyTorch 2 writes it:

- tensor parallelism over tp with parallelize_module: wq/wk/wv and
  w1/w3 ColwiseParallel, wo and w2 RowwiseParallel, the embedding
  RowwiseParallel(input_layouts=Replicate()), the output
  ColwiseParallel(output_layouts=Shard(-1), use_local_output=False) and the
  cross-entropy under loss_parallel() (the plan's loss parallelism);
- data parallelism over dp: DistributedDataParallel on the dp mesh dim
  around a module whose forward returns the logits (DDP reduces the
  gradients only of the forward calls that go through it); each dp rank
  trains on its slice of the batch and the loss is the mean over the dp
  ranks. (The composable replicate() around the tensor-parallel model gave
  losses 1e-3 off the one-device run's after the first update on dp2 x
  tp2 with PyTorch 2.15; DistributedDataParallel matches to 1e-7.)
- with the plan's `fully_shard` units instead: FSDP2's fully_shard on the
  dp mesh dim over each unit's module (innermost first) and the root (the
  logits module), after parallelize_module on tp (2-D FSDP + TP); with two
  data-parallel dims (replicate, shard) on that 2-D mesh: HSDP;
- the optimizer of the plan's training section (torch.optim.SGD or AdamW
  with its groups), a LambdaLR with its schedule, and clip_grad_norm_'s
  norm over the DTensor and the plain gradients together (clip_grad_norm_
  itself refuses the mix that parallelize_module leaves: the norms'
  weights stay plain tensors).

Each step runs under CommDebugMode; rank 0 returns every step's loss, the
collectives of each step by kind, and the final parameters (whole).
"""

import json
import os
import tempfile


def _optimizer(training, model, factor):
    """The one-device loop's optimizer (check_training.torch_optimizer:
    the same groups by plan name) and a LambdaLR with the schedule."""
    import torch
    from dtensor_testing.check_training import torch_optimizer
    optimizer = torch_optimizer(
        training, {_name(n): p for n, p in model.named_parameters()})
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda k: factor(k + 1))
    return optimizer, scheduler


def clip_gradients(parameters, max_norm):
    """clip_grad_norm_'s scaling over gradients that may mix DTensors (on
    different meshes: FSDP's dp, FSDP + TP's dp x tp) and plain tensors:
    one norm over all of them, each gradient scaled by one float."""
    import torch
    grads = [p.grad for p in parameters if p.grad is not None]
    total = 0.0
    for g in grads:
        norm = torch.linalg.vector_norm(g)
        if hasattr(norm, "full_tensor"):
            norm = norm.full_tensor()
        total += float(norm) ** 2
    coefficient = min(1.0, max_norm / (total ** 0.5 + 1e-6))
    for g in grads:
        g.mul_(coefficient)


def _parallelize(model, mesh):
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   RowwiseParallel,
                                                   parallelize_module)
    for layer in model.layers:
        parallelize_module(layer, mesh, {
            "attention.wq": ColwiseParallel(),
            "attention.wk": ColwiseParallel(),
            "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(),
            "feed_forward.w1": ColwiseParallel(),
            "feed_forward.w2": RowwiseParallel(),
            "feed_forward.w3": ColwiseParallel(),
        })
    parallelize_module(model, mesh, {
        "tok_embeddings": RowwiseParallel(input_layouts=Replicate()),
        "output": ColwiseParallel(output_layouts=Shard(-1),
                                  use_local_output=False),
    })
    return model


def logits_module(model):
    """`model` whose forward returns the logits (the Llama's stops at the
    argmax): the module that data parallelism wraps, so that its forward
    runs through DDP's."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, tokens):
            h = model.tok_embeddings(tokens)
            for layer in model.layers:
                h = layer(h, model.cos, model.sin)
            return model.output(model.norm(h))

    return Logits()


def _fully_shard(model, patterns, mesh):
    """FSDP2's fully_shard over the modules of the Llama inside `model` (the
    logits module) that `patterns` match segment by segment, innermost
    first, then over `model` (the root unit, "")."""
    from torch.distributed.fsdp import fully_shard

    from dtensor_export.exporter import pattern_matches
    if "" not in patterns:
        raise ValueError("the PyTorch DTensor peer needs the root unit \"\" "
                         "in fully_shard")
    inner = model.model
    units = [name for name, _ in inner.named_modules() if name and any(
        pattern_matches(p, name) for p in patterns if p)]
    for name in sorted(units, key=lambda n: -n.count(".")):
        fully_shard(inner.get_submodule(name), mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def _name(name):
    """A parameter's name in the plan: without the wrappers' prefixes."""
    for prefix in ("module.", "model."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name


def _worker(rank, world, task, store, result_path):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.debug import CommDebugMode
    from torch.distributed.tensor.parallel import loss_parallel

    from dtensor_testing import llama
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank,
                            world_size=world)
    dp_shape, tp = task["dp"], task["tp"]
    # One data-parallel dim, or two (replicate, shard): FSDP2's fully_shard
    # on a 2-D mesh is HSDP.
    dp_names = ("dp",) if len(dp_shape) == 1 else ("replicate", "shard")
    mesh = init_device_mesh("cpu", tuple(dp_shape) + (tp,),
                            mesh_dim_names=dp_names + ("tp",))
    dp_mesh = mesh[dp_names] if len(dp_names) > 1 else mesh["dp"]
    flat_dp = dp_mesh._flatten() if len(dp_names) > 1 else dp_mesh
    dp = flat_dp.size()
    plan = task["plan"]
    cfg = llama.model_config(plan)
    model = llama.build_model(cfg)
    weights = {k: torch.tensor(v) for k, v in task["weights"].items()}
    model.load_state_dict(weights, strict=True)
    model.train()
    if tp > 1:
        model = _parallelize(model, mesh["tp"])
    model = logits_module(model)
    units = plan.get("plan", {}).get("fully_shard")
    if units and dp > 1:
        model = _fully_shard(model, units, dp_mesh)
    elif dp > 1:
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model, device_mesh=flat_dp)
    training = plan["model"]["training"]
    optimizer, scheduler = _optimizer(training, model, task["factor"])
    accumulation = training.get("accumulation_steps", 1)
    dp_rank = flat_dp.get_local_rank()
    tokens_all = torch.tensor(task["batches"]["tokens"])
    targets_all = torch.tensor(task["batches"]["targets"])
    rows = tokens_all.shape[1] // dp
    losses, comms = [], []
    for call in range(tokens_all.shape[0]):
        tokens = tokens_all[call, dp_rank * rows:(dp_rank + 1) * rows]
        targets = targets_all[call, dp_rank * rows:(dp_rank + 1) * rows]
        if call % accumulation == 0:
            optimizer.zero_grad()
        with CommDebugMode() as comm:
            logits = model(tokens)
            with loss_parallel():
                loss = F.cross_entropy(
                    logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
                (loss / accumulation).backward()
        value = loss.full_tensor() if hasattr(loss, "full_tensor") else loss
        value = value.detach().clone()
        dist.all_reduce(value, op=dist.ReduceOp.SUM, group=flat_dp.get_group())
        losses.append(value.item() / dp)
        comms.append({str(k): v for k, v in comm.get_comm_counts().items()})
        if (call + 1) % accumulation:
            continue
        if training.get("clip_grad_norm") is not None:
            clip_gradients(list(model.parameters()),
                           training["clip_grad_norm"])
        optimizer.step()
        scheduler.step()
    final = {}
    for name, parameter in model.named_parameters():
        value = parameter.detach()
        if hasattr(value, "full_tensor"):
            value = value.full_tensor()
        final[_name(name)] = value.tolist()
    dist.destroy_process_group()
    if rank == 0:
        with open(result_path, "w") as f:
            json.dump({"losses": losses, "comms": comms, "final": final}, f)


def train(plan, weights, batches, dp, tp, factor):
    """Trains with PyTorch DTensor on dp x tp gloo ranks (dp: the sizes of
    the data-parallel dims, one, or two for HSDP: replicate, shard); returns
    rank 0's {"losses", "comms", "final"}. `weights` and `batches` are numpy
    arrays (batches: "tokens" and "targets", [calls, batch, ...]; the batch a
    multiple of the data-parallel ranks); `factor(t)` the schedule."""
    import math

    import torch.multiprocessing as mp
    dp = list(dp)
    world = math.prod(dp) * tp
    steps = max(batches["tokens"].shape[0], 1)
    task = {"plan": plan, "dp": dp, "tp": tp,
            "weights": {k: v.tolist() for k, v in weights.items()},
            "batches": {k: v.tolist() for k, v in batches.items()},
            "factor": _Factor([factor(t) for t in range(1, steps + 2)])}
    with tempfile.TemporaryDirectory(prefix="dtensor_training.") as tmp:
        path = os.path.join(tmp, "result.json")
        mp.spawn(_worker, args=(world, task, os.path.join(tmp, "store"),
                                path), nprocs=world, join=True)
        with open(path) as f:
            return json.load(f)


class _Factor:
    """The schedule's factors by step, picklable for the spawned ranks."""

    def __init__(self, values):
        self.values = values

    def __call__(self, step):
        return self.values[min(step, len(self.values)) - 1]

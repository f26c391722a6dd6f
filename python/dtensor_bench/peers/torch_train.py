#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch training steps for the training table of the benchmarks
(dtensor_bench.training): the Llama of a dtensor_testing.gen_model_plan
plan as an nn.Module (dtensor_testing.llama), one training step = forward
to the logits, cross-entropy against the plan's `targets`, backward,
clip_grad_norm_(1.0) and AdamW(lr 1e-3), timed as the median of --iters
steps after --warmup.

  python3 -m dtensor_bench.peers.torch_train PLAN.json [--dp D] [--tp T]
      [--plain] [--mode eager|compiled] [--threads N] [--warmup W]
      [--iters I] [--seed S]

--plain: one process, no torch.distributed (what "PyTorch eager" and
"torch.compile on one process" mean in the table). Otherwise D x T
processes (torch.multiprocessing, gloo) on a (dp, tp) DeviceMesh: the
standard tensor-parallel plan over tp (dtensor_bench.peers.torch_dtensor's
parallelize, the output gathered to every rank) and, over dp,
DistributedDataParallel on the dp mesh dim around a module returning the
logits (dtensor_testing.dtensor_training.logits_module), each rank a
slice of the batch; clip_grad_norm_ is computed
over the DTensor and the plain gradients together (clip()). `compiled` wraps the model in torch.compile. Prints one JSON line:
{"median_ms", "min_ms", "iters", "peak_rss_bytes" (the largest rank's
peak resident memory), "ranks", "mode"} or {"error": ...}.
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time

from dtensor_testing import llama


def clip(parameters, max_norm):
    """clip_grad_norm_ over parameters that may mix DTensors (the
    tensor-parallel ones) and plain tensors (the replicated norms, which
    parallelize_module leaves alone and clip_grad_norm_ refuses to mix)."""
    from dtensor_testing.dtensor_training import clip_gradients
    clip_gradients(parameters, max_norm)


def train_steps(plan, model, tokens, targets, task, barrier):
    import torch
    import torch.nn.functional as F
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = model
    if task["mode"] == "compiled":
        forward = torch.compile(model)

    def step():
        barrier()
        start = time.perf_counter()
        optimizer.zero_grad()
        logits = forward(tokens)
        if hasattr(logits, "full_tensor"):
            logits = logits.full_tensor()
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               targets.reshape(-1))
        loss.backward()
        clip(model.parameters(), 1.0)
        optimizer.step()
        loss.item()
        return time.perf_counter() - start

    for _ in range(task["warmup"]):
        step()
    times = sorted(step() for _ in range(task["iters"]))
    return {"median_ms": 1e3 * times[len(times) // 2],
            "min_ms": 1e3 * times[0], "iters": task["iters"]}


def build(plan, seed):
    cfg = llama.model_config(plan)
    tensors = llama.random_tensors(plan, seed)
    model = llama.build_model(cfg)
    params = {p["name"] for p in plan["model"].get("parameters", [])}
    model.load_state_dict({n: t for n, t in tensors.items() if n in params},
                          strict=True)
    model.train()
    return cfg, model, tensors


def logits_model(model):
    from dtensor_testing.dtensor_training import logits_module
    return logits_module(model)


def worker(rank, world, task, store, result_path):
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from dtensor_bench.peers.torch_dtensor import parallelize
    torch.set_num_threads(task["threads"])
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank,
                            world_size=world)
    try:
        mesh = init_device_mesh("cpu", (task["dp"], task["tp"]),
                                mesh_dim_names=("dp", "tp"))
        with open(task["plan"]) as f:
            plan = json.load(f)
        cfg, model, tensors = build(plan, task["seed"])
        if task["tp"] > 1:
            model = parallelize(model, cfg, mesh["tp"])
        # This rank's slice of the batch over dp.
        dp_rank = mesh["dp"].get_local_rank()
        rows = tensors["tokens"].shape[0] // task["dp"]
        tokens = tensors["tokens"][dp_rank * rows:(dp_rank + 1) * rows]
        targets = tensors["targets"][dp_rank * rows:(dp_rank + 1) * rows]
        # The module whose forward returns the logits, wrapped by DDP.
        model = logits_model(model)
        if task["dp"] > 1:
            from torch.nn.parallel import DistributedDataParallel
            model = DistributedDataParallel(model, device_mesh=mesh["dp"])
        result = train_steps(plan, model, tokens, targets, task, dist.barrier)
        peak = torch.tensor([resource.getrusage(
            resource.RUSAGE_SELF).ru_maxrss * 1024], dtype=torch.int64)
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
        result["peak_rss_bytes"] = int(peak.item())
    except Exception as e:  # noqa: BLE001 (reported in the table)
        result = {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
    finally:
        dist.destroy_process_group()
    if rank == 0:
        with open(result_path, "w") as f:
            json.dump(result, f)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("plan")
    p.add_argument("--dp", type=int, default=1)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--plain", action="store_true")
    p.add_argument("--mode", choices=["eager", "compiled"], default="eager")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    task = {"plan": a.plan, "dp": a.dp, "tp": a.tp, "mode": a.mode,
            "threads": a.threads, "warmup": a.warmup, "iters": a.iters,
            "seed": a.seed}
    world = a.dp * a.tp
    if a.plain:
        import torch
        torch.set_num_threads(a.threads)
        with open(a.plan) as f:
            plan = json.load(f)
        _, model, tensors = build(plan, a.seed)
        model = logits_model(model)
        try:
            result = train_steps(plan, model, tensors["tokens"],
                                 tensors["targets"], task, lambda: None)
            result["peak_rss_bytes"] = resource.getrusage(
                resource.RUSAGE_SELF).ru_maxrss * 1024
        except Exception as e:  # noqa: BLE001
            result = {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
    else:
        import torch.multiprocessing as mp
        with tempfile.TemporaryDirectory(prefix="torch_train.") as tmp:
            path = os.path.join(tmp, "result.json")
            mp.spawn(worker, args=(world, task, os.path.join(tmp, "store"),
                                   path), nprocs=world, join=True)
            with open(path) as f:
                result = json.load(f)
    result.update({"ranks": 1 if a.plain else world, "mode": a.mode,
                   "plain": a.plain, "threads": a.threads})
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

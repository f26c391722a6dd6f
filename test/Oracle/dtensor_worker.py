# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One rank of PyTorch DTensor on gloo, running the jobs of a JSON file
(written by oracle.py) in order, then exiting.

  dtensor_worker.py JOBS.json --rank R --world W --store FILE

Each job names its mesh; the rank writes what it is asked to under the
job's `out` folder. Job kinds:

- "model": the plan's model as torch.nn.Modules (plan_modules.py),
  parallelized with parallelize_module over the plan's tensor-parallel mesh
  dim and the plan's styles; inputs are each rank's shards
  (distribute_tensor(...).to_local() of the plan's input placements, the
  batch sharded over the data-parallel dim); one forward step under
  torch.no_grad() and CommDebugMode. Rank 0 writes every output's global
  value (`<name>.npy`: full_tensor() of a DTensor; a local tensor gathered
  by the placement the plan gives it) and `comm.json` (CommDebugMode's
  counts). With "compile": the same model under torch.compile (Inductor).
- "redistribute": for each case, the global tensor (seeded) distributed in
  its source placements (a Partial source through Replicate ->
  redistribute), written as each rank's `in_<i>.<rank>.npy`, and
  `redistribute(mesh, target).to_local()` as `exp_<i>.<rank>.npy`.

When PyTorch raises while running a model, the rank writes
`refused.<rank>.txt` (the error's first line: DTensor cannot run it); any
other failure writes `error.<rank>.txt` (the traceback). Either way the
rank goes on with the next job after a barrier.
"""

import argparse
import json
import os
import sys
import traceback

import numpy as np
import torch
import torch.distributed as dist
from safetensors.numpy import load_file
from torch.distributed._functional_collectives import AsyncCollectiveTensor
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
from torch.distributed.tensor import distribute_tensor
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import parallelize_module

import plan_modules
from plan_modules import placement, torch_model

class Refused(Exception):
    """PyTorch DTensor raised while running the model itself (not this
    harness): the driver compares with the single-device result instead."""


def mesh_of(job):
    shape = job["mesh"]
    names = job.get("mesh_names") or [f"d{i}" for i in range(len(shape))]
    return init_device_mesh("cpu", tuple(shape), mesh_dim_names=tuple(names))


def mesh_dim_index(value, names, default):
    if value is None:
        return default
    return names.index(value) if isinstance(value, str) else value


def activation_placements(plan, mesh_names, tp, dp, name, ndim, default_tp):
    """Full-mesh placements of a model input or output: the plan's
    placement over the tp dim (else `default_tp`), Shard(0) over the
    data-parallel dim when the tensor has a dim."""
    result = [Replicate()] * len(mesh_names)
    given = plan.get("plan", {}).get("placements", {}).get(name)
    if isinstance(given, list):
        return [placement(p) for p in given]
    if given is not None:
        result[tp] = placement(given)
    elif default_tp is not None:
        result[tp] = default_tp
    if dp is not None and ndim > 0:
        result[dp] = Shard(0)
    return result


def gather_local(local, mesh, full_placements, global_shape):
    """The global tensor of a plain (local) tensor whose layout over `mesh`
    is `full_placements` (Shard and Replicate): every rank's shard,
    reassembled where torch.chunk put it. Every rank of the world calls it."""
    pieces = [None] * dist.get_world_size()
    dist.all_gather_object(pieces, local.contiguous())
    shape = list(mesh.mesh.shape)
    result = torch.zeros(global_shape, dtype=local.dtype)
    for position, rank in enumerate(mesh.mesh.flatten().tolist()):
        coord = np.unravel_index(position, shape)
        start = [0] * len(global_shape)
        size = list(global_shape)
        for mesh_dim, p in enumerate(full_placements):
            if isinstance(p, Shard):
                d = p.dim % len(global_shape)
                sizes = [c.shape[0] for c in
                         torch.empty(size[d]).chunk(shape[mesh_dim])]
                sizes += [0] * (shape[mesh_dim] - len(sizes))
                start[d] += sum(sizes[:coord[mesh_dim]])
                size[d] = sizes[coord[mesh_dim]]
            elif not isinstance(p, Replicate):
                raise ValueError(f"a local output placed {p}")
        index = tuple(slice(b, b + n) for b, n in zip(start, size))
        result[index] = pieces[rank]
    return result


def run_model(job, rank):
    plan = json.load(open(job["plan"]))
    mesh = mesh_of(job)
    names = list(mesh.mesh_dim_names)
    plan_opts = plan.get("plan", {})
    tp = mesh_dim_index(plan_opts.get("mesh_dim"), names,
                        names.index("tp") if "tp" in names else len(names) - 1)
    dp = mesh_dim_index(plan_opts.get("data_parallel"), names, None)
    tp_mesh = mesh[names[tp]] if len(names) > 1 else mesh

    model, state_names, paths = plan_modules.build(plan)
    weights = load_file(job["weights"]) if job.get("weights") else {}
    with torch.no_grad():
        for plan_name, attr in state_names.items():
            target = model.get_parameter(attr)
            target.copy_(torch.from_numpy(weights[plan_name]).to(target.dtype))
    model.eval()
    parallelize_module(model, tp_mesh, plan_modules.tp_plan(plan, paths))

    args = []
    for decl in plan["model"]["inputs"]:
        value = torch.from_numpy(np.load(job["inputs"][decl["name"]])).to(
            torch_model.DTYPES[decl["dtype"]])
        where = activation_placements(plan, names, tp, dp, decl["name"],
                                      value.dim(), None)
        args.append(distribute_tensor(value, mesh, where).to_local())

    if dp is not None and args and args[0].dim() > 0:
        plan_modules.set_local_batch(plan["model"]["inputs"][0]["shape"][0],
                                     args[0].shape[0])
    else:
        plan_modules.set_local_batch(None, None)
    forward = torch.compile(model) if job.get("compile") else model
    comm = CommDebugMode()
    try:
        with torch.no_grad(), comm:
            outputs = forward(*args)
    except Exception as error:  # PyTorch cannot run this model: say why
        raise Refused(error) from error
    counts = {"total": {str(op): n for op, n in
                        comm.get_comm_counts().items()},
              "table": comm.generate_comm_debug_tracing_table(noise_level=0)}
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    results = {}
    for name, value, shape in zip(plan["model"]["outputs"], outputs,
                                  job["output_shapes"]):
        if isinstance(value, AsyncCollectiveTensor):
            # A collective's result not waited for yet (a rowwise output).
            value = value.wait()
        if isinstance(value, DTensor):
            value = value.full_tensor()
            if dp is not None and value.dim() > 0:
                dp_mesh = mesh[names[dp]]
                value = gather_local(value, dp_mesh, [Shard(0)], shape)
        else:
            where = activation_placements(plan, names, tp, dp, name,
                                          value.dim(), Replicate())
            value = gather_local(value, mesh, where, shape)
        results[name] = value
    if rank == 0:
        for name, value in results.items():
            torch_model.save_npy(os.path.join(job["out"], name + ".npy"),
                                 value)
        with open(os.path.join(job["out"], "comm.json"), "w") as f:
            json.dump(counts, f, indent=1, sort_keys=True)


def run_redistribute(job, rank):
    mesh = mesh_of(job)
    for i, case in enumerate(job["cases"]):
        shape = case["shape"]
        source = [placement(p) for p in case["source"]]
        if any(isinstance(p, Partial) for p in source):
            # DTensor distributes no tensor as Partial (nor redistributes
            # Replicate to it): each rank's contribution is a tensor of the
            # global shape of its own, cut to the non-Partial placements.
            # Contributions differ along the Partial mesh dims only: the
            # ranks of a Replicate or Shard group hold the same one.
            coord = mesh.get_coordinate()
            key = 0
            for mesh_dim, p in enumerate(source):
                if isinstance(p, Partial):
                    key = key * mesh.size(mesh_dim) + coord[mesh_dim]
            generator = torch.Generator().manual_seed(case["seed"] + key)
            mine = torch.randn(shape, generator=generator)
            cut = [Replicate() if isinstance(p, Partial) else p
                   for p in source]
            local = distribute_tensor(mine, mesh, cut,
                                      src_data_rank=None).to_local()
            stride = torch.empty(shape).stride()
            d = DTensor.from_local(local, mesh, source, run_check=False,
                                   shape=torch.Size(shape), stride=stride)
        else:
            generator = torch.Generator().manual_seed(case["seed"])
            x = torch.randn(shape, generator=generator)
            d = distribute_tensor(x, mesh, source)
        torch_model.save_npy(
            os.path.join(job["out"], f"in_{i}.{rank}.npy"), d.to_local())
        full = d.full_tensor()
        if rank == 0:
            torch_model.save_npy(
                os.path.join(job["out"], f"global_{i}.npy"), full)
        target = [placement(p) for p in case["target"]]
        try:
            result = d.redistribute(mesh, target).to_local()
        except (RuntimeError, NotImplementedError, AssertionError,
                ValueError) as error:
            # Pairs DTensor refuses: the driver compares with the global
            # value instead, and says why.
            if rank == 0:
                with open(os.path.join(job["out"], f"refused_{i}.txt"),
                          "w") as f:
                    f.write(f"{type(error).__name__}: "
                            f"{str(error).splitlines()[0]}")
            continue
        torch_model.save_npy(
            os.path.join(job["out"], f"exp_{i}.{rank}.npy"), result)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jobs")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--store", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + args.store,
                            rank=args.rank, world_size=args.world)
    with open(args.jobs) as f:
        jobs = json.load(f)
    for job in jobs:
        os.makedirs(job["out"], exist_ok=True)
        try:
            {"model": run_model, "redistribute": run_redistribute}[
                job["kind"]](job, args.rank)
        except Refused as refused:
            error = refused.__cause__
            with open(os.path.join(job["out"], f"refused.{args.rank}.txt"),
                      "w") as f:
                f.write(f"{type(error).__name__}: "
                        f"{str(error).strip().splitlines()[0]}")
        except Exception:  # a harness failure: the driver fails the case
            with open(os.path.join(job["out"], f"error.{args.rank}.txt"),
                      "w") as f:
                f.write(traceback.format_exc())
        dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

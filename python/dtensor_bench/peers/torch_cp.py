#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch's own context parallelism as the peer of the long-prefill
benchmark (dtensor_bench.context_parallel): the decoder block of a
gen-model-plan.py plan (`--model block`) as bench_dtensor.py's nn.Module,
its sequence sharded over R processes (gloo, CPU) with
torch.distributed.tensor.experimental.context_parallel — what a user of
PyTorch 2 writes. Needs the environment of scripts/torch-env.sh.

  python3 -m dtensor_bench.peers.torch_cp time PLAN.json [--ranks R] [--threads T] [--warmup W]
      [--iters I] [--seed N] [--rotate allgather|alltoall]
      [--sdpa-backend BACKEND] [--timeout SECONDS]
  python3 -m dtensor_bench.peers.torch_cp check PLAN.json [--ranks R] [--rotate METHOD,...]
      [--sdpa-backend default|math|flash|efficient|cudnn,...] [--seed N]
      [--inject-error] [--timeout SECONDS]

Each rank is a process running this script (`rank`, internal) with a
gloo group over a file store, a 1-D DeviceMesh of all ranks (also for
one rank: every rank count runs the same code), T intra-op threads
(default: cores / R) and autograd off. The block's weights and input are
llama.random_tensors (seeded), whole on every rank; inside
`context_parallel(mesh, buffers=[x, cos, sin], buffer_seq_dims=[1, 1, 1])`
(x the block's input, cos and sin its RoPE tables; PyTorch shards them
along the sequence in place, with its head-tail load balancing) each rank
runs the block on its part of the sequence, and F.scaled_dot_product_attention
(is_causal as the plan's attention op) is the one PyTorch patches.

`time`: W warm-up steps (at least 1), then I timed steps inside one
context_parallel region (its entry, which shards the buffers, is not
timed), each after a barrier; a step's time is the slowest rank's. Then
one more step under CommDebugMode counts the collectives a step issues,
and its output is checked as `check` does (after the memory is read, so
the one-process reference does not count). Prints one JSON line:
median_ms, min_ms, iters, first_step_ms (the first warm-up step:
DTensor's sharding propagation runs there), relative_error (to the
block on one process; above 1e-5 PyTorch computed something else, and
"wrong": true), peak_bytes_per_rank (each rank's peak resident memory
over the steps, getrusage), setup_bytes_per_rank (the same before the
first step: torch, the gloo group, weights and input), collectives
({name: count}), torch (its version); when the step raises, "error":
"<type>: <first line>" in place of the times (every rank raises the
same), and exit status 3.

`check`: for each rotate method and SDPA backend given (all in one run
of the ranks), one step under context_parallel, its local outputs put
back in order (context_parallel_unshard), against the block run in one
process on the whole sequence with plain SDPA: prints one line each

  check PLAN (R ranks, ROTATE, causal|non-causal, BACKEND): relative error E: ok
      (or MISMATCH; > 1e-5 of the largest magnitude), collectives NAME=N ...
  check PLAN (...): fails: <type>: <first line of the error>

and exits 1 on a mismatch, else 3 when a step raised, else 0.
--sdpa-backend runs the step inside torch.nn.attention.sdpa_kernel(BACKEND)
(`time` takes one method and one backend). --inject-error compares each
result a second time perturbed, on a line of its own ending in
`(error injected)`, to show the check can fail (in the same run: PyTorch's
first step is slow, see the README's benchmark section).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Stdlib only at import (torch inside their functions).
from dtensor_bench.peers import torch_dtensor
from dtensor_bench.support import module_command
from dtensor_testing import llama

BACKENDS = {"math": "MATH", "flash": "FLASH_ATTENTION",
            "efficient": "EFFICIENT_ATTENTION", "cudnn": "CUDNN_ATTENTION"}
TOLERANCE = 1e-5


def error_line(error):
    """`<type>: <first non-empty line>` of an exception."""
    lines = [l.strip() for l in str(error).splitlines() if l.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:400]


def block_model(plan, tensors):
    """The plan's block as bench_dtensor.py's module, with the weights."""
    cfg = llama.model_config(plan)
    model = llama.build_model(cfg)
    params = {p["name"] for p in plan["model"]["parameters"]}
    model.load_state_dict({n: t for n, t in tensors.items() if n in params},
                          strict=True)
    model.eval()
    return cfg, model


def comm_counts(mode):
    """CommDebugMode's counts as {op name: count}."""
    return {str(op).split(".")[-1]: n for op, n in
            sorted(mode.get_comm_counts().items(), key=lambda i: str(i[0]))}


def compare(mesh, out, full, inject_error):
    """The relative error of the ranks' outputs, put back in order, to the
    block's output on the whole sequence (and of a perturbed copy)."""
    from torch.distributed.tensor.experimental._attention import (
        context_parallel_unshard)
    got, = context_parallel_unshard(mesh, [out], [1])
    scale = max(full.abs().max().item(), 1e-30)
    errors = {"relative_error": (got - full).abs().max().item() / scale}
    if inject_error:
        got = got.clone()
        got.reshape(-1)[0] += scale
        errors["injected_relative_error"] = (
            (got - full).abs().max().item() / scale)
    return errors


def run_variant(task, mesh, model, x, rotate, backend):
    """One context_parallel run of the block (a step for `check`, the
    timed steps for `time`) with this rotate method and SDPA backend; the
    last step's local output is "out"."""
    import contextlib
    import torch
    import torch.distributed as dist
    from torch.distributed.tensor.debug import CommDebugMode
    from torch.distributed.tensor.experimental import context_parallel
    from torch.distributed.tensor.experimental._attention import (
        set_rotate_method)
    result = {"rotate": rotate, "sdpa_backend": backend}
    if backend == "default":
        kernel = contextlib.nullcontext()
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        kernel = sdpa_kernel(getattr(SDPBackend, BACKENDS[backend]))
    set_rotate_method(rotate)
    # context_parallel shards its buffers in place: fresh copies each run.
    x = x.clone()
    model.cos, model.sin = model.whole_cos.clone(), model.whole_sin.clone()
    buffers = [x, model.cos, model.sin]
    comm = CommDebugMode()

    def step(mode=contextlib.nullcontext()):
        dist.barrier()
        start = time.perf_counter()
        with mode:
            out = torch_dtensor.finish(model(x))
        spent = torch.tensor([time.perf_counter() - start])
        dist.all_reduce(spent, op=dist.ReduceOp.MAX)
        return out, spent.item()

    try:
        with kernel, context_parallel(mesh, buffers=buffers,
                                      buffer_seq_dims=[1, 1, 1],
                                      no_restore_buffers=set(buffers)):
            if task["kind"] == "check":
                out, _ = step(comm)
            else:
                warm = [step()[1] for _ in range(max(task["warmup"], 1))]
                times = sorted(step()[1] for _ in range(task["iters"]))
                out, _ = step(comm)
                result.update(median_ms=1e3 * statistics.median(times),
                              min_ms=1e3 * times[0], iters=len(times),
                              warmup=len(warm), first_step_ms=1e3 * warm[0])
        result["collectives"] = comm_counts(comm)
    except Exception as e:  # noqa: BLE001 (what PyTorch raises is the result)
        result["error"] = error_line(e)
        return result
    result["out"] = out
    return result


def rank_main(rank, world, task):
    import resource
    import torch
    import torch.distributed as dist
    mesh = torch_dtensor.setup(rank, world, task["store"], task["threads"])
    with open(task["plan_path"]) as f:
        plan = json.load(f)
    tensors = llama.random_tensors(plan, task["seed"])
    cfg, model = block_model(plan, tensors)
    model.whole_cos, model.whole_sin = model.cos, model.sin
    x = tensors["x"]
    result = {"torch": torch.__version__, "ranks": world,
              "seq": cfg["seq"], "causal": cfg["causal"],
              "threads": task["threads"]}
    with torch.no_grad():
        setup_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        variants = [run_variant(task, mesh, model, x, rotate, backend)
                    for rotate, backend in task["variants"]]
        # The peak of the steps, before the whole-sequence reference below.
        peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        model.cos, model.sin = model.whole_cos, model.whole_sin
        full = model(x)
        for v in variants:
            if "out" in v:
                v.update(compare(mesh, v.pop("out"), full,
                                 task["inject_error"]))
    result["variants"] = variants
    rss = torch.tensor([peak_rss, setup_rss], dtype=torch.float64)
    gathered = [torch.zeros_like(rss) for _ in range(world)]
    dist.all_gather(gathered, rss)
    result["peak_bytes_per_rank"] = [int(g[0].item()) for g in gathered]
    result["setup_bytes_per_rank"] = [int(g[1].item()) for g in gathered]
    if rank == 0:
        with open(task["result_path"], "w") as f:
            json.dump(result, f)
    dist.destroy_process_group()


def launch(task, ranks, timeout):
    """Runs the task on `ranks` processes; rank 0's result."""
    with tempfile.TemporaryDirectory(prefix="bench_torch_cp.") as tmp:
        task = dict(task, store=os.path.join(tmp, "store"),
                    result_path=os.path.join(tmp, "result.json"))
        task_path = os.path.join(tmp, "task.json")
        with open(task_path, "w") as f:
            json.dump(task, f)
        logs = [open(os.path.join(tmp, f"rank{r}.log"), "w+")
                for r in range(ranks)]
        procs = [subprocess.Popen(
            module_command(sys.executable, "dtensor_bench.peers.torch_cp") + [
             "rank", task_path, "--rank", str(r), "--ranks", str(ranks)],
            stdout=logs[r], stderr=subprocess.STDOUT) for r in range(ranks)]
        deadline = time.monotonic() + timeout
        codes = []
        for p in procs:
            try:
                codes.append(p.wait(timeout=max(1, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                codes.append("timeout")
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        # Rank 0 writes the result whole before the process group is torn
        # down; a rank that then dies in the teardown (gloo has been seen to
        # abort with "terminate called without an active exception") does
        # not lose it, but the result says so.
        if not os.path.exists(task["result_path"]):
            logs[0].seek(0)
            raise RuntimeError(f"bench_torch_cp ranks exited with {codes}:\n"
                               + logs[0].read()[-3000:])
        for log in logs:
            log.close()
        with open(task["result_path"]) as f:
            result = json.load(f)
        if any(c != 0 for c in codes):
            result["exit_codes"] = codes
        return result


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["time", "check", "rank"])
    p.add_argument("plan", metavar="PLAN.json")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int,
                   help="threads per rank (default: cores / ranks)")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rotate", default="allgather", metavar="METHOD[,...]",
                   help="set_rotate_method: allgather (default, PyTorch's) "
                   "or alltoall; check takes a list")
    p.add_argument("--sdpa-backend", default="default",
                   metavar="BACKEND[,...]",
                   help="run inside sdpa_kernel(BACKEND): default (none), "
                   f"{', '.join(sorted(BACKENDS))}; check takes a list")
    p.add_argument("--inject-error", action="store_true",
                   help="check: compare once more with the result "
                   "perturbed (must fail)")
    p.add_argument("--timeout", type=float, default=1800,
                   help="seconds before the ranks are killed")
    a = p.parse_args(argv)
    if a.command == "rank":
        with open(a.plan) as f:
            rank_main(a.rank, a.ranks, json.load(f))
        return 0
    if a.ranks < 1 or a.iters < 1:
        p.error("--ranks and --iters must be at least 1")
    rotates, backends = a.rotate.split(","), a.sdpa_backend.split(",")
    for value in rotates:
        if value not in ("allgather", "alltoall"):
            p.error(f"--rotate {value}: expected allgather or alltoall")
    for value in backends:
        if value != "default" and value not in BACKENDS:
            p.error(f"--sdpa-backend {value}: expected default or one of "
                    f"{', '.join(sorted(BACKENDS))}")
    if a.command == "time" and len(rotates) * len(backends) > 1:
        p.error("time takes one --rotate and one --sdpa-backend")
    try:
        with open(a.plan) as f:
            kind = llama.model_config(json.load(f))["kind"]
    except (OSError, ValueError, KeyError, StopIteration) as e:
        p.error(f"{a.plan}: not a gen-model-plan.py plan ({e!r})")
    if kind != "block":
        p.error(f"{a.plan}: a {kind} plan; this takes a gen-model-plan.py "
                "--model block plan")
    try:
        from torch.distributed.tensor.experimental import (  # noqa: F401
            context_parallel)
    except ImportError as e:
        print(f"bench_torch_cp: this torch has no context_parallel ({e}); "
              "use $(scripts/torch-env.sh --python)", file=sys.stderr)
        return 2
    threads = a.threads or max(1, (os.cpu_count() or 1) // a.ranks)
    task = {"kind": a.command, "plan_path": os.path.abspath(a.plan),
            "warmup": a.warmup, "iters": a.iters, "seed": a.seed,
            "threads": threads, "inject_error": a.inject_error,
            "variants": [[r, b] for r in rotates for b in backends]}
    result = launch(task, a.ranks, a.timeout)
    variants = result.pop("variants")
    if a.command == "time":
        result.update(variants[0])
        if "relative_error" in result:
            result["wrong"] = result["relative_error"] > TOLERANCE
        print(json.dumps(result))
        return 0 if "error" not in result else 3
    mismatch = raised = False
    for v in variants:
        head = (f"check {os.path.basename(a.plan)} ({a.ranks} ranks, "
                f"{v['rotate']}, "
                f"{'causal' if result['causal'] else 'non-causal'}, "
                f"{v['sdpa_backend']})")
        if "error" in v:
            print(f"{head}: fails: {v['error']}")
            raised = True
            continue
        comms = " ".join(f"{k}={n}" for k, n in v["collectives"].items())
        for key, tail in (("relative_error", ""),
                          ("injected_relative_error", " (error injected)")):
            if key in v:
                ok = v[key] <= TOLERANCE
                mismatch |= not ok
                print(f"{head}: relative error {v[key]:.3g}: "
                      f"{'ok' if ok else 'MISMATCH'}, collectives "
                      f"{comms or 'none'}{tail}")
    return 1 if mismatch else 3 if raised else 0


if __name__ == "__main__":
    sys.exit(main())

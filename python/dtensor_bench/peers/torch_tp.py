#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch eager baselines for the benchmarks (scripts/bench.sh): the models
of dtensor_testing.gen_model_plan written by hand, with Megatron-style tensor
parallelism on torch.distributed (gloo) — what a user would write without
dtensor.

  python3 -m dtensor_bench.peers.torch_tp time PLAN.json [--ranks R] [--threads T] [--warmup W]
      [--iters I] [--budget SECONDS] [--seed N] [--openblas-coretype NAME]
  python3 -m dtensor_bench.peers.torch_tp check PLAN.json ... [--ranks R] [--inject-error]
      [--weights-dir DIR]
  python3 -m dtensor_bench.peers.torch_tp serve [--ranks R] [--threads T] [--openblas-coretype NAME]

The model comes from the plan (docs/model-plan.md) written by
gen-model-plan.py: `--model mlp` (fc1 -> gelu(tanh) -> fc2, with biases),
`--model block` (Llama decoder blocks) or `--model llama` (embedding,
blocks, norm, LM head, argmax). Its sizes are read from the plan's
parameters and ops; the plan's `plan` member is not read: the parallel code
below is the tensor-parallel plan gen-model-plan.py writes (tp), by hand:

- MLP: fc1 column-sharded (weight rows and bias), gelu, fc2 row-sharded
  (weight columns), all_reduce of the partial sums, then fc2's bias;
- block: wq/wk/wv/w1/w3 column-sharded, so each rank has heads/R whole
  heads; RMSNorm (replicated), RoPE (rotate_half), causal attention as
  softmax(q k^T * scale, masked) v; wo/w2 row-sharded + all_reduce;
  SwiGLU w2(silu(w1 x) * w3 x); residual adds;
- llama: vocab-parallel embedding (each rank holds V/R rows, looks up the
  ids in its range, zeros elsewhere, all_reduce), the blocks, the final
  RMSNorm, the LM head column-sharded (vocab-sharded logits) and the argmax
  over the vocabulary as a max + index reduction: each rank's (max, global
  index) pair is all-gathered and the first largest wins.

`time` runs R processes (torch.multiprocessing, spawn; gloo over a file
store), each with T intra-op threads (torch.set_num_threads and OpenBLAS's
own thread count); weights and inputs are random (seeded); autograd is
off (torch.no_grad(); not inference_mode, whose tensors gloo's all_gather
refuses to write). After W warm-up steps it times steps, each after a
barrier, and prints one JSON line from rank 0: median and minimum step
time, the BLAS torch runs on (OpenBLAS's core name and threads, via
ctypes), torch's version and build configuration. With --budget, warm-up
stops early once it has taken a third of the budget, and the iteration
count is cut so that the timed steps take about the budget (at least 3).

`serve` keeps R ranks running and times one plan per request, a JSON
line on standard input ({"plan_path": ..., "iters": ..., "warmup": ...,
"budget": ..., "seed": ...}), answering with time's JSON line: bench.py
uses it to interleave its measurements without starting torch each time.

`check` is the correctness self-check: each plan is run on R ranks with
this parallel code and in one process with dtensor_testing.torch_model's
run_plan (the reference of the dtensor tests), with the same inputs and
weights (written by make-test-tensors.py, or drawn here), and the outputs
must agree (floats: relative error <= 1e-4 of the largest magnitude;
integers exactly). --inject-error perturbs the parallel result, to show the
check can fail. Prints one line per plan and exits 1 on a mismatch.

OPENBLAS_CORETYPE is read when OpenBLAS loads, i.e. at `import torch`:
--openblas-coretype restarts this script with it set (the processes it
spawns inherit it). Without it torch runs on the kernels OpenBLAS picks by
itself, as shipped.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time

from dtensor_testing.llama import file_tensors, model_config, random_tensors


def shard(tensor, dim, rank, world):
    """Rank's torch.chunk piece of `tensor` along `dim` and its offset."""
    import torch
    pieces = torch.chunk(tensor, world, dim=dim)
    offset = sum(p.shape[dim] for p in pieces[:rank])
    piece = pieces[rank] if rank < len(pieces) else tensor.narrow(dim, 0, 0)
    return piece.contiguous(), offset


# Which weights are split, along which dim (the tp plan): column-parallel
# layers split their output features (weight rows, bias), row-parallel ones
# their input features (weight columns); the embedding its vocabulary rows.
COLWISE = ("fc1", "attention.wq", "attention.wk", "attention.wv",
           "feed_forward.w1", "feed_forward.w3", "output")
ROWWISE = ("fc2", "attention.wo", "feed_forward.w2")


def local_weights(tensors, rank, world):
    """This rank's shards of the global tensors (name -> tensor), plus the
    vocabulary offset of its embedding rows under 'tok_embeddings.offset'."""
    local = {}
    for name, t in tensors.items():
        module, _, kind = name.rpartition(".")
        if name == "tok_embeddings.weight":
            local[name], local["tok_embeddings.offset"] = shard(
                t, 0, rank, world)
        elif module.endswith(COLWISE) and module != "tok_embeddings":
            local[name] = shard(t, 0, rank, world)[0]
            if module == "output":
                local["output.offset"] = shard(t, 0, rank, world)[1]
        elif module.endswith(ROWWISE) and kind == "weight":
            local[name] = shard(t, 1, rank, world)[0]
        else:
            local[name] = t  # norms, row-parallel biases, inputs: replicated
    return local


# --- the tensor-parallel forward pass ---------------------------------------------

class Comm:
    """The collectives of the parallel code; no-ops on one rank."""

    def __init__(self, world):
        self.world = world

    def all_reduce(self, t):
        if self.world > 1:
            import torch.distributed as dist
            dist.all_reduce(t)
        return t

    def all_gather(self, t):
        if self.world == 1:
            return [t]
        import torch
        import torch.distributed as dist
        out = [torch.empty_like(t) for _ in range(self.world)]
        dist.all_gather(out, t)
        return out


def rms_norm(x, weight, eps):
    import torch
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def mlp_forward(cfg, w, x, comm):
    import torch.nn.functional as F
    h = F.linear(x, w["fc1.weight"], w["fc1.bias"])
    a = F.gelu(h, approximate=cfg["approximate"])
    y = comm.all_reduce(F.linear(a, w["fc2.weight"]))
    return y + w["fc2.bias"]


class BlockContext:
    """What every block shares and a Llama implementation computes once:
    the RoPE tables and the causal mask."""

    def __init__(self, cfg):
        import torch
        d, seq = cfg["head_dim"], cfg["seq"]
        inv_freq = 1.0 / (cfg["theta"] ** (
            torch.arange(0, d, 2, dtype=torch.float32) / d))
        freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)  # [S, D]
        self.cos = emb.cos().view(1, seq, 1, d)
        self.sin = emb.sin().view(1, seq, 1, d)
        self.future = torch.ones(seq, seq, dtype=torch.bool).triu(diagonal=1)
        self.scale = 1.0 / math.sqrt(d)


def rotary(x, ctx):
    import torch
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * ctx.cos + rotated * ctx.sin


def block_forward(cfg, w, i, x, comm, ctx):
    """Decoder block i on this rank's heads and ffn columns."""
    import torch
    import torch.nn.functional as F
    p = f"layers.{i}."
    b, s = x.shape[0], x.shape[1]
    xn = rms_norm(x, w[p + "attention_norm.weight"], cfg["eps"])
    q = F.linear(xn, w[p + "attention.wq.weight"]).view(b, s, -1,
                                                         cfg["head_dim"])
    k = F.linear(xn, w[p + "attention.wk.weight"]).view(b, s, -1,
                                                         cfg["head_dim"])
    v = F.linear(xn, w[p + "attention.wv.weight"]).view(b, s, -1,
                                                         cfg["head_dim"])
    q = rotary(q, ctx).transpose(1, 2)
    k = rotary(k, ctx).transpose(1, 2)
    v = v.transpose(1, 2)
    scores = torch.matmul(q, k.transpose(-2, -1)) * ctx.scale
    scores = scores.masked_fill(ctx.future, float("-inf"))
    attn = torch.matmul(torch.softmax(scores, dim=-1), v)
    attn = attn.transpose(1, 2).reshape(b, s, -1)
    h = x + comm.all_reduce(F.linear(attn, w[p + "attention.wo.weight"]))
    hn = rms_norm(h, w[p + "ffn_norm.weight"], cfg["eps"])
    gated = (F.silu(F.linear(hn, w[p + "feed_forward.w1.weight"])) *
             F.linear(hn, w[p + "feed_forward.w3.weight"]))
    return h + comm.all_reduce(F.linear(gated, w[p + "feed_forward.w2.weight"]))


def embedding_forward(w, tokens, comm):
    """Vocab-parallel lookup: rows outside this rank's range are zeros."""
    import torch.nn.functional as F
    table = w["tok_embeddings.weight"]
    local = tokens - w["tok_embeddings.offset"]
    outside = (local < 0) | (local >= table.shape[0])
    rows = F.embedding(local.masked_fill(outside, 0), table)
    rows = rows.masked_fill(outside.unsqueeze(-1), 0.0)
    return comm.all_reduce(rows)


def argmax_forward(w, logits, comm):
    """Argmax over vocab-sharded logits: the local maximum and its global
    index per rank, all-gathered; the first rank with the largest maximum
    wins (the lowest index, as torch.argmax on the whole row)."""
    import torch
    value, index = logits.max(dim=-1)
    if comm.world == 1:
        return index
    pair = torch.stack([value.double(),
                        (index + w["output.offset"]).double()], dim=-1)
    pairs = torch.stack(comm.all_gather(pair))  # [R, B, S, 2]
    best = pairs[..., 0].argmax(dim=0, keepdim=True)
    return pairs[..., 1].gather(0, best).squeeze(0).long()


def forward(cfg, w, inputs, comm, ctx):
    """One step: the plan's outputs (name -> tensor) on this rank."""
    if cfg["kind"] == "mlp":
        return {"y": mlp_forward(cfg, w, inputs["x"], comm)}
    h = (embedding_forward(w, inputs["tokens"], comm)
         if cfg["kind"] == "llama" else inputs["x"])
    for i in range(cfg["layers"]):
        h = block_forward(cfg, w, i, h, comm, ctx)
    if cfg["kind"] == "block":
        return {"y": h}
    import torch.nn.functional as F
    hn = rms_norm(h, w["norm.weight"], cfg["eps"])
    logits = F.linear(hn, w["output.weight"])  # [B, S, V/R]
    return {"next_token": argmax_forward(w, logits, comm)}


# --- processes ----------------------------------------------------------------------

def blas_info():
    """The BLAS torch computes matrix products with: OpenBLAS's core name and
    thread count when it is OpenBLAS (Debian's torch links libblas.so.3, by
    default OpenBLAS's)."""
    import ctypes
    import torch
    info = {"torch": torch.__version__,
            "openblas_coretype_env": os.environ.get("OPENBLAS_CORETYPE")}
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        info["openblas_corename"] = lib.openblas_get_corename().decode()
        info["openblas_threads"] = lib.openblas_get_num_threads()
    except (OSError, AttributeError):
        info["openblas_corename"] = None
    config = torch.__config__.show()
    capability = re.search(r"CPU capability usage: (\S+)", config)
    blas = re.search(r"BLAS_INFO=([^,\s]+)", config)
    info["torch_cpu_capability"] = capability and capability.group(1)
    info["torch_blas_info"] = blas and blas.group(1)
    return info


def set_threads(threads):
    """Intra-op threads for torch and for OpenBLAS (which torch does not
    configure itself); one inter-op thread."""
    import ctypes
    import torch
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process
    try:
        ctypes.CDLL("libopenblas.so.0").openblas_set_num_threads(threads)
    except (OSError, AttributeError):
        pass


def worker(rank, world, task, store, result_path):
    """One rank: sets up gloo (more than one rank), runs `task` and writes
    rank 0's result as JSON to result_path."""
    import torch
    import torch.distributed as dist
    if world > 1:
        dist.init_process_group("gloo", init_method="file://" + store,
                                rank=rank, world_size=world)
    try:
        set_threads(task["threads"])
        # no_grad rather than inference_mode: gloo's all_gather writes its
        # outputs outside the mode, which inference tensors refuse.
        with torch.no_grad():
            result = (run_timing if task["mode"] == "time" else run_check)(
                rank, world, task)
        if rank == 0:
            with open(result_path, "w") as f:
                json.dump(result, f)
    finally:
        if world > 1:
            dist.destroy_process_group()


def launch(task, world):
    """Runs `task` on `world` ranks (in this process for one) and returns
    rank 0's result."""
    with tempfile.TemporaryDirectory(prefix="bench_torch.") as tmp:
        result_path = os.path.join(tmp, "result.json")
        store = os.path.join(tmp, "store")
        if world == 1:
            worker(0, 1, task, store, result_path)
        else:
            import torch.multiprocessing as mp
            mp.spawn(worker, args=(world, task, store, result_path),
                     nprocs=world, join=True)
        with open(result_path) as f:
            return json.load(f)


def start_rank(rank, world, store, threads):
    """A `serve` rank of this script: gloo for more than one rank, the
    threads; nothing to hand on to run_served."""
    import torch.distributed as dist
    if world > 1:
        dist.init_process_group("gloo", init_method="file://" + store,
                                rank=rank, world_size=world)
    set_threads(threads)


def run_served(rank, world, state, task):
    return run_timing(rank, world, task)


def serve_worker(rank, world, threads, store, tasks, results, start, run):
    """One rank of `serve`: `start(rank, world, store, threads)` once (its
    result is the rank's state), then `run(rank, world, state, task)` for
    each plan it is sent until it gets None; rank 0 answers on `results`."""
    import gc
    import traceback
    import torch
    import torch.distributed as dist
    state = start(rank, world, store, threads)
    while True:
        task = tasks.get()
        if task is None:
            break
        task["threads"] = threads
        try:
            with torch.no_grad():
                result = run(rank, world, state, task)
        except Exception:  # reported to the client, which restarts us
            result = {"error": traceback.format_exc()}
        gc.collect()
        if rank == 0:
            results.put(result)
    if dist.is_initialized():
        dist.destroy_process_group()


def serve(ranks, threads, start=start_rank, run=run_served, defaults=None,
          extra=None, prefix="bench_torch."):
    """Keeps `ranks` worker processes (and their gloo group) alive and times
    one plan per request: a JSON object per line on stdin (plan_path, iters,
    warmup, budget, seed; `defaults` fill what it leaves out), rank 0's
    result as one JSON line on stdout, with `extra` added (also to the
    first line, {"ready": true}). Saves the start of processes and of torch
    for every measurement. `start` and `run` are the rank's set-up and one
    measurement (see serve_worker); dtensor_bench.peers.torch_dtensor passes its
    own."""
    import torch.multiprocessing as mp
    defaults = {"plan": None} if defaults is None else defaults
    extra = extra or {}
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        tasks = [ctx.Queue() for _ in range(ranks)]
        results = ctx.Queue()
        procs = [ctx.Process(target=serve_worker,
                             args=(r, ranks, threads, os.path.join(tmp, "store"),
                                   tasks[r], results, start, run), daemon=True)
                 for r in range(ranks)]
        for proc in procs:
            proc.start()
        print(json.dumps({"ready": True, **extra}), flush=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            for key, value in defaults.items():
                request.setdefault(key, value)
            for queue in tasks:
                queue.put(request)
            print(json.dumps({**results.get(), **extra}), flush=True)
        for queue in tasks:
            queue.put(None)
        for proc in procs:
            proc.join()


# --- time ------------------------------------------------------------------------------

def agree(value, world):
    """Rank 0's integer, on every rank."""
    if world == 1:
        return value
    import torch
    import torch.distributed as dist
    t = torch.tensor([int(value)])
    dist.broadcast(t, 0)
    return int(t.item())


def run_timing(rank, world, task):
    """Times one plan: warm-up steps (no more than about a third of the
    budget once one is done), then the timed steps; rank 0's step times."""
    import torch.distributed as dist
    plan = task["plan"]
    if plan is None:
        with open(task["plan_path"]) as f:
            plan = json.load(f)
    cfg = model_config(plan)
    tensors = random_tensors(plan, task["seed"])
    w = local_weights(tensors, rank, world)
    del tensors
    inputs = {t["name"]: w[t["name"]] for t in plan["model"]["inputs"]}
    ctx = BlockContext(cfg) if cfg["kind"] != "mlp" else None
    comm = Comm(world)

    def barrier():
        if world > 1:
            dist.barrier()

    def step():
        barrier()
        start = time.perf_counter()
        forward(cfg, w, inputs, comm, ctx)
        return time.perf_counter() - start

    budget = task["budget"]
    warm = []
    while len(warm) < max(task["warmup"], 1):
        warm.append(step())
        if budget and agree(sum(warm) > budget / 3, world):
            break
    iters = task["iters"]
    if budget:
        # Rank 0 picks the count from its warm-up times; all ranks use it.
        per_step = statistics.median(warm)
        iters = agree(max(3, min(iters, int(budget / max(per_step, 1e-6)))),
                      world)
    times = sorted(step() for _ in range(iters))
    del w, inputs
    return {"median_ms": 1e3 * times[len(times) // 2],
            "min_ms": 1e3 * times[0], "iters": iters, "warmup": len(warm),
            "ranks": world, "threads": task["threads"], "config": cfg,
            "blas": blas_info()}


# --- check -------------------------------------------------------------------------------

def run_check(rank, world, task):
    """Every plan of the task (one process start for all of them): the
    parallel outputs against torch_model.run_plan's."""
    from dtensor_testing import torch_model
    results = []
    for plan, weights_dir in zip(task["plans"], task["weights_dirs"]):
        cfg = model_config(plan)
        tensors = (file_tensors(plan, weights_dir) if weights_dir
                   else random_tensors(plan, task["seed"]))
        w = local_weights(tensors, rank, world)
        inputs = {t["name"]: w[t["name"]] for t in plan["model"]["inputs"]}
        ctx = BlockContext(cfg) if cfg["kind"] != "mlp" else None
        outputs = forward(cfg, w, inputs, Comm(world), ctx)
        if rank != 0:
            continue
        reference = torch_model.run_plan(plan, tensors)
        report = {name: compare_output(outputs[name], ref, task["inject_error"])
                  for name, ref in reference.items()}
        results.append({"kind": cfg["kind"], "outputs": report})
    return results


def compare_output(got, ref, inject_error=False):
    """A check's verdict on one output against torch_model's: the largest
    error relative to the largest reference magnitude (floats, at most
    1e-4) or the count of differing elements (integers, none).
    `inject_error` first adds 1 to one element, to prove the check fails."""
    got = got.clone()
    if inject_error:
        got.view(-1)[0] += 1
    if ref.is_floating_point():
        scale = max(ref.abs().max().item(), 1e-30)
        error = (got - ref).abs().max().item() / scale
        ok = error <= 1e-4
    else:
        error = int((got != ref).sum().item())
        ok = error == 0
    return {"error": error, "ok": ok, "shape": list(ref.shape)}


# --- main ----------------------------------------------------------------------------------

def restart_with_coretype(coretype):
    """OPENBLAS_CORETYPE must be set before OpenBLAS loads: run this script
    again with it in the environment (torch is not imported yet)."""
    if os.environ.get("OPENBLAS_CORETYPE") != coretype:
        os.environ["OPENBLAS_CORETYPE"] = coretype
        os.execv(sys.executable, [sys.executable] + sys.argv)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["time", "check", "serve"])
    p.add_argument("plans", nargs="*", metavar="PLAN.json")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--threads", type=int,
                   help="threads per rank (default: cores / ranks)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--budget", type=float, default=0.0,
                   help="seconds of timed steps to aim for (0: --iters)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--openblas-coretype",
                   help="OPENBLAS_CORETYPE for torch's OpenBLAS (default: "
                   "as shipped, OpenBLAS's own choice)")
    p.add_argument("--weights-dir", action="append", default=[],
                   help="check: make-test-tensors.py's folder for each plan")
    p.add_argument("--inject-error", action="store_true",
                   help="check: perturb the parallel result (must fail)")
    a = p.parse_args(argv)
    if a.openblas_coretype:
        restart_with_coretype(a.openblas_coretype)
    if a.ranks < 1:
        p.error("--ranks must be at least 1")
    if a.mode == "time" and len(a.plans) != 1:
        p.error("time takes one plan")
    if a.mode == "check" and not a.plans:
        p.error("check takes at least one plan")
    if a.mode == "serve" and a.plans:
        p.error("serve reads its plans from standard input")
    if a.weights_dir and len(a.weights_dir) != len(a.plans):
        p.error("give one --weights-dir per plan")
    threads = a.threads or max(1, (os.cpu_count() or 1) // a.ranks)

    if a.mode == "serve":
        serve(a.ranks, threads)
        return 0
    plans = []
    for path in a.plans:
        with open(path) as f:
            plans.append(json.load(f))
    task = {"mode": a.mode, "threads": threads, "warmup": a.warmup,
            "iters": a.iters, "budget": a.budget, "seed": a.seed,
            "inject_error": a.inject_error}
    if a.mode == "time":
        task["plan"] = plans[0]
        print(json.dumps(launch(task, a.ranks)))
        return 0
    task["plans"] = plans
    task["weights_dirs"] = a.weights_dir or [None] * len(plans)
    failed = False
    for path, result in zip(a.plans, launch(task, a.ranks)):
        for name, r in result["outputs"].items():
            error = (f"relative error {r['error']:.3g}"
                     if isinstance(r["error"], float)
                     else f"{r['error']} elements differ")
            verdict = "ok" if r["ok"] else "MISMATCH"
            print(f"check {os.path.basename(path)} ({result['kind']}, "
                  f"{a.ranks} ranks) {name}{r['shape']}: {error}: {verdict}")
            failed |= not r["ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch 2.x DTensor peers for the benchmarks (scripts/bench.sh): the
models of dtensor_testing.gen_model_plan as ordinary nn.Modules, made
tensor-parallel with torch.distributed.tensor's parallelize_module and the
standard Llama plan of PyTorch's tensor-parallel tutorial — what a user of
PyTorch 2 writes — run eagerly or under torch.compile (Inductor, CPU).
Needs PyTorch >= 2.4 (scripts/torch-env.sh makes such an environment:
`$(scripts/torch-env.sh --python) dtensor_bench.peers.torch_dtensor ...`).

  python3 -m dtensor_bench.peers.torch_dtensor time PLAN.json [--ranks R] [--threads T] [--mode MODE]
      [--warmup W] [--iters I] [--budget SECONDS] [--seed N]
  python3 -m dtensor_bench.peers.torch_dtensor check PLAN.json ... [--ranks R] [--mode MODE]
      [--weights-dir DIR] [--inject-error]
  python3 -m dtensor_bench.peers.torch_dtensor serve [--ranks R] [--threads T]
  python3 -m dtensor_bench.peers.torch_dtensor info

MODE is `eager` or `compiled` (torch.compile, default backend: Inductor).
The model's sizes come from the plan (llama.model_config); the plan's
`plan` member is not read. Modules and their parameter names follow the
plan's parameter names (fc1/fc2; tok_embeddings, layers.N.attention.wq...,
feed_forward.w1/w2/w3, attention_norm, ffn_norm, norm, output), and the
tensor-parallel plan is:

- MLP: fc1 ColwiseParallel, fc2 RowwiseParallel (its output replicated);
- each block: attention.wq/wk/wv and feed_forward.w1/w3 ColwiseParallel,
  attention.wo and feed_forward.w2 RowwiseParallel; attention computes
  views of its local heads (the colwise outputs are local tensors) and
  F.scaled_dot_product_attention (is_causal as the plan's attention op;
  gen-model-plan.py's default is causal); norms are nn.RMSNorm
  (replicated);
- llama: tok_embeddings RowwiseParallel(input_layouts=Replicate()) (a
  vocab-parallel embedding), output ColwiseParallel(output_layouts=
  Replicate()) (all-gathered logits), then torch.argmax.

Every rank is a process (torch.multiprocessing, spawn) with a gloo group
over a file store and a 1-D DeviceMesh of all ranks — also for one rank,
so that every rank count runs the same DTensor code — T intra-op threads
(torch.set_num_threads), autograd off (torch.no_grad()). `compiled` wraps
the parallelized model in torch.compile; its first call (which compiles)
is timed separately as compile_s and is not a timed step. Weights and
inputs are bench_torch.py's (random_tensors with the same seed, or
make-test-tensors.py's files), loaded into the whole model before it is
parallelized (load_state_dict, strict: names must match the plan's).

`time` prints one JSON line: median and minimum step time (rank 0, each
step after a barrier), iterations, compile_s, and `blas`: the library
torch computes matrix products with (blas_info). `serve` keeps R ranks
running and answers one such line per request line on standard input
({"plan_path", "mode", "iters", "warmup", "budget", "seed"}), as
bench_torch.py serve does; a case that torch.compile cannot compile
answers {"compile_error": REASON} and the server stays up; any other
failure answers {"error": TRACEBACK}. `info` prints blas_info() alone.

`check` runs each plan on R ranks with this code and in one process with
dtensor_testing.torch_model's run_plan (the reference of the dtensor tests) on
the same inputs and weights, and prints one line per output (floats:
relative error <= 1e-4 of the largest magnitude; integers exactly);
--inject-error perturbs the parallel result to show the check can fail.
Exits 1 on a mismatch.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

# Stdlib only at import (torch inside their functions).
from dtensor_bench.peers import torch_tp
from dtensor_testing import llama

MODES = ("eager", "compiled")


# --- the models -------------------------------------------------------------------

def parallelize(model, cfg, mesh):
    """The standard tensor-parallel plan (PyTorch's TP tutorial, without
    sequence parallelism) applied with parallelize_module."""
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import (ColwiseParallel,
                                                   RowwiseParallel,
                                                   parallelize_module)
    if cfg["kind"] == "mlp":
        return parallelize_module(model, mesh, {"fc1": ColwiseParallel(),
                                                "fc2": RowwiseParallel()})
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
    if cfg["kind"] == "llama":
        parallelize_module(model, mesh, {
            "tok_embeddings": RowwiseParallel(input_layouts=Replicate()),
            "output": ColwiseParallel(output_layouts=Replicate()),
        })
    return model


def make_model(plan, tensors, mesh, mode):
    """The parallelized (and, in `compiled` mode, torch.compile'd) model
    with the given global weights; returns (model, inputs)."""
    import torch
    cfg = llama.model_config(plan)
    model = llama.build_model(cfg)
    params = {p["name"] for p in plan["model"].get("parameters", [])}
    model.load_state_dict({n: t for n, t in tensors.items() if n in params},
                          strict=True)
    model.eval()
    model = parallelize(model, cfg, mesh)
    if mode == "compiled":
        torch._dynamo.reset()  # a new model each case: no stale guards
        model = torch.compile(model)
    inputs = [tensors[t["name"]] for t in plan["model"]["inputs"]]
    output_name = plan["model"]["outputs"][0]
    return model, inputs, output_name


def compile_reason(error):
    """One line saying why torch.compile failed."""
    lines = [l.strip() for l in str(error).splitlines() if l.strip()]
    text = f"{type(error).__name__}: {lines[0] if lines else ''}"
    return text[:300]


# --- the BLAS torch runs on -----------------------------------------------------

MKL_PROBE = """
import torch
a = torch.randn(256, 256)
torch.nn.functional.linear(a, a)
"""


def blas_info():
    """The library torch computes matrix products with and its kernel
    family: BLAS_INFO and the CPU capability of torch's build; for MKL the
    instruction set MKL_VERBOSE reports for one product (run in a child,
    with this environment: MKL_ENABLE_INSTRUCTIONS would show); for an
    OpenBLAS loaded in this process its openblas_get_corename()."""
    import ctypes
    import torch
    config = torch.__config__.show()
    capability = re.search(r"CPU capability usage: (\S+)", config)
    blas = re.search(r"BLAS_INFO=([^,\s]+)", config)
    mkl = re.search(r"Math Kernel Library Version ([^\s-]+)", config)
    info = {"torch": torch.__version__,
            "torch_blas_info": blas and blas.group(1),
            "torch_cpu_capability": capability and capability.group(1),
            "mkl_version": mkl and mkl.group(1),
            "openblas_coretype_env": os.environ.get("OPENBLAS_CORETYPE"),
            "mkl_enable_instructions_env":
                os.environ.get("MKL_ENABLE_INSTRUCTIONS"),
            "openblas_corename": None, "mkl_isa": None}
    if torch.backends.mkl.is_available():
        env = dict(os.environ, MKL_VERBOSE="1")
        probe = subprocess.run([sys.executable, "-c", MKL_PROBE], env=env,
                               capture_output=True, text=True, timeout=120)
        for line in probe.stdout.splitlines():
            # "MKL_VERBOSE oneMKL 2024.0 ... architecture Intel(R) Advanced
            # Vector Extensions 512 (Intel(R) AVX-512) with ..., Lnx ..."
            found = re.search(r"architecture (.*?),? Lnx", line)
            if line.startswith("MKL_VERBOSE") and found:
                isa = found.group(1)
                short = re.search(r"\(Intel\(R\) ([^)]+)\)", isa)
                info["mkl_isa"] = short.group(1) if short else isa
                info["mkl_isa_text"] = isa
                break
        info["mkl_sgemm_seen"] = "SGEMM" in probe.stdout
    # An OpenBLAS torch loaded itself (a torch built with BLAS=OpenBLAS).
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "openblas" in l.lower()
                       and l.split()[-1].startswith("/")})
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            info["openblas_corename"] = lib.openblas_get_corename().decode()
            break
        except (OSError, AttributeError):
            continue
    if info["torch_blas_info"] == "mkl" and info["mkl_isa"]:
        info["family"] = "MKL " + info["mkl_isa"]
    elif info["openblas_corename"]:
        info["family"] = "OpenBLAS " + info["openblas_corename"]
    else:
        info["family"] = info["torch_blas_info"] or "unknown"
    return info


# --- processes ------------------------------------------------------------------------

def setup(rank, world, store, threads):
    """gloo group and the 1-D mesh of all ranks; `threads` intra-op threads."""
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank,
                            world_size=world)
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    return init_device_mesh("cpu", (world,))


def finish(out):
    """The step's output, complete: DTensor's collectives are asynchronous
    (an AsyncCollectiveTensor waits on first use), so a step is timed until
    its output is ready; a DTensor output is gathered whole."""
    if hasattr(out, "full_tensor"):
        out = out.full_tensor()
    if hasattr(out, "wait"):
        out = out.wait()
    out.reshape(-1)[:1].tolist()  # first use: waits for pending collectives
    return out


def run_timing(rank, world, mesh, task):
    """Times one plan in one mode; rank 0's result (see `time`)."""
    import torch.distributed as dist
    plan = task.get("plan")
    if plan is None:
        with open(task["plan_path"]) as f:
            plan = json.load(f)
    tensors = llama.random_tensors(plan, task["seed"])
    model, inputs, _ = make_model(plan, tensors, mesh, task["mode"])
    del tensors

    def step():
        dist.barrier()
        start = time.perf_counter()
        finish(model(*inputs))
        return time.perf_counter() - start

    compile_s = None
    if task["mode"] == "compiled":
        # The first call compiles; every rank must agree it worked.
        try:
            compile_s = step()
            failed = None
        except Exception as e:  # noqa: BLE001 (any compiler error)
            failed = compile_reason(e)
        if torch_tp.agree(failed is not None, world):
            dist.barrier()
            return {"compile_error": failed or "failed on another rank"}
    budget = task["budget"]
    warm = []
    while len(warm) < max(task["warmup"], 1):
        warm.append(step())
        if budget and torch_tp.agree(sum(warm) > budget / 3, world):
            break
    iters = task["iters"]
    if budget:
        per_step = statistics.median(warm)
        iters = torch_tp.agree(
            max(3, min(iters, int(budget / max(per_step, 1e-6)))), world)
    if task.get("profile"):
        return {"profile": profile_steps(rank, step, iters), "iters": iters,
                "mode": task["mode"]}
    times = sorted(step() for _ in range(iters))
    return {"median_ms": 1e3 * times[len(times) // 2],
            "min_ms": 1e3 * times[0], "iters": iters, "warmup": len(warm),
            "mode": task["mode"], "compile_s": compile_s, "ranks": world,
            "threads": task["threads"]}


# Profiler event names: matrix products, attention, collectives.
GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
            "aten::_mkl_linear", "mkldnn::_linear_pointwise")
ATTENTION_OPS = ("aten::_scaled_dot_product_flash_attention_for_cpu",)
COLLECTIVE_WORDS = ("gloo", "c10d", "all_reduce", "allreduce", "all_gather",
                    "allgather", "wait_tensor")


def profile_steps(rank, step, iters):
    """Rank 0 profiles `iters` steps (torch.profiler, CPU): the self time
    per step of matrix products, attention, collectives and the rest, and
    the ops that took the most. The other ranks run the steps unprofiled."""
    from torch.profiler import ProfilerActivity, profile
    if rank != 0:
        for _ in range(iters):
            step()
        return None
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        wall = sum(step() for _ in range(iters))
    ms = {"gemm": 0.0, "attention": 0.0, "collective": 0.0}
    top = []
    for event in prof.key_averages():
        self_ms = event.self_cpu_time_total / 1e3 / iters
        name = event.key
        if name == "c10d::barrier":
            continue  # before each step's clock starts
        if name in GEMM_OPS:
            ms["gemm"] += self_ms
        elif name in ATTENTION_OPS:
            ms["attention"] += self_ms
        elif any(w in name.lower() for w in COLLECTIVE_WORDS):
            ms["collective"] += self_ms
        top.append({"name": name, "ms": self_ms})
    top.sort(key=lambda t: -t["ms"])
    step_ms = 1e3 * wall / iters
    return {"step_ms": step_ms, "gemm_ms": ms["gemm"],
            "attention_ms": ms["attention"],
            "collective_ms": ms["collective"],
            "top": [t for t in top if t["ms"] > 0][:8]}


def run_check(rank, world, mesh, task):
    """Each plan in the task's mode against torch_model.run_plan."""
    from dtensor_testing import torch_model
    results = []
    for plan, weights_dir in zip(task["plans"], task["weights_dirs"]):
        tensors = (llama.file_tensors(plan, weights_dir) if weights_dir
                   else llama.random_tensors(plan, task["seed"]))
        model, inputs, name = make_model(plan, tensors, mesh, task["mode"])
        try:
            got = finish(model(*inputs))
        except Exception as e:  # noqa: BLE001
            results.append({"kind": llama.model_config(plan)["kind"],
                            "compile_error": compile_reason(e)})
            continue
        if rank != 0:
            continue
        ref = torch_model.run_plan(plan, tensors)[name]
        results.append({"kind": llama.model_config(plan)["kind"],
                        "outputs": {name: torch_tp.compare_output(
                            got, ref, task["inject_error"])}})
    return results


def worker(rank, world, threads, store, task, result_path):
    import torch
    import torch.distributed as dist
    mesh = setup(rank, world, store, threads)
    try:
        task["threads"] = threads
        with torch.no_grad():
            result = (run_timing if task["kind"] == "time" else run_check)(
                rank, world, mesh, task)
        if rank == 0:
            with open(result_path, "w") as f:
                json.dump(result, f)
    finally:
        dist.destroy_process_group()


def launch(task, world, threads, attempts=2):
    """Runs `task` on `world` gloo ranks; rank 0's result. A rank that
    aborts (SIGABRT: gloo's threads now and then end a process with
    "terminate called without an active exception" on 2 busy cores) gets
    the whole run tried again, up to `attempts` runs; any other failure is
    raised at once."""
    import torch.multiprocessing as mp
    for attempt in range(1, attempts + 1):
        with tempfile.TemporaryDirectory(prefix="bench_dtensor.") as tmp:
            result_path = os.path.join(tmp, "result.json")
            try:
                mp.spawn(worker, args=(world, threads,
                                       os.path.join(tmp, "store"), task,
                                       result_path), nprocs=world, join=True)
            except mp.ProcessExitedException as error:
                if error.signal_name != "SIGABRT" or attempt == attempts:
                    raise
                print(f"torch_dtensor: rank {error.error_index} aborted "
                      f"(SIGABRT); run {attempt + 1} of {attempts}",
                      file=sys.stderr)
                continue
            with open(result_path) as f:
                return json.load(f)


def serve(ranks, threads):
    """As bench_torch.py serve (its loop, with this script's set-up and
    timing): R ranks kept alive, one JSON request per line on stdin, rank
    0's answer (with blas_info) as one line on stdout."""
    blas = blas_info()
    torch_tp.serve(ranks, threads, start=setup, run=run_timing,
                      defaults={"mode": "eager"}, extra={"blas": blas},
                      prefix="bench_dtensor.")


# --- main ------------------------------------------------------------------------------

def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["time", "check", "serve", "info"])
    p.add_argument("plans", nargs="*", metavar="PLAN.json")
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--threads", type=int,
                   help="threads per rank (default: cores / ranks)")
    p.add_argument("--mode", choices=MODES, default="eager",
                   help="eager, or compiled (torch.compile, Inductor)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--budget", type=float, default=0.0,
                   help="seconds of timed steps to aim for (0: --iters)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weights-dir", action="append", default=[],
                   help="check: make-test-tensors.py's folder for each plan")
    p.add_argument("--inject-error", action="store_true",
                   help="check: perturb the parallel result (must fail)")
    a = p.parse_args(argv)
    if a.ranks < 1:
        p.error("--ranks must be at least 1")
    if a.command == "time" and len(a.plans) != 1:
        p.error("time takes one plan")
    if a.command == "check" and not a.plans:
        p.error("check takes at least one plan")
    if a.command in ("serve", "info") and a.plans:
        p.error(f"{a.command} takes no plan")
    if a.weights_dir and len(a.weights_dir) != len(a.plans):
        p.error("give one --weights-dir per plan")
    try:
        import torch.distributed.tensor.parallel  # noqa: F401
    except ImportError as e:
        print(f"bench_dtensor: this torch has no DTensor ({e}); use "
              "$(scripts/torch-env.sh --python)", file=sys.stderr)
        return 2
    threads = a.threads or max(1, (os.cpu_count() or 1) // a.ranks)
    if a.command == "info":
        print(json.dumps(blas_info()))
        return 0
    if a.command == "serve":
        serve(a.ranks, threads)
        return 0
    plans = []
    for path in a.plans:
        with open(path) as f:
            plans.append(json.load(f))
    task = {"kind": a.command, "mode": a.mode, "warmup": a.warmup,
            "iters": a.iters, "budget": a.budget, "seed": a.seed,
            "inject_error": a.inject_error}
    if a.command == "time":
        task["plan"] = plans[0]
        result = launch(task, a.ranks, threads)
        result["blas"] = blas_info()
        print(json.dumps(result))
        return 0 if "compile_error" not in result else 1
    task["plans"] = plans
    task["weights_dirs"] = a.weights_dir or [None] * len(plans)
    failed = False
    for path, result in zip(a.plans, launch(task, a.ranks, threads)):
        head = (f"check {os.path.basename(path)} ({result['kind']}, "
                f"{a.ranks} ranks, dtensor {a.mode})")
        if "compile_error" in result:
            print(f"{head}: compile failed: {result['compile_error']}")
            failed = True
            continue
        for name, r in result["outputs"].items():
            error = (f"relative error {r['error']:.3g}"
                     if isinstance(r["error"], float)
                     else f"{r['error']} elements differ")
            verdict = "ok" if r["ok"] else "MISMATCH"
            print(f"{head} {name}{r['shape']}: {error}: {verdict}")
            failed |= not r["ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmarks of dtensor (scripts/bench.sh builds the tools, then runs
this): compiled programs side by side with PyTorch eager and with this
machine's ceilings.

  bench.py [--out DIR] [--build-dir DIR] [--quick] [--cases REGEX]
      [--ranks 1,2] [--iters N] [--warmup N] [--budget SECONDS]
      [--rounds N] [--no-compile-time] [--no-torch-tuned]
      [--compile-timeout SECONDS] [--no-self-check] [--case-timeout SECONDS]
      [--no-dtensor-peers] [--no-dtensor-compile] [--torch-python PYTHON]
      [--blas-coretype runtime|inherit|FAMILY]
      [--no-decode | --decode-only] [--decode-contexts 128,512,2048]
      [--decode-models REGEX] [--decode-tokens K] [--decode-batch B]
      [--decode-no-recompute] [--decode-no-torch] [--decode-no-max-seq-probe]
      [--no-context-parallel | --context-parallel-only] [--cp-seqs 8192,32768]
      [--cp-no-causal] [--cp-no-torch] [--cp-load-balance]

Steps, each printed as it starts:

1. ceilings: build/bin/dtensor-bench-ceilings measures the single-precision
   GEMM peak of OpenBLAS (every kernel family the CPU supports) and the
   streaming memory bandwidth, at the start and again at the end, with a
   quick probe of the best family's peak and of the bandwidth before each
   model's cases (the best of all is kept: other processes, in this VM or on
   its host, only ever lower them); the per-rank ceilings follow
   (ceilings_per_rank below). Kernel families: the GEMM peaks of the
   roofline are those of the family our programs really ran, which a
   64-row MLP step run with DTENSOR_VERBOSE=1 reports
   (openblas_get_corename()); when the tool's best family is another one,
   that family is probed alone. Our runtime loads a private copy of
   OpenBLAS with the family it picks (the CPU's best), whatever
   OPENBLAS_CORETYPE the environment presets; --blas-coretype sets its own
   setting, DTENSOR_BLAS_CORETYPE, for our programs and the ceilings:
   `runtime` (default) removes it (the runtime picks), `inherit` keeps the
   environment's, a family name sets it (the roofline is then that
   family's). Every side's family is reported
   (results.json kernel_families, the table's BLAS column);
2. self-check: the PyTorch tensor-parallel code (scripts/bench_torch.py)
   on 2 ranks gives the outputs of scripts/torch_model.py in one process,
   for a tiny MLP, block and Llama, on make-test-tensors.py's tensors;
3. cases: for each model and token count, plans from gen-model-plan.py (tp
   plan) compiled with `dtensor-compile --mesh R --comm-report=json
   --no-reference` and run with `dtensor-run -n R --warmup W --iters I
   --random-inputs 1`; the same model in PyTorch eager with manual
   Megatron-style parallelism on gloo (bench_torch.py time), as Debian ships
   it and, for reference, with OpenBLAS's AVX-512/AVX2 kernels selected as
   our runtime does (OPENBLAS_CORETYPE; "torch*" in the table). The sides
   are measured in --rounds rounds, one after the other within each round,
   and each keeps its best median: the machine may be shared, and load
   from elsewhere must hit all sides alike. PyTorch runs in
   `bench_torch.py serve` processes started once per rank count and BLAS
   setting. The PyTorch 2 peers (scripts/bench_dtensor.py serve, with the
   interpreter of --torch-python or `scripts/torch-env.sh --python`; none:
   a message and no such columns): the model as nn.Modules with DTensor's
   parallelize_module and the standard Llama plan, eager ("DTensor
   eager") and under torch.compile ("DTensor compiled", Inductor; a case
   it cannot compile keeps the reason and an empty cell;
   --no-dtensor-compile skips the column, --no-dtensor-peers both), first
   self-checked against torch_model.py on the tiny models. Ratios: peer
   ms / ours ms. A peer faster than ours is profiled (torch.profiler) and
   listed with the reasons the measurements give (kernel families, our
   products alone against its step, its step's breakdown);
4. decode (scripts/bench_decode.py; --no-decode skips it, --decode-only
   runs the ceilings and it alone): the decode step with the KV cache
   (`dtensor-run --generate`) of the llama_tiny shapes and a GQA model of
   dim 2048 at contexts --decode-contexts, on --ranks, side by side with
   the stateless plan recomputing the whole sequence and with PyTorch eager
   generating with a KV cache (scripts/torch_generate.py --time), the
   KV-cache bytes per rank and the roofline of a step (its weight shards
   and the context's cache rows over the memory bandwidth per rank); a
   table of its own in results.md and `decode` in results.json;
5. context parallelism (scripts/bench_context_parallel.py;
   --no-context-parallel skips it, --context-parallel-only runs the
   ceilings and it alone): a long prefill (--cp-seqs tokens, default 8192
   and 32768) through one block of width 64 with causal attention, the
   sequence sharded over --ranks (plan.context_parallel): step time, peak
   memory per rank, bytes sent per rank and the ratios to 1 rank, beside
   PyTorch's context_parallel on the same block (scripts/bench_torch_cp.py
   with the PyTorch 2 peers' interpreter; --cp-no-torch skips it); a table
   of its own in results.md and `context_parallel` in results.json;
6. compile time: `dtensor-compile` (default -O3, --no-reference) of the
   32-layer 7B-shaped plan (gen-model-plan.py --preset 7b --plan tp --mesh 2):
   wall time and peak resident memory.

Writes DIR/results.json (everything measured), DIR/results.md (the tables)
and DIR/results.png (matplotlib, if installed), plus the plans, artifacts
and logs under DIR/work.

Definitions (also in results.md):
- FLOPs: 2*M*N*K for every matrix product, attention's two included (the
  full L x S score matrix: neither side skips the masked half); elementwise
  work, norms, softmax and reductions are not counted. Per rank: the
  products the tp plan splits count 1/R.
- bytes: the least traffic a step needs per rank: its weight shards, the
  embedding rows it looks up, the step's inputs and outputs, each once;
  and its activations: each intermediate tensor (views excepted, attention's
  scores included) written once and read once, in f32 (see
  activation_bytes).
- roofline time per rank: max(FLOPs / GEMM peak, bytes / bandwidth) with the
  ceilings of R ranks of cores/R threads each; "% roofline" is roofline time
  over measured median time.
- bound: GEMM-bound when FLOPs/bytes exceeds the machine balance (peak /
  bandwidth), else memory-bound.
"""

import argparse
import fnmatch
import importlib.util
import json
import math
import os
import platform
import re
import select
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_support import run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
START = time.monotonic()

# --- cases -------------------------------------------------------------------------------

# Models: gen-model-plan.py arguments. The tiny ones are the examples'
# sizes (examples/mlp.json, transformer_block.json, llama_tiny.json); the
# large ones are sized so that compute dominates their prefill.
MODELS = {
    "mlp": ["--model", "mlp", "--dim", "64", "--ffn", "128"],
    "block": ["--model", "block", "--layers", "1", "--dim", "64", "--heads",
              "4", "--ffn", "128"],
    "llama_tiny": ["--model", "llama", "--layers", "2", "--dim", "64",
                   "--heads", "4", "--ffn", "128", "--vocab", "256"],
    "mlp_large": ["--model", "mlp", "--dim", "2048", "--ffn", "8192"],
    "block_large": ["--model", "block", "--layers", "1", "--dim", "2048",
                    "--heads", "16", "--ffn", "8192"],
}

# Token counts: (name, batch, seq). Decode-like: one new token per sequence
# (seq 1); prefill-like: one long sequence.
SHAPES = {
    "decode1": (1, 1),
    "decode8": (8, 1),
    "prefill256": (1, 256),
    "prefill1024": (1, 1024),
    "prefill2048": (1, 2048),
}

FULL_SUITE = {
    "mlp": ["decode1", "decode8", "prefill256", "prefill2048"],
    "block": ["decode1", "decode8", "prefill256", "prefill2048"],
    "llama_tiny": ["decode1", "decode8", "prefill256", "prefill2048"],
    "mlp_large": ["decode1", "decode8", "prefill256", "prefill1024"],
    "block_large": ["decode1", "decode8", "prefill256", "prefill1024"],
}
QUICK_SUITE = {"mlp": ["decode8"], "block": ["decode8"],
               "llama_tiny": ["decode8"]}

# The targets.
TARGET_GEMM = 0.80      # GEMM-bound: of the GEMM peak per rank
TARGET_BANDWIDTH = 0.70  # decode: of the memory bandwidth per rank
TARGET_SPEEDUP = 2.0     # every case: over PyTorch eager
TARGET_COMPILE_S = 30.0  # the 32-layer plan


def log(message):
    """Progress on stderr, with the time since the start."""
    elapsed = time.monotonic() - START
    print(f"[bench {int(elapsed) // 60:2d}:{int(elapsed) % 60:02d}] {message}",
          file=sys.stderr, flush=True)


def load_script(name, filename):
    """scripts/<filename> as a module named `name`."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(SCRIPTS, filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_make_test_tensors():
    """scripts/make-test-tensors.py as a module (its shape inference)."""
    return load_script("make_test_tensors", "make-test-tensors.py")


# The decode table.
bench_decode = load_script("bench_decode", "bench_decode.py")
bench_cp = load_script("bench_context_parallel", "bench_context_parallel.py")


# --- ceilings --------------------------------------------------------------------------

def blas_env(a, base=None):
    """The environment of the processes whose OpenBLAS kernel family the
    bench controls (dtensor-run, dtensor-bench-ceilings): see
    --blas-coretype. A preset OPENBLAS_CORETYPE stays: our runtime's
    private OpenBLAS does not read it."""
    env = dict(os.environ if base is None else base)
    if a.blas_coretype == "runtime":
        env.pop("DTENSOR_BLAS_CORETYPE", None)
    elif a.blas_coretype != "inherit":
        env["DTENSOR_BLAS_CORETYPE"] = a.blas_coretype
    return env


def measure_ceilings(a, work, when, family=None):
    """dtensor-bench-ceilings; with `family`, a quick probe of that kernel
    family's peak and of the bandwidth (a few seconds)."""
    log(f"ceilings ({when}): " + (f"probe of the {family} peak and stream "
                                  "bandwidth" if family else
                                  "GEMM peak per OpenBLAS kernel family, "
                                  "stream bandwidth"))
    path = os.path.join(work, f"ceilings-{when}.json")
    cmd = [os.path.join(a.bin_dir, "dtensor-bench-ceilings"), "-o", path]
    if a.quick:
        cmd.append("--quick")
    if family:
        cmd += ["--families", family, "--gemm-reps", "3", "--stream-reps", "3"]
    run(cmd, env=blas_env(a))
    with open(path) as f:
        ceil = json.load(f)
    g, s = ceil["gemm"], ceil["stream"]
    log(f"  sgemm {g['peak_1thread_gflops']:.1f} GFLOP/s on 1 thread "
        f"({g['best_coretype']}), {g['peak_all_threads_gflops']:.1f} on "
        f"{g['all_threads']}, {g['concurrent_min_gflops']:.1f} per process "
        f"with {g['concurrent_1thread_processes']}; stream triad "
        f"{s['threads_1']['triad_gbps']:.1f} GB/s on 1 thread, "
        f"{s['threads_all']['triad_gbps']:.1f} on {s['all_threads']}")
    return ceil


def best_ceilings(runs, family=None):
    """Field by field, the best of several ceiling measurements (the first
    one measures every kernel family): other processes, in this VM or on
    its host, only ever lower a measurement. The GEMM peaks are those of
    `family`, the kernel family our programs ran (default: the best one):
    its 1-thread peak, and the all-core and concurrent peaks of the runs
    that measured them with it (the tool measures those with the best
    family it ran, so bench.py probes `family` alone when that differs).
    Families are matched by name, whatever the CPU lists."""
    best = json.loads(json.dumps(runs[0]))
    g = best["gemm"]
    by_core = {f["coretype"]: f for f in g["families"]}
    for other in runs[1:]:
        for fam2 in other["gemm"]["families"]:
            fam = by_core.get(fam2["coretype"])
            if fam is None:
                g["families"].append(json.loads(json.dumps(fam2)))
                by_core[fam2["coretype"]] = g["families"][-1]
            elif fam2["ok"]:
                fam["gflops"] = max(fam["gflops"] if fam["ok"] else 0,
                                    fam2["gflops"])
                fam["ok"] = True
        for threads in ("threads_1", "threads_all"):
            for kernel, value in other["stream"][threads].items():
                best["stream"][threads][kernel] = max(
                    best["stream"][threads][kernel], value)
    runnable = [f for f in g["families"] if f["ok"] and f["honoured"]]
    g["best_coretype"] = max(runnable, key=lambda f: f["gflops"])["coretype"]
    roofline = family if family in by_core else g["best_coretype"]
    g["roofline_coretype"] = roofline
    g["roofline_corename"] = by_core[roofline]["corename"]
    same = [r["gemm"] for r in runs if r["gemm"]["best_coretype"] == roofline]
    g["roofline_family_runs"] = len(same)
    if same:
        for key in ("peak_all_threads_gflops", "concurrent_min_gflops"):
            g[key] = max(r[key] for r in same)
        g["concurrent_per_process_gflops"] = max(
            (r["concurrent_per_process_gflops"] for r in same), key=min)
    g["peak_1thread_gflops"] = by_core[roofline]["gflops"]
    best["measurements"] = len(runs)
    return best


def ceilings_per_rank(ceil, ranks):
    """GEMM peak and memory bandwidth one rank can count on when `ranks`
    ranks of cores/ranks threads each run at once: the best family's peak
    with all cores (1 rank), the slowest of the concurrent 1-thread
    processes (one rank per core) or the 1-thread peak; the bandwidth of
    all cores shared by the ranks (the best of the stream kernels)."""
    cores = ceil["cpu"]["cores"]
    threads = max(1, cores // ranks)
    gemm = ceil["gemm"]
    if threads >= cores:
        peak = gemm["peak_all_threads_gflops"]
    elif threads == 1 and ranks == cores:
        peak = gemm["concurrent_min_gflops"]
    else:
        peak = gemm["peak_1thread_gflops"] * threads
    stream = ceil["stream"]["threads_all"]
    bandwidth = max(stream.values()) / ranks
    return {"ranks": ranks, "threads": threads, "gemm_gflops": peak,
            "bandwidth_gbps": bandwidth,
            "l2_bytes": ceil["cpu"].get("l2_bytes", 0),
            "balance_flop_per_byte": peak / bandwidth}


# --- plans, FLOPs and bytes -----------------------------------------------------------

def generate_plan(model, shape, ranks, path):
    batch, seq = SHAPES[shape]
    run([sys.executable, os.path.join(SCRIPTS, "gen-model-plan.py")] +
        MODELS[model] + ["--batch", str(batch), "--seq", str(seq),
                         "--plan", "tp", "--mesh", str(ranks), "-o", path])
    with open(path) as f:
        return json.load(f)


def style_of(plan, module):
    """The tp style (colwise/rowwise/...) the plan gives a module, if any."""
    for pattern, style in plan.get("plan", {}).get("styles", {}).items():
        if fnmatch.fnmatchcase(module, pattern):
            return style if isinstance(style, str) else style.get("style")
    return None


def gemm_list(plan, ranks, shapes_of):
    """The matrix products of one step on one rank, for
    `dtensor-bench-ceilings --gemm-list`: "BxMxNxKxT" each (T: t when the
    right operand is stored N x K, as a linear's weight). A split dim counts
    its largest shard."""
    model = plan["model"]
    shapes = shapes_of(model)

    def part(size, split):
        return -(-size // split)

    items = []
    for op in model["ops"]:
        kind, ins = op["op"], [shapes[n] for n in op["inputs"]]
        module = op.get("module", "")
        style = style_of(plan, module)
        if kind == "linear":
            m, k, n = math.prod(ins[0][:-1]), ins[0][-1], ins[1][0]
            if style == "colwise":
                n = part(n, ranks)
            elif style == "rowwise":
                k = part(k, ranks)
            items.append(f"1x{m}x{n}x{k}xt")
        elif kind in ("matmul", "bmm"):
            m, k, n = ins[0][-2], ins[0][-1], ins[1][-1]
            items.append(f"{math.prod(ins[0][:-2])}x{m}x{n}x{k}xn")
        elif kind == "scaled_dot_product_attention":
            q, kk, v = ins[:3]
            heads = q[-3] if len(q) >= 3 else 1
            if style_of(plan, module + ".wq") == "colwise":
                heads = part(heads, ranks)
            batch = math.prod(q[:-3]) * heads
            length, source, e = q[-2], kk[-2], q[-1]
            items.append(f"{batch}x{length}x{source}x{e}xt")   # q k^T
            items.append(f"{batch}x{length}x{v[-1]}x{source}xn")  # p v
    return ",".join(i for i in items if "x0x" not in i)


def count_work(plan, ranks, shapes_of):
    """FLOPs and minimal bytes of one step, in total and per rank (see the
    definitions in the module docstring)."""
    model = plan["model"]
    shapes = shapes_of(model)
    params = {p["name"]: p for p in model.get("parameters", [])}
    elt = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8}

    def numel(shape):
        return math.prod(shape) if shape else 1

    flops = flops_rank = 0.0
    weight_bytes = weight_bytes_rank = 0.0
    for op in model["ops"]:
        kind, ins = op["op"], [shapes[n] for n in op["inputs"]]
        module = op.get("module", "")
        style = style_of(plan, module)
        split = ranks if style in ("colwise", "rowwise") else 1
        if kind == "linear":
            m, k, n = numel(ins[0][:-1]), ins[0][-1], ins[1][0]
            f = 2.0 * m * n * k
        elif kind in ("matmul", "bmm"):
            m, k, n = ins[0][-2], ins[0][-1], ins[1][-1]
            f = 2.0 * numel(ins[0][:-2]) * m * n * k
        elif kind == "scaled_dot_product_attention":
            q, kk, v = ins[:3]
            batch, length, e = numel(q[:-2]), q[-2], q[-1]
            f = 2.0 * batch * length * kk[-2] * (e + v[-1])
            # Heads are split when the projections are column-parallel.
            split = ranks if style_of(plan, module + ".wq") == "colwise" else 1
        else:
            f = 0.0
        flops += f
        flops_rank += f / split
        # Weights: each read once; an embedding only its looked-up rows.
        for i, name in enumerate(op["inputs"]):
            if name not in params:
                continue
            size = numel(params[name]["shape"]) * elt[params[name]["dtype"]]
            share = split
            if kind == "embedding":
                size = numel(ins[0]) * ins[1][1] * elt[params[name]["dtype"]]
                share = ranks if style == "rowwise" else 1
            elif style == "rowwise" and i == 2:
                share = 1  # a row-parallel bias is added once, whole
            weight_bytes += size
            weight_bytes_rank += size / share
    io = sum(numel(t["shape"]) * elt[t["dtype"]] for t in model["inputs"])
    decl = {n: shapes[n] for n in model["outputs"]}
    out_dtype = {}
    for op in model["ops"]:
        name = op.get("output")
        if name in decl:
            out_dtype[name] = "i64" if op["op"] == "argmax" else "f32"
    io += sum(numel(s) * elt[out_dtype.get(n, "f32")] for n, s in decl.items())
    act, act_rank = activation_bytes(plan, ranks, shapes)
    return {"flops": flops, "flops_per_rank": flops_rank,
            "bytes": weight_bytes + io + act,
            "bytes_per_rank": weight_bytes_rank + io + act_rank,
            "weight_bytes": weight_bytes, "activation_bytes": act,
            "activation_bytes_per_rank": act_rank}


# Ops that only reinterpret their input's layout: no bytes of their own.
VIEW_OPS = ("view", "reshape")


def activation_bytes(plan, ranks, shapes):
    """Bytes of the step's intermediate tensors, in total and per rank: each
    op output that is not a step output written once and read once (f32, as
    our programs compute them), and for attention its L x S scores, written
    and read once more. A tensor counts 1/R per rank when it is split: the
    output of a column-parallel linear, attention whose query projection is
    column-parallel, and ops on a split first input (a row-parallel linear's
    output is whole after its all-reduce). Without them a dim-64 model, whose
    weights are a few KiB, passed for GEMM-bound while its steps move
    megabytes of activations."""
    model = plan["model"]
    outputs = set(model["outputs"])
    split = {}
    total = per_rank = 0.0
    for op in model["ops"]:
        kind, name = op["op"], op.get("output")
        module = op.get("module", "")
        style = style_of(plan, module)
        if kind == "linear":
            parts = ranks if style == "colwise" else 1
        elif kind == "scaled_dot_product_attention":
            parts = ranks if style_of(plan, module + ".wq") == "colwise" else 1
        else:
            parts = split.get(op["inputs"][0], 1) if op["inputs"] else 1
        split[name] = parts
        size = 0.0
        if name not in outputs and kind not in VIEW_OPS and name in shapes:
            size = 2.0 * 4 * math.prod(shapes[name])
        if kind == "scaled_dot_product_attention":
            q, k = shapes[op["inputs"][0]], shapes[op["inputs"][1]]
            size += 2.0 * 4 * math.prod(q[:-1]) * k[-2]
        total += size
        per_rank += size / parts
    return total, per_rank


# --- ours --------------------------------------------------------------------------------

def compile_case(a, plan_path, ranks, artifact):
    """dtensor-compile with the communication report; returns the seconds
    it took and the collective bytes per rank of the entry function."""
    if os.path.exists(artifact):
        shutil.rmtree(artifact)
    start = time.monotonic()
    result = run([os.path.join(a.bin_dir, "dtensor-compile"), plan_path,
                  "-o", artifact, "--mesh", str(ranks), "--no-reference",
                  "--comm-report=json"])
    seconds = time.monotonic() - start
    report = json.loads(result.stdout[result.stdout.index("{"):])
    total = {"calls": 0, "bytes_per_rank": 0}
    for fn in report["functions"]:
        total["calls"] += fn["total"]["calls"]
        known = fn["total"].get("bytes_per_rank")
        if known is None:
            known = fn["total"].get("known_bytes_per_rank", 0)
        total["bytes_per_rank"] += known
    return seconds, total


def choose_iters(a, estimate_s):
    """Timed and warm-up steps from an estimated step time: about
    a.budget seconds of timed steps (5 .. 2000), unless --iters fixes it."""
    if a.iters:
        return a.iters, a.warmup if a.warmup is not None else 3
    fewest = 3 if estimate_s > 0.3 else 5
    iters = int(min(2000, max(fewest, a.budget / max(estimate_s, 1e-6))))
    warmup = int(min(50, max(1 if estimate_s > 0.2 else 2, iters // 10)))
    if a.warmup is not None:
        warmup = a.warmup
    return iters, warmup


def run_ours(a, artifact, ranks, iters, warmup):
    env = blas_env(a)
    env["DTENSOR_VERBOSE"] = "1"  # each rank prints OpenBLAS's core name
    result = run([os.path.join(a.bin_dir, "dtensor-run"), artifact,
                  "-n", str(ranks), "--warmup", str(warmup), "--iters",
                  str(iters), "--random-inputs", "1"], timeout=a.case_timeout,
                 env=env)
    match = re.search(r"ran (\d+) steps? on (\d+) ranks?: median ([0-9.]+) ms, "
                      r"min ([0-9.]+) ms", result.stdout)
    if not match:
        raise RuntimeError("no timing line in dtensor-run's output:\n" +
                           result.stdout + result.stderr)
    cores = sorted(set(re.findall(r"OpenBLAS core (\S+)",
                                  result.stdout + result.stderr)))
    return {"median_ms": float(match.group(3)), "min_ms": float(match.group(4)),
            "iters": int(match.group(1)), "warmup": warmup,
            # None: no product went to OpenBLAS (the runtime's own kernels).
            "openblas_corename": ",".join(cores) or None}


def detect_runtime_family(a, work, ceil):
    """The OpenBLAS kernel family our programs run under this bench's
    conditions: a 64-row MLP step (its products go to OpenBLAS) run with
    DTENSOR_VERBOSE=1, which prints openblas_get_corename(). Returns the
    core name and the ceilings tool's family of that name ("auto" when it
    is none the tool lists by name but OpenBLAS's own pick)."""
    plan = os.path.join(work, "blas-probe.json")
    artifact = os.path.join(work, "blas-probe.dtc")
    run([sys.executable, os.path.join(SCRIPTS, "gen-model-plan.py"), "--model",
         "mlp", "--dim", "64", "--ffn", "128", "--batch", "1", "--seq", "64",
         "--plan", "tp", "--mesh", "1", "-o", plan])
    if os.path.exists(artifact):
        shutil.rmtree(artifact)
    run([os.path.join(a.bin_dir, "dtensor-compile"), plan, "-o", artifact,
         "--mesh", "1", "--no-reference"])
    measured = run_ours(a, artifact, 1, 1, 0)
    shutil.rmtree(artifact, ignore_errors=True)
    core = measured["openblas_corename"]
    families = ceil["gemm"]["families"]
    family = next((f["coretype"] for f in families if core and
                   f["coretype"].lower() == core.lower()), None)
    if family is None:
        family = next((f["coretype"] for f in families if core and
                       (f["corename"] or "").lower() == core.lower()), "auto")
    return core, family


# --- PyTorch ---------------------------------------------------------------------------------

class TorchServer:
    """A `bench_torch.py serve` process: `ranks` PyTorch ranks with
    cores/ranks threads each, kept running between measurements; `coretype`
    is OPENBLAS_CORETYPE for torch's OpenBLAS (None: as shipped). With
    `python` set, a `bench_dtensor.py serve` process of that interpreter
    instead (the PyTorch 2 DTensor peers; `coretype` unused)."""

    def __init__(self, ranks, coretype, timeout, python=None):
        self.ranks, self.coretype, self.timeout = ranks, coretype, timeout
        self.python = python
        self.script = "bench_dtensor.py" if python else "bench_torch.py"
        self.proc = None
        self.ready = None

    def start(self):
        threads = max(1, (os.cpu_count() or 1) // self.ranks)
        env = dict(os.environ)
        env.pop("OPENBLAS_CORETYPE", None)
        # All of torch's thread pools (OpenMP, OpenBLAS, MKL) get the rank's
        # share.
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                     "MKL_NUM_THREADS"):
            env[name] = str(threads)
        cmd = [self.python or sys.executable,
               os.path.join(SCRIPTS, self.script), "serve",
               "--ranks", str(self.ranks), "--threads", str(threads)]
        if self.coretype and not self.python:
            cmd += ["--openblas-coretype", self.coretype]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self.ready = self._read()  # {"ready": true, ...}

    def _read(self):
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.stop()
            raise RuntimeError(f"{self.script} serve (ranks {self.ranks}) "
                               f"gave no answer" + ("" if ready else
                                                    " in time"))
        return json.loads(line)

    def time(self, request):
        if self.proc is None:
            self.start()
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        result = self._read()
        if "error" in result:
            self.stop()  # its ranks may be out of step: start afresh
            raise RuntimeError("PyTorch failed:\n" + result["error"])
        return result

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def dtensor_python(a):
    """The interpreter of the PyTorch 2 peers (--torch-python, else
    scripts/torch-env.sh --python, which makes the environment when it is
    missing) and None with the reason when there is none: the bench then
    runs without those columns."""
    if a.no_dtensor_peers:
        return None, "--no-dtensor-peers"
    python = a.torch_python
    if not python:
        log("PyTorch 2 peers: scripts/torch-env.sh --python (makes the "
            "environment if it is missing)")
        try:
            result = run([os.path.join(SCRIPTS, "torch-env.sh"), "--python"],
                         timeout=1800, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"scripts/torch-env.sh: {e}"
        lines = result.stdout.strip().splitlines()
        if result.returncode != 0 or not lines:
            tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
            return None, (f"scripts/torch-env.sh failed ({result.returncode}): "
                          f"{tail}")
        python = lines[-1].strip()
    try:
        probe = run([python, os.path.join(SCRIPTS, "bench_dtensor.py"),
                     "info"], timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{python} cannot run bench_dtensor.py: {e}"
    if probe.returncode != 0:
        tail = ((probe.stderr or probe.stdout).strip().splitlines()
                or ["no output"])[-1]
        return None, f"{python} cannot run bench_dtensor.py: {tail}"
    return python, json.loads(probe.stdout.strip().splitlines()[-1])


def run_gemms_alone(a, case, coretype, reps):
    """The step's matrix products alone, through our runtime's matrix
    products (OpenBLAS with the kernel family it selects, or its own kernels
    for products of up to 8 rows) and threads: one process per rank, all at once (they share the
    cores and the memory bus as the ranks do); the slowest rank's median
    pass."""
    ranks = case["ranks"]
    threads = max(1, (os.cpu_count() or 1) // ranks)
    cmd = [os.path.join(a.bin_dir, "dtensor-bench-ceilings"), "--gemm-list",
           coretype or "auto", str(threads), case["gemm_list"], str(reps)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                              env=blas_env(a))
             for _ in range(ranks)]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=a.case_timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"dtensor-bench-ceilings --gemm-list failed: {out}")
        results.append(json.loads(out))
    slowest = max(results, key=lambda r: r["median_ms"])
    return {"median_ms": slowest["median_ms"], "gflops_per_rank": slowest["gflops"],
            "reps": reps, "products": slowest["products"],
            "openblas_corename": slowest.get("corename")}


def best_round(runs):
    """One side's result over the rounds: the round with the smallest median
    (interference from other processes only ever slows a round down); every
    round's median is kept."""
    best = dict(min(runs, key=lambda r: r["median_ms"]))
    best["round_medians_ms"] = [r["median_ms"] for r in runs]
    return best


def torch_request(a, plan_path):
    request = {"plan_path": plan_path, "seed": 0,
               "warmup": a.warmup if a.warmup is not None else 3}
    if a.iters:
        request.update(iters=a.iters, budget=0)
    else:
        request.update(iters=2000, budget=a.budget)
    return request


def self_check(a, work):
    """The torch tensor-parallel code on 2 ranks against torch_model.py."""
    log("self-check: PyTorch tensor-parallel code (2 ranks) == torch_model.py "
        "(1 process) on tiny plans")
    plans, dirs = [], []
    for model in ("mlp", "block", "llama_tiny"):
        path = os.path.join(work, f"check-{model}.json")
        run([sys.executable, os.path.join(SCRIPTS, "gen-model-plan.py")] +
            MODELS[model] + ["--batch", "2", "--seq", "8", "--plan", "tp",
                             "-o", path])
        tensors = os.path.join(work, f"check-{model}")
        run([sys.executable, os.path.join(SCRIPTS, "make-test-tensors.py"),
             path, "-d", tensors])
        plans.append(path)
        dirs += ["--weights-dir", tensors]
    result = run([sys.executable, os.path.join(SCRIPTS, "bench_torch.py"),
                  "check"] + plans + ["--ranks", "2"] + dirs, check=False)
    lines = [l for l in result.stdout.splitlines() if l.startswith("check ")]
    for line in lines:
        log("  " + line)
    ok = result.returncode == 0 and len(lines) == len(plans)
    if not ok:
        log("self-check FAILED:\n" + result.stdout + result.stderr)
    checks = {"ok": ok, "lines": lines}
    if a.dtensor_python:
        checks["dtensor"] = {}
        for mode in a.dtensor_modes:
            log(f"self-check: PyTorch 2 DTensor peer ({mode}, 2 ranks) == "
                "torch_model.py (1 process)")
            result = run([a.dtensor_python,
                          os.path.join(SCRIPTS, "bench_dtensor.py"), "check"]
                         + plans + ["--ranks", "2", "--mode", mode] + dirs,
                         check=False, timeout=a.case_timeout)
            lines = [l for l in result.stdout.splitlines()
                     if l.startswith("check ")]
            for line in lines:
                log("  " + line)
            # A model torch.compile cannot compile is noted, not a failure;
            # a wrong result is.
            compiled = [l for l in lines if "compile failed" not in l]
            mode_ok = (len(lines) == len(plans) and
                       all(l.endswith(": ok") for l in compiled))
            if not mode_ok:
                log(f"self-check ({mode}) FAILED:\n" + result.stdout +
                    result.stderr[-4000:])
            checks["dtensor"][mode] = {"ok": mode_ok, "lines": lines}
            checks["ok"] = checks["ok"] and mode_ok
    return checks


# --- compile time ------------------------------------------------------------------------------

# Runs a command and prints its wall time and the peak resident memory of
# its process tree (the largest of the waited-for children).
RUSAGE_WRAPPER = """
import json, resource, subprocess, sys, time
start = time.monotonic()
try:
    code = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                          timeout=float(sys.argv[1])).returncode
except subprocess.TimeoutExpired:
    code = None
wall = time.monotonic() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"returncode": code, "wall_s": wall, "peak_rss_kib": rss}))
"""


def compile_time(a, work):
    preset = "tiny" if a.quick else "7b"
    log(f"compile time: gen-model-plan.py --preset {preset} --plan tp --mesh 2, "
        f"dtensor-compile --no-reference (timeout {a.compile_timeout:.0f} s)")
    plan_path = os.path.join(work, f"compile-{preset}.json")
    run([sys.executable, os.path.join(SCRIPTS, "gen-model-plan.py"), "--preset",
         preset, "--plan", "tp", "--mesh", "2", "-o", plan_path])
    with open(plan_path) as f:
        plan = json.load(f)
    artifact = os.path.join(work, f"compile-{preset}.dtc")
    if os.path.exists(artifact):
        shutil.rmtree(artifact)
    cmd = [os.path.join(a.bin_dir, "dtensor-compile"), plan_path, "-o",
           artifact, "--no-reference"]
    result = run([sys.executable, "-c", RUSAGE_WRAPPER,
                  str(a.compile_timeout)] + cmd, timeout=a.compile_timeout + 60)
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    layers = len([p for p in plan["model"]["parameters"]
                  if p["name"].endswith("attention.wq.weight")])
    entry = {"plan": f"gen-model-plan.py --preset {preset} --plan tp --mesh 2",
             "layers": layers, "ops": len(plan["model"]["ops"]),
             "command": " ".join(["dtensor-compile", os.path.basename(plan_path),
                                  "-o", os.path.basename(artifact),
                                  "--no-reference"]),
             "opt_level": 3, "timeout_s": a.compile_timeout, **measured}
    entry["timed_out"] = measured["returncode"] is None
    entry["ok"] = measured["returncode"] == 0
    entry["target_s"] = TARGET_COMPILE_S
    entry["target_met"] = entry["ok"] and measured["wall_s"] <= TARGET_COMPILE_S
    if os.path.exists(artifact):
        shutil.rmtree(artifact)  # gigabytes of nothing we need
    log(f"  {measured['wall_s']:.1f} s, peak RSS "
        f"{measured['peak_rss_kib'] / 1024:.0f} MiB"
        + (" (timed out)" if entry["timed_out"] else "")
        + ("" if entry["ok"] or entry["timed_out"] else " (FAILED)"))
    return entry


# --- analysis ------------------------------------------------------------------------------------

def analyse(case, per_rank):
    """Rates, roofline and the targets of one measured case."""
    t = case["ours"]["median_ms"] / 1e3
    work = case["work"]
    peak, bw = per_rank["gemm_gflops"], per_rank["bandwidth_gbps"]
    case["gflops_per_rank"] = work["flops_per_rank"] / t / 1e9
    case["gbps_per_rank"] = work["bytes_per_rank"] / t / 1e9
    compute_s = work["flops_per_rank"] / (peak * 1e9)
    memory_s = work["bytes_per_rank"] / (bw * 1e9)
    case["roofline_ms"] = 1e3 * max(compute_s, memory_s)
    case["fraction_of_roofline"] = case["roofline_ms"] / case["ours"]["median_ms"]
    intensity = work["flops_per_rank"] / work["bytes_per_rank"]
    case["intensity_flop_per_byte"] = intensity
    case["bound"] = ("gemm" if intensity >= per_rank["balance_flop_per_byte"]
                     else "memory")
    # A step whose bytes fit in a core's private L2 is not limited by the
    # memory bandwidth (which the roofline then underestimates).
    case["fits_in_l2"] = work["bytes_per_rank"] <= per_rank["l2_bytes"]
    case["fraction_of_gemm_peak"] = case["gflops_per_rank"] / peak
    case["fraction_of_bandwidth"] = case["gbps_per_rank"] / bw
    if case.get("gemms_alone"):
        # The share of our step its matrix products alone would take.
        case["gemm_share"] = min(1.0, case["gemms_alone"]["median_ms"] /
                                 case["ours"]["median_ms"])
    for key in PEERS:
        if "median_ms" in case.get(key, {}):
            case["speedup_" + key] = (case[key]["median_ms"] /
                                      case["ours"]["median_ms"])
    case["faster_peers"] = faster_peers(case)
    targets = []
    if case["bound"] == "gemm":
        targets.append(target("gemm_peak", case["fraction_of_gemm_peak"],
                              TARGET_GEMM))
    if case["tokens"] <= 8:
        targets.append(target("bandwidth", case["fraction_of_bandwidth"],
                              TARGET_BANDWIDTH))
        targets[-1]["fits_in_l2"] = case["fits_in_l2"]
    if case.get("speedup_torch") is not None:
        targets.append(target("speedup_vs_torch", case["speedup_torch"],
                              TARGET_SPEEDUP))
    case["targets"] = targets


# Every peer column: results key, table label.
PEERS = {"torch": "torch", "torch_tuned": "torch*",
         "dtensor_eager": "DTensor eager", "dtensor_compiled": "DTensor compiled"}


def peer_family(case, key):
    """The BLAS kernel family a peer's matrix products ran on."""
    blas = case.get(key, {}).get("blas") or {}
    if blas.get("family"):
        return blas["family"]
    if blas.get("openblas_corename"):
        return "OpenBLAS " + blas["openblas_corename"]
    return blas.get("torch_blas_info") or "?"


def faster_peers(case):
    """The peers faster than ours in this case, each with the reason the
    measurements give: the BLAS kernel families, our matrix products alone
    against the peer's whole step, and (DTensor peers, profiled when
    faster) where the peer's step time goes."""
    ours = case["ours"]["median_ms"]
    alone = case.get("gemms_alone", {}).get("median_ms")
    ours_family = "OpenBLAS " + (case["ours"].get("openblas_corename")
                                 or "not called (runtime's own kernels)")
    found = []
    for key, label in PEERS.items():
        peer = case.get(key, {}).get("median_ms")
        if peer is None or peer >= ours:
            continue
        reasons = []
        family = peer_family(case, key)
        if family != ours_family:
            reasons.append(f"matrix products on {family}, ours on "
                           f"{ours_family}")
        profile = case[key].get("profile")
        if alone is not None:
            rest = ours - alone
            if profile and profile.get("gemm_ms") is not None:
                # The profiler slows the peer's steps down: its shares, not
                # its times, are carried over to the measured median.
                share = min(1.0, (profile["gemm_ms"] +
                                  profile.get("attention_ms", 0.0)) /
                            max(profile["step_ms"], 1e-9))
                reasons.append(
                    f"products (attention's included): ours {fmt_ms(alone)} "
                    f"ms alone, the peer's {100 * share:.0f}% of its "
                    f"profiled step (≈ {fmt_ms(share * peer)} ms); the rest: "
                    f"ours {fmt_ms(rest)} ms (step − products alone), the "
                    f"peer's ≈ {fmt_ms((1 - share) * peer)} ms")
            elif alone >= peer:
                reasons.append(f"our matrix products alone take "
                               f"{fmt_ms(alone)} ms, more than the peer's "
                               f"whole step")
            else:
                reasons.append(f"our step takes {fmt_ms(rest)} ms more than "
                               "its matrix products timed alone (elementwise "
                               "loops, copies, collectives, call overhead, "
                               "or products slower within the step)")
        if profile and profile.get("top"):
            reasons.append(
                f"peer's profile ({fmt_ms(profile['step_ms'])} ms per "
                "profiled step, self times): " + ", ".join(
                    f"{t['name'][:40]} {fmt_ms(t['ms'])} ms"
                    for t in profile["top"][:4]))
        found.append({"peer": key, "label": label, "peer_ms": peer,
                      "ours_ms": ours, "ratio": peer / ours,
                      "reasons": reasons or ["no difference measured"]})
    return found


def target(name, value, goal):
    return {"target": name, "value": value, "goal": goal,
            "met": value >= goal,
            # How far off: the ratio still missing (0 when met).
            "missing_factor": 0.0 if value >= goal else goal / max(value, 1e-12)}


# --- output ----------------------------------------------------------------------------------------

def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def fmt_ms(ms):
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}"


def target_text(t):
    if t["target"] == "gemm_peak":
        text = f"GEMM {100 * t['value']:.0f}%/{100 * t['goal']:.0f}%"
    elif t["target"] == "bandwidth":
        text = f"BW {100 * t['value']:.0f}%/{100 * t['goal']:.0f}%"
        if t.get("fits_in_l2"):
            text += " (in L2)"
    else:
        text = f"torch {t['value']:.2f}x/{t['goal']:.0f}x"
    return text + (" ok" if t["met"] else " MISS")


def markdown(results):
    c = results["ceilings"]
    g, s = c["gemm"], c["stream"]
    lines = ["# dtensor benchmarks", ""]
    st = results["settings"]
    lines += [f"{results['machine']['cpu']}, {results['machine']['cores']} "
              f"cores; {st['mode']} run, {results['date']}; load average "
              f"{st['load_average_at_start'][0]:.1f} at the start, "
              f"{st['load_average_at_end'][0]:.1f} at the end (other "
              "processes share the machine: each side is measured "
              f"{st['rounds']}× per case, 1× more when its steps take < 50 "
              "ms, interleaved, best median kept).", ""]
    lines += ["## Ceilings (dtensor-bench-ceilings: the best of "
              f"{c.get('measurements', 1)} measurements — at the start, the "
              "end, and a probe of our kernel family before each model)", "",
              "| ceiling | value |", "|---|---|"]
    for fam in g["families"]:
        lines.append(f"| sgemm {g['size']}³, 1 thread, OPENBLAS_CORETYPE="
                     f"{fam['coretype']} (core {fam['corename'] or '?'}) | "
                     + (f"{fam['gflops']:.1f} GFLOP/s |" if fam["ok"]
                        else "failed |"))
    lines.append(f"| sgemm, {g['all_threads']} threads "
                 f"({g.get('roofline_coretype', g['best_coretype'])}) | "
                 f"{g['peak_all_threads_gflops']:.1f} GFLOP/s |")
    lines.append(f"| sgemm, {g['concurrent_1thread_processes']} concurrent "
                 f"1-thread processes, slowest | "
                 f"{g['concurrent_min_gflops']:.1f} GFLOP/s each |")
    for label, key in (("1 thread", "threads_1"),
                       (f"{s['all_threads']} threads", "threads_all")):
        r = s[key]
        lines.append(f"| stream {label}: copy / triad / read | "
                     f"{r['copy_gbps']:.1f} / {r['triad_gbps']:.1f} / "
                     f"{r['read_gbps']:.1f} GB/s |")
    lines += ["", f"Stream arrays: 3 × {fmt_bytes(s['array_bytes'])} (LLC "
              f"{fmt_bytes(c['cpu']['llc_bytes'])}); bytes counted as STREAM "
              "does (read + written, no write-allocate).", ""]
    lines += ["Per-rank ceilings used for the roofline:", "",
              "| ranks | threads/rank | GEMM peak/rank | bandwidth/rank | "
              "balance |", "|---|---|---|---|---|"]
    for r in results["ceilings_per_rank"].values():
        lines.append(f"| {r['ranks']} | {r['threads']} | "
                     f"{r['gemm_gflops']:.1f} GFLOP/s | "
                     f"{r['bandwidth_gbps']:.1f} GB/s | "
                     f"{r['balance_flop_per_byte']:.1f} FLOP/B |")
    lines += kernel_families(results)
    tb = results.get("torch_blas") or {}
    tuned = results["settings"].get("torch_tuned_coretype")
    if tb:
        lines += ["", f"PyTorch {tb.get('torch')}: BLAS_INFO="
                  f"{tb.get('torch_blas_info')}, CPU capability "
                  f"{tb.get('torch_cpu_capability')}; matrix products in "
                  f"OpenBLAS, whose core as shipped is "
                  f"{tb.get('openblas_corename')}"
                  + (f" (torch* columns: OPENBLAS_CORETYPE={tuned}, the "
                     "kernels our runtime selects)." if tuned else ".")]
    lines += ["", "## Cases", "",
              "| case | tokens (B×S) | ranks | ours ms | GEMMs alone ms | "
              "torch ms | speedup | torch* ms | speedup* | DTensor eager ms | "
              "speedup | DTensor compiled ms | speedup | BLAS ours / torch / "
              "DTensor | GFLOP/s/rank | "
              "GB/s/rank | bound | % roofline | coll. bytes/rank | targets |",
              "|---" * 20 + "|"]
    for case in results["cases"]:
        if "error" in case:
            lines.append(f"| {case['model']} {case['shape']} | | {case['ranks']} "
                         f"| error: {case['error'].splitlines()[0][:80]} |"
                         + " |" * 16)
            continue
        torch = case.get("torch")
        tuned = case.get("torch_tuned")
        cells = [f"{case['model']} {case['shape']}",
                 f"{case['tokens']} ({case['batch']}×{case['seq']})",
                 str(case["ranks"]), fmt_ms(case["ours"]["median_ms"]),
                 (f"{fmt_ms(case['gemms_alone']['median_ms'])} "
                  f"({100 * case['gemm_share']:.0f}%)")
                 if case.get("gemms_alone") else "-",
                 fmt_ms(torch["median_ms"]) if torch else "-",
                 f"{case['speedup_torch']:.2f}×" if torch else "-",
                 fmt_ms(tuned["median_ms"]) if tuned else "-",
                 f"{case['speedup_torch_tuned']:.2f}×" if tuned else "-"]
        for key in ("dtensor_eager", "dtensor_compiled"):
            peer = case.get(key, {})
            if "median_ms" in peer:
                cells += [fmt_ms(peer["median_ms"]),
                          f"{case['speedup_' + key]:.2f}×"]
            elif "compile_error" in peer:
                cells += ["compile failed", "-"]
            elif "error" in peer:
                cells += ["failed", "-"]
            else:
                cells += ["-", "-"]
        dt = next((k for k in ("dtensor_eager", "dtensor_compiled")
                   if "median_ms" in case.get(k, {})), None)
        blas = [case["ours"].get("openblas_corename") or "own",
                (torch["blas"].get("openblas_corename") or "?") if torch
                else "-",
                peer_family(case, dt) if dt else "-"]
        cells += [
                 " / ".join(blas),
                 f"{case['gflops_per_rank']:.2f}",
                 f"{case['gbps_per_rank']:.2f}",
                 case["bound"] + (" (in L2)" if case["fits_in_l2"] else ""),
                 f"{100 * case['fraction_of_roofline']:.1f}%",
                 fmt_bytes(case["collectives"]["bytes_per_rank"]),
                 "; ".join(target_text(t) for t in case["targets"])]
        lines.append("| " + " | ".join(cells) + " |")
    lines += faster_section(results)
    ct = results.get("compile_time")
    if ct:
        lines += ["", "## Compile time", "",
                  "| plan | layers | ops | wall s | peak RSS | target |",
                  "|---|---|---|---|---|---|"]
        verdict = ("timed out" if ct["timed_out"] else
                   "failed" if not ct["ok"] else
                   f"{ct['wall_s']:.1f}/{ct['target_s']:.0f} s "
                   + ("ok" if ct["target_met"] else
                      f"MISS ({ct['wall_s'] / ct['target_s']:.1f}× over)"))
        lines.append(f"| `{ct['plan']}` | {ct['layers']} | {ct['ops']} | "
                     f"{ct['wall_s']:.1f} | "
                     f"{fmt_bytes(ct['peak_rss_kib'] * 1024)} | {verdict} |")
    summary = results["summary"]
    lines += ["", "## Targets", "",
              f"- GEMM-bound cases at ≥ {100 * TARGET_GEMM:.0f}% of the GEMM "
              f"peak per rank: {summary['gemm_peak']}",
              f"- decode cases at ≥ {100 * TARGET_BANDWIDTH:.0f}% of the memory "
              f"bandwidth per rank: {summary['bandwidth']}",
              f"- every case ≥ {TARGET_SPEEDUP:.0f}× faster than PyTorch eager "
              f"(as shipped): {summary['speedup_vs_torch']}",
              f"- 32-layer plan compiled in ≤ {TARGET_COMPILE_S:.0f} s: "
              f"{summary['compile_time']}"]
    if "decode" in summary:
        lines.append(
            "- decode with the KV cache (below): flat in the context, ≥ "
            f"{bench_decode.TARGET_RECOMPUTE:.0f}× faster than recomputation "
            f"and ≥ {bench_decode.TARGET_TORCH:.0f}× faster than PyTorch with "
            f"a cache at the largest context: {summary['decode']}")
    lines += ["", "## Definitions", "",
              "- ours: `dtensor-run -n R` median step time (rank 0) after "
              "warm-up steps. GEMMs alone: the step's matrix products (its "
              "shapes per rank) timed alone through our runtime's matrix "
              "products (OpenBLAS with the kernels it selects, or its own "
              "kernels for products of up to 8 rows by a weight) and threads, "
              "one process per rank at once, and their share of our "
              "step: the rest is everything else (elementwise loops, copies, "
              "allocation, collectives, call overhead). torch: the same model in PyTorch eager, manual "
              "Megatron-style tensor parallelism on gloo, median step time "
              "(rank 0, each step after a barrier); both with cores/R threads "
              "per rank. speedup = torch ms / ours ms. torch*: the same with "
              "OPENBLAS_CORETYPE set to the kernels our runtime selects. "
              "DTensor eager / compiled: PyTorch 2 (scripts/torch-env.sh) "
              "with the model as nn.Modules, parallelize_module and the "
              "standard Llama tensor-parallel plan (ColwiseParallel / "
              "RowwiseParallel, vocab-parallel embedding, replicated "
              "logits) on gloo, eager or under torch.compile (Inductor, "
              "CPU; its compilation not timed), median step time (rank 0, "
              "each step after a barrier, until its output is ready); "
              "speedup = DTensor ms / ours ms. BLAS: the kernel family each "
              "side's matrix products ran on (OpenBLAS's "
              "openblas_get_corename(); \"own\": no product of ours went "
              "to OpenBLAS; MKL: the instruction set MKL_VERBOSE reports).",
              "- FLOPs: 2·M·N·K for each matrix product (attention's QKᵀ and "
              "PV over the full S×S, as both sides compute it); elementwise "
              "ops, norms, softmax not counted. Bytes: per rank, its weight "
              "shards, looked-up embedding rows, the step's inputs and "
              "outputs, once, and its activations: every intermediate "
              "tensor (views excepted, attention's S×S scores included) "
              "written once and read once in f32, 1/R of those the tp plan "
              "splits. Small models (dim 64) move far more activation than "
              "weight bytes: counting only the weights called them "
              "GEMM-bound.",
              "- roofline per rank = max(FLOPs/rank ÷ GEMM peak/rank, "
              "bytes/rank ÷ bandwidth/rank); % roofline = roofline ÷ ours. "
              "bound: GEMM if FLOPs/bytes ≥ balance, else memory; "
              "\"(in L2)\": the step's bytes fit in a core's L2 cache, so "
              "the memory bandwidth is not its limit (% of bandwidth and of "
              "roofline may exceed 100%).",
              "- targets: GEMM x%/80% (GEMM-bound cases: GFLOP/s/rank over "
              "the GEMM peak/rank), BW x%/70% (decode, ≤ 8 tokens: GB/s/rank "
              "over the bandwidth/rank), torch x/2x (speedup over torch as "
              "shipped). `coll. bytes/rank`: the compiler's communication "
              "report, bytes each rank sends per step.", ""]
    return "\n".join(lines)


def kernel_families(results):
    """The BLAS kernel family of every side and of the ceilings, and the
    conditions they were measured under."""
    fam = results.get("kernel_families", {})
    if not fam:
        return []
    st = results["settings"]
    lines = ["", "Kernel families (BLAS each side's matrix products ran on, "
             "as the libraries report them):", "",
             "| side | BLAS, kernel family |", "|---|---|"]
    for side, value in fam.items():
        lines.append(f"| {side} | {value} |")
    preset = st.get("openblas_coretype_preset")
    choice = st.get("blas_coretype")
    lines += ["", "Conditions: OPENBLAS_CORETYPE in the environment: "
              + (f"`{preset}`" if preset else "unset")
              + " (our runtime's private OpenBLAS does not read it); "
              f"--blas-coretype {choice}: " + {
                  "runtime": "DTENSOR_BLAS_CORETYPE removed for our programs "
                             "and the ceilings, so the runtime picks its "
                             "family itself",
                  "inherit": "DTENSOR_BLAS_CORETYPE kept as found"}.get(
                      choice, f"DTENSOR_BLAS_CORETYPE={choice} for our "
                              "programs")
              + ". The roofline's GEMM peak is measured with the family our "
              "programs ran ("
              + str(results["ceilings"]["gemm"].get("roofline_coretype"))
              + "), the GEMMs-alone runs and torch* use it too; torch runs "
              "OpenBLAS's own pick (as shipped, no OPENBLAS_CORETYPE); the "
              "DTensor peers' MKL does not read OPENBLAS_CORETYPE."]
    return lines


def faster_section(results):
    rows = [(c, f) for c in results["cases"] for f in c.get("faster_peers", [])]
    lines = ["", "## Where a peer is faster", ""]
    if not rows:
        return lines + ["No peer is faster than ours in any case measured."]
    for case, f in rows:
        lines.append(f"- {case['model']} {case['shape']} R={case['ranks']}: "
                     f"{f['label']} {fmt_ms(f['peer_ms'])} ms against ours "
                     f"{fmt_ms(f['ours_ms'])} ms ({f['ratio']:.2f}×): "
                     + "; ".join(f["reasons"]))
    return lines


def summarise(results):
    def verdict(name):
        rows = [(c, t) for c in results["cases"] if "targets" in c
                for t in c["targets"] if t["target"] == name]
        if not rows:
            return "no case"
        met = sum(t["met"] for _, t in rows)
        misses = [f"{c['model']} {c['shape']} R={c['ranks']}" for c, t in rows
                  if not t["met"]]
        text = f"{met} of {len(rows)} met"
        if misses:
            text += " (missed: " + ", ".join(misses) + ")"
        return text
    ct = results.get("compile_time")
    summary = {"gemm_peak": verdict("gemm_peak"),
               "bandwidth": verdict("bandwidth"),
               "speedup_vs_torch": verdict("speedup_vs_torch"),
               "compile_time": ("not measured" if not ct else
                                "timed out" if ct["timed_out"] else
                                "failed" if not ct["ok"] else
                                f"{ct['wall_s']:.1f} s: " +
                                ("met" if ct["target_met"] else "missed"))}
    if "decode" in results:
        summary["decode"] = bench_decode.summary(results["decode"])
    results["summary"] = summary


def plot(results, path):
    """Speedup over PyTorch and fraction of the roofline, per case."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is not installed (apt-get install python3-matplotlib):"
            " no results.png")
        return False
    cases = [c for c in results["cases"] if "targets" in c]
    labels = [f"{c['model']} {c['shape']} R{c['ranks']}" for c in cases]
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 0.35 * len(cases) + 2), 8),
                             sharex=True)
    x = list(range(len(cases)))
    legends = {"torch": "vs torch (as shipped)",
               "torch_tuned": "vs torch* (OPENBLAS_CORETYPE as ours)",
               "dtensor_eager": "vs DTensor eager (PyTorch 2)",
               "dtensor_compiled": "vs DTensor + torch.compile"}
    series = [k for k in PEERS if any("speedup_" + k in c for c in cases)]
    width = 0.8 / max(1, len(series))
    for n, key in enumerate(series):
        axes[0].bar([i + (n - (len(series) - 1) / 2) * width for i in x],
                    [c.get("speedup_" + key, 0) for c in cases], width,
                    label=legends[key])
    axes[0].axhline(TARGET_SPEEDUP, color="red", linestyle="--",
                    label=f"target {TARGET_SPEEDUP:.0f}×")
    axes[0].axhline(1.0, color="black", linewidth=0.5)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("speedup (torch ms / ours ms)")
    axes[0].legend(fontsize=8)
    fractions = [100 * c["fraction_of_roofline"] for c in cases]
    axes[1].bar(x, fractions,
                color=["tab:green" if c["bound"] == "gemm" else "tab:purple"
                       for c in cases])
    for i, value in zip(x, fractions):
        axes[1].text(i, value + 1, f"{value:.0f}", ha="center", fontsize=6)
    axes[1].axhline(100 * TARGET_GEMM, color="tab:green", linestyle="--",
                    label="80% (GEMM-bound target)")
    axes[1].axhline(100 * TARGET_BANDWIDTH, color="tab:purple", linestyle="--",
                    label="70% (decode bandwidth target)")
    axes[1].set_ylim(0, max(105, max(fractions, default=0) + 10))
    axes[1].set_ylabel("% of roofline (green: GEMM-bound)")
    axes[1].legend(fontsize=8)
    axes[1].set_xticks(list(x))
    axes[1].set_xticklabels(labels, rotation=75, ha="right", fontsize=7)
    fig.suptitle("dtensor vs PyTorch (eager, DTensor, torch.compile) and the "
                 "machine's roofline")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# --- main ------------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(ROOT, "bench-results"),
                   help="output folder (default: bench-results)")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                   help="the CMake build folder (tools in its bin/)")
    p.add_argument("--quick", action="store_true",
                   help="tiny shapes, few iterations, small ceilings (tests)")
    p.add_argument("--cases", default=".*", metavar="REGEX",
                   help="run the cases whose name '<model> <shape>' matches "
                   "(re.search), e.g. 'mlp' or 'large.*decode'")
    p.add_argument("--ranks", default="1,2",
                   help="comma-separated rank counts (default 1,2)")
    p.add_argument("--iters", type=int,
                   help="timed steps per measurement, for every case (default:"
                   " about --budget seconds, 5 to 2000 steps)")
    p.add_argument("--warmup", type=int, help="untimed steps first")
    p.add_argument("--budget", type=float,
                   help="seconds of timed steps per measurement (default 1.5;"
                   " --quick 0.2)")
    p.add_argument("--no-compile-time", action="store_true",
                   help="skip the 32-layer compile-time measurement")
    p.add_argument("--compile-timeout", type=float, default=900,
                   help="seconds before the compile-time case is stopped")
    p.add_argument("--rounds", type=int,
                   help="measurements of each side per case, interleaved; the"
                   " best median is kept (default 2, one more for cases "
                   "whose steps take < 50 ms; --quick 1)")
    p.add_argument("--no-torch-tuned", action="store_true",
                   help="skip PyTorch with OPENBLAS_CORETYPE set as ours")
    p.add_argument("--no-self-check", action="store_true",
                   help="skip the PyTorch tensor-parallel correctness check")
    p.add_argument("--case-timeout", type=float, default=600,
                   help="seconds one run may take")
    p.add_argument("--no-dtensor-peers", action="store_true",
                   help="skip the PyTorch 2 DTensor columns (eager and "
                   "torch.compile)")
    p.add_argument("--no-dtensor-compile", action="store_true",
                   help="skip only the torch.compile DTensor column")
    p.add_argument("--torch-python", metavar="PYTHON",
                   help="the PyTorch 2 interpreter of the DTensor peers "
                   "(default: scripts/torch-env.sh --python, which makes "
                   "its environment when missing)")
    p.add_argument("--blas-coretype", default="runtime", metavar="FAMILY",
                   help="OpenBLAS kernel family of our programs and the "
                   "ceilings (DTENSOR_BLAS_CORETYPE): 'runtime' (default: "
                   "removed from their environment, the runtime picks the "
                   "CPU's best), 'inherit' (the environment's, as found) or "
                   "a family name (e.g. Haswell); the roofline uses the "
                   "family they ran in every case. OPENBLAS_CORETYPE is "
                   "not read by our runtime")
    p.add_argument("--no-decode", action="store_true",
                   help="skip the decode table (scripts/bench_decode.py)")
    p.add_argument("--decode-only", action="store_true",
                   help="the ceilings and the decode table only (no "
                   "self-check, cases or compile time)")
    bench_decode.add_options(p, "decode-")
    p.add_argument("--no-context-parallel", action="store_true",
                   help="skip the context-parallel table "
                   "(scripts/bench_context_parallel.py)")
    p.add_argument("--context-parallel-only", action="store_true",
                   help="the ceilings and the context-parallel table only")
    bench_cp.add_options(p, "cp-")
    a = p.parse_args(argv)
    a.scripts_dir = os.path.dirname(os.path.abspath(__file__))
    a.bin_dir = os.path.join(a.build_dir, "bin")
    if a.budget is None:
        a.budget = 0.2 if a.quick else 1.0
    if a.rounds is None:
        a.rounds = 1 if a.quick else 2
    if a.quick:
        a.no_torch_tuned = True
    try:
        a.rank_list = [int(r) for r in a.ranks.split(",")]
    except ValueError:
        p.error(f"--ranks {a.ranks}: expected numbers like 1,2")
    if a.decode_only:
        if a.no_decode:
            p.error("--decode-only and --no-decode exclude each other")
        a.no_self_check = a.no_compile_time = True
    if a.context_parallel_only:
        if a.no_context_parallel or a.decode_only:
            p.error("--context-parallel-only excludes --no-context-parallel "
                    "and --decode-only")
        a.no_self_check = a.no_compile_time = a.no_decode = True
    error = bench_decode.configure(a, "decode_")
    if error and not a.no_decode:
        p.error(error)
    error = bench_cp.configure(a, "cp_")
    if error and not a.no_context_parallel:
        p.error(error)
    a.blas_env = lambda: blas_env(a)
    for tool in ("dtensor-compile", "dtensor-run", "dtensor-bench-ceilings"):
        if not os.access(os.path.join(a.bin_dir, tool), os.X_OK):
            p.error(f"{a.bin_dir}/{tool} not found: build it first "
                    f"(scripts/bench.sh does)")
    return a


def measure_case(a, case, plan_path, artifact, per_rank, servers, tuned,
                 runtime_core, progress):
    """Measures one compiled case: rounds of ours, torch and torch*, one
    after the other, so that load from other processes on the machine hits
    every side alike; each side keeps its best round."""
    roofline = max(case["work"]["flops_per_rank"] /
                   (per_rank["gemm_gflops"] * 1e9),
                   case["work"]["bytes_per_rank"] /
                   (per_rank["bandwidth_gbps"] * 1e9))
    # The first round guesses the step time pessimistically (small programs
    # run far from their roofline), later ones use the measured median.
    iters, warmup = choose_iters(a, 30 * roofline + 20e-6)
    sides = {"ours": [], "gemms_alone": [], "torch": [], "torch_tuned": []}
    peers = {}  # dtensor_<mode>: a compile failure or error, instead of runs
    for mode in a.dtensor_modes:
        sides["dtensor_" + mode] = []
    rounds = a.rounds
    round_ = 0
    while round_ < rounds:
        if round_:
            iters, warmup = choose_iters(
                a, min(r["median_ms"] for r in sides["ours"]) / 1e3)
        load = os.getloadavg()[0]
        log(f"{progress}: round {round_ + 1}/{rounds} (load {load:.1f}): "
            f"dtensor-run (warm-up {warmup}, {iters} steps), PyTorch eager"
            + (f", PyTorch with OPENBLAS_CORETYPE={tuned}" if tuned else "")
            + "".join(f", DTensor {m}" for m in a.dtensor_modes))
        sides["ours"].append(run_ours(a, artifact, case["ranks"], iters,
                                      warmup))
        if case["gemm_list"]:
            sides["gemms_alone"].append(run_gemms_alone(
                a, case, runtime_core, max(3, min(iters, 200))))
        request = torch_request(a, plan_path)
        sides["torch"].append(servers[(case["ranks"], None)].time(request))
        if tuned:
            sides["torch_tuned"].append(
                servers[(case["ranks"], tuned)].time(request))
        for mode in a.dtensor_modes:
            side = "dtensor_" + mode
            if side in peers:
                continue
            try:
                answer = servers[(case["ranks"], "dtensor")].time(
                    dict(request, mode=mode))
            except RuntimeError as e:  # the cell stays empty, with why
                peers[side] = {"error": str(e)[-2000:]}
                log(f"  DTensor {mode} failed: {str(e)[-300:]}")
                continue
            if "compile_error" in answer:
                peers[side] = answer
                log(f"  DTensor compiled: torch.compile failed: "
                    f"{answer['compile_error']}")
                continue
            sides[side].append(answer)
        for runs in sides.values():
            if runs:
                runs[-1]["load_before"] = load
        round_ += 1
        # Short steps are the most exposed to scheduling noise (a thread
        # of a 2-thread pool descheduled can cost a whole time slice per
        # step) and cheap to repeat: one more round when every side's
        # steps take less than 50 ms.
        slowest = max(runs[-1]["median_ms"] for runs in sides.values() if runs)
        if round_ == a.rounds and a.rounds > 1 and slowest < 50:
            rounds = a.rounds + 1
    for side, runs in sides.items():
        if runs:
            case[side] = best_round(runs)
    case.update(peers)
    # A peer faster than ours: profile it once (where its step's time goes),
    # for the reason listed in the results.
    for mode in a.dtensor_modes:
        side = "dtensor_" + mode
        if (case.get(side, {}).get("median_ms", math.inf) <
                case["ours"]["median_ms"]):
            try:
                answer = servers[(case["ranks"], "dtensor")].time(
                    dict(torch_request(a, plan_path), mode=mode, profile=True,
                         iters=max(5, min(50, case[side]["iters"])), budget=0))
                case[side]["profile"] = answer.get("profile")
            except RuntimeError as e:
                log(f"  profile of DTensor {mode} failed: {str(e)[-300:]}")
    log(f"  ours {fmt_ms(case['ours']['median_ms'])} ms, torch "
        f"{fmt_ms(case['torch']['median_ms'])} ms"
        + (f", torch* {fmt_ms(case['torch_tuned']['median_ms'])} ms"
           if case.get("torch_tuned") else "")
        + "".join(f", DTensor {m} {fmt_ms(case[s]['median_ms'])} ms"
                  for m, s in ((m, "dtensor_" + m) for m in a.dtensor_modes)
                  if "median_ms" in case.get(s, {}))
        + (f"; its GEMMs alone {fmt_ms(case['gemms_alone']['median_ms'])} ms"
           if case.get("gemms_alone") else "")
        + f" (roofline {fmt_ms(1e3 * roofline)} ms)")


def run_cases(a, results, work, tuned, runtime_core):
    """runtime_core: the kernel family our programs run (the ceilings'
    probes and the GEMMs-alone runs use it)."""
    """Every selected (model, shape, ranks) case: plan, compile, measure;
    a probe of the ceilings before each model's cases."""
    mtt = load_make_test_tensors()
    suite = QUICK_SUITE if a.quick else FULL_SUITE
    todo = [(m, s, r) for m, shapes in suite.items() for s in shapes
            for r in a.rank_list if re.search(a.cases, f"{m} {s}")]
    servers = {(r, core): TorchServer(r, core, a.case_timeout)
               for r in a.rank_list for core in (None, tuned)}
    if a.dtensor_modes:
        for r in a.rank_list:
            servers[(r, "dtensor")] = TorchServer(r, None, a.case_timeout,
                                                  python=a.dtensor_python)
    try:
        for index, (model, shape, ranks) in enumerate(todo):
            if index and model != todo[index - 1][0]:
                results["ceilings_runs"].append(measure_ceilings(
                    a, work, f"probe-{model}", runtime_core))
            batch, seq = SHAPES[shape]
            name = f"{model}-{shape}-r{ranks}"
            progress = f"[{index + 1}/{len(todo)}] {name}"
            case = {"model": model, "shape": shape, "ranks": ranks,
                    "batch": batch, "seq": seq, "tokens": batch * seq,
                    "gen_args": MODELS[model] + ["--batch", str(batch), "--seq",
                                                 str(seq), "--plan", "tp"]}
            results["cases"].append(case)
            plan_path = os.path.join(work, name + ".json")
            artifact = os.path.join(work, name + ".dtc")
            try:
                plan = generate_plan(model, shape, ranks, plan_path)
                case["work"] = count_work(plan, ranks, mtt.infer_shapes)
                case["gemm_list"] = gemm_list(plan, ranks, mtt.infer_shapes)
                log(f"{progress}: compile")
                case["compile_s"], case["collectives"] = compile_case(
                    a, plan_path, ranks, artifact)
                measure_case(a, case, plan_path, artifact,
                             results["ceilings_per_rank"][str(ranks)],
                             servers, tuned, runtime_core, progress)
                results.setdefault("torch_blas", case["torch"]["blas"])
                for mode in a.dtensor_modes:
                    blas = case.get("dtensor_" + mode, {}).get("blas")
                    if blas:
                        results["dtensor_peers"].setdefault("blas", blas)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError,
                    KeyError) as e:
                case["error"] = str(e)
                log(f"  FAILED: {str(e)[:2000]}")
            shutil.rmtree(artifact, ignore_errors=True)
    finally:
        for server in servers.values():
            server.stop()


def families_used(results):
    """Side -> the BLAS kernel family it ran (as its library reports it),
    over all cases; several values are listed with commas."""
    def collect(values):
        found = sorted({v for v in values if v})
        return ", ".join(found) if found else None
    cases = [c for c in results["cases"] if "error" not in c]
    g = results["ceilings"]["gemm"]
    fam = {"ours (dtensor-run, OpenBLAS)": collect(
               [results.get("runtime_openblas_corename")] +
               [c["ours"].get("openblas_corename") for c in cases]),
           "ceilings (roofline GEMM peak)":
               f"OpenBLAS {g['roofline_coretype']} (core "
               f"{g.get('roofline_corename') or '?'})",
           "GEMMs alone (our runtime's products)": collect(
               c.get("gemms_alone", {}).get("openblas_corename")
               for c in cases)}
    for key, label in (("torch", "torch (as shipped)"),
                       ("torch_tuned", "torch*")):
        value = collect(peer_family(c, key) for c in cases if c.get(key))
        if value:
            blas = next(c[key]["blas"] for c in cases if c.get(key))
            fam[f"{label}, PyTorch {blas.get('torch')}"] = value
    peers = results.get("dtensor_peers", {})
    for mode in peers.get("modes", []):
        value = collect(peer_family(c, "dtensor_" + mode) for c in cases
                        if "median_ms" in c.get("dtensor_" + mode, {}))
        if value:
            fam[f"DTensor {mode}, PyTorch {peers['blas'].get('torch')}"] = value
    return {k: v for k, v in fam.items() if v}


def write_outputs(a, results):
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    text = markdown(results)
    if "decode" in results:
        text += "\n" + bench_decode.markdown(results["decode"])
    if "context_parallel" in results:
        text += "\n" + bench_cp.markdown(results["context_parallel"])
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    plotted = plot(results, os.path.join(a.out, "results.png"))
    log(f"wrote {a.out}/results.json, results.md"
        + (", results.png" if plotted else ""))
    print(text)


def main(argv=None):
    a = parse_args(argv)
    work = os.path.join(a.out, "work")
    os.makedirs(work, exist_ok=True)
    first = measure_ceilings(a, work, "start")
    # The family our programs really run (what OpenBLAS says), under the
    # conditions of --blas-coretype; the roofline's GEMM peak is that
    # family's: when the tool's best family differs, it is probed alone.
    corename, runtime_core = detect_runtime_family(a, work, first)
    log(f"kernel family: our runtime ran OpenBLAS core {corename} "
        f"(--blas-coretype {a.blas_coretype}; OPENBLAS_CORETYPE in the "
        f"environment: {os.environ.get('OPENBLAS_CORETYPE') or 'unset'}, "
        f"not read by our runtime); ceilings for {runtime_core}")
    ceilings_runs = [first]
    if first["gemm"]["best_coretype"] != runtime_core:
        ceilings_runs.append(measure_ceilings(a, work, "start-family",
                                              runtime_core))
    # torch*: torch's OpenBLAS on the kernels our runtime selects (none when
    # the runtime, too, leaves the choice to OpenBLAS).
    tuned = None if a.no_torch_tuned or runtime_core == "auto" else runtime_core
    a.dtensor_python, peers = dtensor_python(a)
    a.dtensor_modes = []
    if a.dtensor_python:
        a.dtensor_modes = ["eager"] + ([] if a.no_dtensor_compile
                                       else ["compiled"])
        log(f"PyTorch 2 peers: {a.dtensor_python} (torch {peers['torch']}, "
            f"{peers['family']}): DTensor " + ", ".join(a.dtensor_modes))
        peers = {"available": True, "python": a.dtensor_python,
                 "modes": a.dtensor_modes, "blas": peers}
    else:
        log(f"PyTorch 2 peers: none ({peers}): no DTensor columns")
        peers = {"available": False, "reason": peers, "modes": []}
    # The context-parallel table's PyTorch columns use the same interpreter.
    a.cp_torch_python = a.dtensor_python
    a.cp_torch_reason = None if a.dtensor_python else peers["reason"]
    results = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpu": first["cpu"]["model"], "cores": first["cpu"]["cores"],
                    "platform": platform.platform()},
        "settings": {"mode": "quick" if a.quick else "full",
                     "budget_s": a.budget, "iters": a.iters,
                     "warmup": a.warmup, "rounds": a.rounds,
                     "ranks": a.rank_list, "cases_regex": a.cases,
                     "torch_tuned_coretype": tuned,
                     "blas_coretype": a.blas_coretype,
                     "openblas_coretype_preset":
                         os.environ.get("OPENBLAS_CORETYPE"),
                     "load_average_at_start": os.getloadavg()},
        "ceilings_per_rank": {
            str(r): ceilings_per_rank(best_ceilings(ceilings_runs,
                                                    runtime_core), r)
            for r in a.rank_list},
        "ceilings_runs": ceilings_runs,
        "runtime_openblas_corename": corename,
        "runtime_coretype": runtime_core,
        "dtensor_peers": peers,
        "cases": [],
    }
    if not a.no_self_check:
        results["self_check"] = self_check(a, work)
    if not a.decode_only and not a.context_parallel_only:
        run_cases(a, results, work, tuned, runtime_core)
    if not a.no_decode:
        results["decode"] = bench_decode.measure(a, log)
    if not a.no_context_parallel and not a.decode_only:
        results["context_parallel"] = bench_cp.measure(a, log)
    if not a.no_compile_time:
        results["compile_time"] = compile_time(a, work)
    # The ceilings again: other processes only ever lower a measurement, so
    # the best of all of them is the machine's.
    results["ceilings_runs"].append(measure_ceilings(a, work, "end"))
    if results["ceilings_runs"][-1]["gemm"]["best_coretype"] != runtime_core:
        results["ceilings_runs"].append(measure_ceilings(
            a, work, "end-family", runtime_core))
    results["ceilings"] = best_ceilings(results["ceilings_runs"], runtime_core)
    results["ceilings_per_rank"] = {
        str(r): ceilings_per_rank(results["ceilings"], r) for r in a.rank_list}
    for case in results["cases"]:
        if "error" not in case:
            analyse(case, results["ceilings_per_rank"][str(case["ranks"])])
    if "decode" in results:
        bench_decode.analyse(results["decode"], results["ceilings_per_rank"])
    results["kernel_families"] = families_used(results)
    results["settings"]["load_average_at_end"] = os.getloadavg()
    summarise(results)
    write_outputs(a, results)
    failed = [c for c in results["cases"] +
              results.get("context_parallel", {}).get("cases", [])
              if "error" in c]
    check_failed = not results.get("self_check", {"ok": True})["ok"]
    return 1 if failed or check_failed else 0


if __name__ == "__main__":
    sys.exit(main())

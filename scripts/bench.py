#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmarks of dtensor (scripts/bench.sh builds the tools, then runs
this): compiled programs side by side with PyTorch eager and with this
machine's ceilings.

  bench.py [--out DIR] [--build-dir DIR] [--quick] [--cases REGEX]
      [--ranks 1,2] [--iters N] [--warmup N] [--budget SECONDS]
      [--rounds N] [--no-compile-time] [--no-torch-tuned]
      [--compile-timeout SECONDS]

Steps, each printed as it starts:

1. ceilings: build/bin/dtensor-bench-ceilings measures the single-precision
   GEMM peak of OpenBLAS (every kernel family the CPU supports) and the
   streaming memory bandwidth, at the start and again at the end, with a
   quick probe of the best family's peak and of the bandwidth before each
   model's cases (the best of all is kept: other processes, in this VM or on
   its host, only ever lower them); the per-rank ceilings follow
   (ceilings_per_rank below);
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
   setting;
4. compile time: `dtensor-compile` (default -O3, --no-reference) of the
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


def run(cmd, timeout=None, env=None, check=True):
    """Runs a command, returns its CompletedProcess (text); raises with the
    command's output on failure."""
    result = subprocess.run(cmd, capture_output=True, text=True,
                            timeout=timeout, env=env)
    if check and result.returncode != 0:
        raise RuntimeError(f"command failed ({result.returncode}): "
                           f"{' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result


def load_make_test_tensors():
    """scripts/make-test-tensors.py as a module (its shape inference)."""
    spec = importlib.util.spec_from_file_location(
        "make_test_tensors", os.path.join(SCRIPTS, "make-test-tensors.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- ceilings --------------------------------------------------------------------------

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
    run(cmd)
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


def best_ceilings(runs):
    """Field by field, the best of several ceiling measurements (the first
    one measures every kernel family): other processes, in this VM or on
    its host, only ever lower a measurement."""
    best = json.loads(json.dumps(runs[0]))
    g = best["gemm"]
    for other in runs[1:]:
        g2 = other["gemm"]
        for fam in g["families"]:
            for fam2 in g2["families"]:
                if fam2["coretype"] == fam["coretype"] and fam2["ok"]:
                    fam["gflops"] = max(fam["gflops"], fam2["gflops"])
        for key in ("peak_1thread_gflops", "peak_all_threads_gflops",
                    "concurrent_min_gflops"):
            g[key] = max(g[key], g2[key])
        g["concurrent_per_process_gflops"] = max(
            g["concurrent_per_process_gflops"],
            g2["concurrent_per_process_gflops"], key=min)
        for threads in ("threads_1", "threads_all"):
            for kernel, value in other["stream"][threads].items():
                best["stream"][threads][kernel] = max(
                    best["stream"][threads][kernel], value)
    best_family = max((f for f in g["families"] if f["ok"] and f["honoured"]),
                      key=lambda f: f["gflops"])
    g["best_coretype"] = best_family["coretype"]
    g["peak_1thread_gflops"] = max(g["peak_1thread_gflops"],
                                   best_family["gflops"])
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
    result = run([os.path.join(a.bin_dir, "dtensor-run"), artifact,
                  "-n", str(ranks), "--warmup", str(warmup), "--iters",
                  str(iters), "--random-inputs", "1"], timeout=a.case_timeout)
    match = re.search(r"ran (\d+) steps? on (\d+) ranks?: median ([0-9.]+) ms, "
                      r"min ([0-9.]+) ms", result.stdout)
    if not match:
        raise RuntimeError("no timing line in dtensor-run's output:\n" +
                           result.stdout + result.stderr)
    return {"median_ms": float(match.group(3)), "min_ms": float(match.group(4)),
            "iters": int(match.group(1)), "warmup": warmup}


# --- PyTorch ---------------------------------------------------------------------------------

class TorchServer:
    """A `bench_torch.py serve` process: `ranks` PyTorch ranks with
    cores/ranks threads each, kept running between measurements; `coretype`
    is OPENBLAS_CORETYPE for torch's OpenBLAS (None: as shipped)."""

    def __init__(self, ranks, coretype, timeout):
        self.ranks, self.coretype, self.timeout = ranks, coretype, timeout
        self.proc = None

    def start(self):
        threads = max(1, (os.cpu_count() or 1) // self.ranks)
        env = dict(os.environ)
        env.pop("OPENBLAS_CORETYPE", None)
        # Both of torch's thread pools (OpenMP, OpenBLAS) get the rank's share.
        env["OMP_NUM_THREADS"] = str(threads)
        env["OPENBLAS_NUM_THREADS"] = str(threads)
        cmd = [sys.executable, os.path.join(SCRIPTS, "bench_torch.py"), "serve",
               "--ranks", str(self.ranks), "--threads", str(threads)]
        if self.coretype:
            cmd += ["--openblas-coretype", self.coretype]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self._read()  # {"ready": true}

    def _read(self):
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.stop()
            raise RuntimeError(f"bench_torch.py serve (ranks {self.ranks}) "
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
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
             for _ in range(ranks)]
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=a.case_timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"dtensor-bench-ceilings --gemm-list failed: {out}")
        results.append(json.loads(out))
    slowest = max(results, key=lambda r: r["median_ms"])
    return {"median_ms": slowest["median_ms"], "gflops_per_rank": slowest["gflops"],
            "reps": reps, "products": slowest["products"]}


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
    return {"ok": ok, "lines": lines}


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
    for key in ("torch", "torch_tuned"):
        if case.get(key):
            case["speedup_" + key] = (case[key]["median_ms"] /
                                      case["ours"]["median_ms"])
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
              "end, and a probe before each model)", "",
              "| ceiling | value |", "|---|---|"]
    for fam in g["families"]:
        lines.append(f"| sgemm {g['size']}³, 1 thread, OPENBLAS_CORETYPE="
                     f"{fam['coretype']} (core {fam['corename'] or '?'}) | "
                     + (f"{fam['gflops']:.1f} GFLOP/s |" if fam["ok"]
                        else "failed |"))
    lines.append(f"| sgemm, {g['all_threads']} threads ({g['best_coretype']}) | "
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
              "torch ms | speedup | torch* ms | speedup* | GFLOP/s/rank | "
              "GB/s/rank | bound | % roofline | coll. bytes/rank | targets |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for case in results["cases"]:
        if "error" in case:
            lines.append(f"| {case['model']} {case['shape']} | | {case['ranks']} "
                         f"| error: {case['error'].splitlines()[0][:80]} |"
                         + " |" * 11)
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
                 f"{case['speedup_torch_tuned']:.2f}×" if tuned else "-",
                 f"{case['gflops_per_rank']:.2f}",
                 f"{case['gbps_per_rank']:.2f}",
                 case["bound"] + (" (in L2)" if case["fits_in_l2"] else ""),
                 f"{100 * case['fraction_of_roofline']:.1f}%",
                 fmt_bytes(case["collectives"]["bytes_per_rank"]),
                 "; ".join(target_text(t) for t in case["targets"])]
        lines.append("| " + " | ".join(cells) + " |")
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
              "OPENBLAS_CORETYPE set to the kernels our runtime selects.",
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
    tuned = any("speedup_torch_tuned" in c for c in cases)
    width = 0.4 if tuned else 0.8
    axes[0].bar([i - (width / 2 if tuned else 0) for i in x],
                [c.get("speedup_torch", 0) for c in cases], width,
                label="vs torch (as shipped)")
    if tuned:
        axes[0].bar([i + width / 2 for i in x],
                    [c.get("speedup_torch_tuned", 0) for c in cases], width,
                    label="vs torch* (OPENBLAS_CORETYPE as ours)")
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
    fig.suptitle("dtensor vs PyTorch eager and the machine's roofline")
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
    a = p.parse_args(argv)
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
    rounds = a.rounds
    round_ = 0
    while round_ < rounds:
        if round_:
            iters, warmup = choose_iters(
                a, min(r["median_ms"] for r in sides["ours"]) / 1e3)
        load = os.getloadavg()[0]
        log(f"{progress}: round {round_ + 1}/{rounds} (load {load:.1f}): "
            f"dtensor-run (warm-up {warmup}, {iters} steps), PyTorch eager"
            + (f", PyTorch with OPENBLAS_CORETYPE={tuned}" if tuned else ""))
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
    log(f"  ours {fmt_ms(case['ours']['median_ms'])} ms, torch "
        f"{fmt_ms(case['torch']['median_ms'])} ms"
        + (f", torch* {fmt_ms(case['torch_tuned']['median_ms'])} ms"
           if case.get("torch_tuned") else "")
        + (f"; its GEMMs alone {fmt_ms(case['gemms_alone']['median_ms'])} ms"
           if case.get("gemms_alone") else "")
        + f" (roofline {fmt_ms(1e3 * roofline)} ms)")


def run_cases(a, results, work, tuned, runtime_core):
    """Every selected (model, shape, ranks) case: plan, compile, measure;
    a probe of the ceilings before each model's cases."""
    mtt = load_make_test_tensors()
    suite = QUICK_SUITE if a.quick else FULL_SUITE
    todo = [(m, s, r) for m, shapes in suite.items() for s in shapes
            for r in a.rank_list if re.search(a.cases, f"{m} {s}")]
    servers = {(r, core): TorchServer(r, core, a.case_timeout)
               for r in a.rank_list for core in (None, tuned)}
    try:
        for index, (model, shape, ranks) in enumerate(todo):
            if index and model != todo[index - 1][0] and runtime_core != "auto":
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
            except (RuntimeError, subprocess.TimeoutExpired, ValueError,
                    KeyError) as e:
                case["error"] = str(e)
                log(f"  FAILED: {str(e)[:2000]}")
            shutil.rmtree(artifact, ignore_errors=True)
    finally:
        for server in servers.values():
            server.stop()


def write_outputs(a, results):
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    text = markdown(results)
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
    runtime_core = first["gemm"]["runtime_coretype"]
    # torch*: torch's OpenBLAS on the kernels our runtime selects (none when
    # the runtime, too, leaves the choice to OpenBLAS).
    tuned = None if a.no_torch_tuned or runtime_core == "auto" else runtime_core
    results = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpu": first["cpu"]["model"], "cores": first["cpu"]["cores"],
                    "platform": platform.platform()},
        "settings": {"mode": "quick" if a.quick else "full",
                     "budget_s": a.budget, "iters": a.iters,
                     "warmup": a.warmup, "rounds": a.rounds,
                     "ranks": a.rank_list, "cases_regex": a.cases,
                     "torch_tuned_coretype": tuned,
                     "load_average_at_start": os.getloadavg()},
        "ceilings_per_rank": {str(r): ceilings_per_rank(first, r)
                              for r in a.rank_list},
        "ceilings_runs": [first],
        "cases": [],
    }
    if not a.no_self_check:
        results["self_check"] = self_check(a, work)
    run_cases(a, results, work, tuned, runtime_core)
    if not a.no_compile_time:
        results["compile_time"] = compile_time(a, work)
    # The ceilings again: other processes only ever lower a measurement, so
    # the best of all of them is the machine's.
    results["ceilings_runs"].append(measure_ceilings(a, work, "end"))
    results["ceilings"] = best_ceilings(results["ceilings_runs"])
    results["ceilings_per_rank"] = {
        str(r): ceilings_per_rank(results["ceilings"], r) for r in a.rank_list}
    for case in results["cases"]:
        if "error" not in case:
            analyse(case, results["ceilings_per_rank"][str(case["ranks"])])
    results["settings"]["load_average_at_end"] = os.getloadavg()
    summarise(results)
    write_outputs(a, results)
    failed = [c for c in results["cases"] if "error" in c]
    check_failed = not results.get("self_check", {"ok": True})["ok"]
    return 1 if failed or check_failed else 0


if __name__ == "__main__":
    sys.exit(main())

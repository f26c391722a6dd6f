#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The decode benchmark of dtensor (a table of dtensor_bench, or alone):
the step time of generating one token with the KV cache, at several
context lengths, side by side with the old recompute path and with PyTorch
eager generating with a KV cache, against this machine's memory bandwidth.

  python3 -m dtensor_bench.decode [--out DIR] [--build-dir DIR] [--quick]
      [--contexts 128,512,2048] [--ranks 1,2] [--models REGEX]
      [--tokens K] [--batch B] [--rounds N] [--torch-python PYTHON]
      [--no-torch] [--no-recompute] [--no-max-seq-probe]

Alone it measures the ceilings (build/bin/dtensor-bench-ceilings, at the
start and the end, the best kept) and writes DIR/results.json
({"decode": ...}) and DIR/results.md; dtensor_bench calls measure(),
analyse() and markdown() and puts the table in its own results
(`scripts/bench.sh --decode-only` runs it alone with bench.py's ceilings).

Per model (MODELS: the llama_tiny shapes and a GQA model of dim 2048),
rank count R and context C, each step producing the next token of one
sequence whose context is C tokens:

- ours: the plan of `gen-model-plan.py --kv-cache --slots S --max-seq M
  --prefill <the contexts> --plan tp --mesh R` (M = the largest context;
  S = 4, the decode entry's batch), `dtensor-compile --mesh R`, then
  `dtensor-run -n R --random-inputs 1 --generate K --prompt P.npy` with
  --batch prompts (default 1) of C - K tokens: the prefill writes positions
  0 .. C-K-1, and the K - 1 decode steps run at positions C-K .. C-2
  (contexts C-K+1 .. C-1, "about C"); the median decode step it prints.
  The decode entry always runs its S rows (the rows of slots without a
  prompt are padding: they write nothing, but the weight products compute
  them). Its attention is the runtime's fused kernel, which reads each
  row's cache slot in place up to that row's own position (a padding row
  reads none), so the attention's cost follows C, not M; compiled with
  `dtensor-compile --no-fused-attention` it would attend over all M
  positions of every row, masked. The max-seq probe (one rank, the
  smallest context C0) compiles the same model with --max-seq C0 to show
  what M still costs;
- recompute (the old path): the stateless plan of the same model,
  `gen-model-plan.py --batch 1 --seq C --plan tp --mesh R`, with
  `dtensor-run -n R --random-inputs 1 --warmup W --iters I`: one step is
  the whole sequence recomputed for one new token;
- torch-cache: `torch_generate.py STATELESS_PLAN --time C --threads T`
  (PyTorch eager, a hand-written Llama with a preallocated KV cache, one
  sequence, one decode step at position C - 1 after a prefill of C - 1
  tokens), in the PyTorch 2 interpreter (--torch-python, else
  `scripts/torch-env.sh --python`), with T = the cores, the total threads
  of our R ranks (cores / R each): on 2 ranks ours has 2 processes of 1
  thread, torch one of 2;
- the KV cache per rank: the state tensors of the artifact's manifest,
  their global shapes and placements (torch.chunk sizes, the largest
  shard), in bytes and as a fraction of the whole cache;
- roofline: the bytes a decode step must read per rank — its weight shards
  once (the embedding: only the looked-up rows), and the KV rows of the
  context (B rows x C positions x its KV heads) — over the memory
  bandwidth per rank (bench.py's ceilings_per_rank: all cores' best stream
  kernel / R); the FLOPs (2 per weight element and row, attention's over
  C) over the GEMM peak, the larger of the two; `% roofline` = roofline /
  ours. `roofline@M` counts the cache rows an unfused step would read
  (all M positions of the decode entry's S rows).

Every side is measured --rounds times (default 2; --quick 1), interleaved
per context, the best median kept (the machine may be shared). Targets (the
issue's): nearly flat (ours at the largest context within 1.25x of ours at
the smallest, or of the roofline's own growth + 10%), at the largest
context >= 20x faster than recompute and >= 2x faster than torch-cache.
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

from dtensor_bench import ceilings as bench
from dtensor_bench.support import (ROOT, SCRIPTS, fmt_bytes, fmt_ms,
                                   module_command, run)

# gen-model-plan.py arguments of each model (without the plan, batch, seq
# or cache flags). llama_tiny: examples/llama_tiny_kv.json's sizes.
# gqa_large: dim 2048 with grouped-query attention (16 query heads, 4 KV
# heads of 128, dividing 1, 2 and 4 ranks); 2 layers and a 4096 vocab keep
# a recompute step at 2048 tokens to seconds on 2 cores (its weights are
# 106 M parameters, 424 MB in f32, so a decode step is memory-bound).
MODELS = {
    "llama_tiny": ["--model", "llama", "--layers", "2", "--dim", "64",
                   "--heads", "4", "--ffn", "128", "--vocab", "256"],
    "gqa_large": ["--model", "llama", "--layers", "2", "--dim", "2048",
                  "--heads", "16", "--kv-heads", "4", "--ffn", "5632",
                  "--vocab", "4096"],
}
QUICK_MODELS = ["llama_tiny"]
CONTEXTS = [128, 512, 2048]
QUICK_CONTEXTS = [16, 48]
SLOTS = 4

TARGET_RECOMPUTE = 20.0  # at the largest context: recompute ms / ours ms
TARGET_TORCH = 2.0       # at the largest context: torch-cache ms / ours ms
TARGET_FLAT = 1.25       # ours at the largest / at the smallest context

DTYPE_BYTES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i64": 8, "i32": 4}


def default_log(message):
    print(f"[bench-decode] {message}", file=sys.stderr, flush=True)


# --- the artifact's manifest: KV cache and weight bytes per rank ---------------

def shard_size(size, parts):
    """The largest torch.chunk shard of `size` in `parts`."""
    return -(-size // parts) if parts else size


def local_shape(tensor, mesh_shape):
    """The largest local shape of a manifest tensor: each S(d) over a mesh
    dim splits dim d by that dim's size (several mesh dims on one tensor
    dim split it in turn)."""
    shape = list(tensor["shape"])
    for mesh_dim, placement in enumerate(tensor.get("placements", [])):
        m = re.fullmatch(r"S\((-?\d+)\)", placement)
        if m:
            d = int(m.group(1)) % max(len(shape), 1)
            shape[d] = shard_size(shape[d], mesh_shape[mesh_dim])
    return shape


def manifest_bytes(artifact):
    """From DIR/manifest.json: the KV cache (role state) and the weights,
    global bytes and the largest rank's bytes, per tensor kind."""
    with open(os.path.join(artifact, "manifest.json")) as f:
        manifest = json.load(f)
    meshes = [m["shape"] for m in manifest["meshes"]]
    out = {"state": [], "weight": []}
    for t in manifest["tensors"]:
        if t["role"] not in out:
            continue
        size = DTYPE_BYTES[t["dtype"]]
        local = local_shape(t, meshes[t.get("mesh", 0)])
        out[t["role"]].append({
            "name": t["name"], "shape": t["shape"], "local_shape": local,
            "placements": t.get("placements", []), "dtype": t["dtype"],
            "bytes": size * math.prod(t["shape"]),
            "bytes_per_rank": size * math.prod(local)})
    return out


# --- one model's plans and artifacts --------------------------------------------

def gen_plan(a, args, path):
    run(module_command(sys.executable, "dtensor_testing.gen_model_plan") + args +
        ["-o", path])
    return path


def kv_plan(a, model, ranks, max_seq, prefill, work):
    name = f"{model}-kv-m{max_seq}-r{ranks}"
    return gen_plan(a, MODELS[model] + [
        "--kv-cache", "--slots", str(SLOTS), "--max-seq", str(max_seq),
        "--prefill", ",".join(str(p) for p in prefill), "--plan", "tp",
        "--mesh", str(ranks)], os.path.join(work, name + ".json"))


def stateless_plan(a, model, ranks, context, work):
    name = f"{model}-seq{context}-r{ranks}"
    return gen_plan(a, MODELS[model] + [
        "--batch", "1", "--seq", str(context), "--plan", "tp", "--mesh",
        str(ranks)], os.path.join(work, name + ".json"))


def compile_plan(a, plan, ranks):
    artifact = plan[:-len(".json")] + ".dtc"
    if os.path.exists(artifact):
        shutil.rmtree(artifact)
    start = time.monotonic()
    run([os.path.join(a.bin_dir, "dtensor-compile"), plan, "-o", artifact,
         "--mesh", str(ranks), "--no-reference"], timeout=a.case_timeout)
    return artifact, time.monotonic() - start


# --- the three sides ------------------------------------------------------------

GENERATED = re.compile(r"generated (\d+) tokens? after (\d+) prompts? on (\d+) "
                       r"ranks?: prefill ([0-9.]+) ms, decode step median "
                       r"([0-9.]+) ms")
RAN = re.compile(r"ran (\d+) steps? on (\d+) ranks?: median ([0-9.]+) ms, "
                 r"min ([0-9.]+) ms")


def prompt_file(a, model, context, work):
    """A prompt of C - K token ids (deterministic, in the vocabulary)."""
    import numpy as np
    vocab = int(MODELS[model][MODELS[model].index("--vocab") + 1])
    length = context - a.tokens
    path = os.path.join(work, f"prompt-{model}-{context}.npy")
    np.save(path, ((np.arange(length) * 7919 + 13) % vocab).astype(np.int64))
    return path


def run_ours(a, artifact, ranks, prompt):
    cmd = [os.path.join(a.bin_dir, "dtensor-run"), artifact, "-n", str(ranks),
           "--random-inputs", "1", "--generate", str(a.tokens)]
    for _ in range(a.batch):
        cmd += ["--prompt", prompt]
    result = run(cmd, timeout=a.case_timeout, env=a.blas_env())
    m = GENERATED.search(result.stdout)
    if not m:
        raise RuntimeError("no generation line in dtensor-run's output:\n" +
                           result.stdout[-2000:] + result.stderr[-2000:])
    return {"median_ms": float(m.group(5)), "prefill_ms": float(m.group(4)),
            "decode_steps": int(m.group(1)) - 1, "prompts": int(m.group(2))}


def run_recompute(a, artifact, ranks, iters, warmup):
    result = run([os.path.join(a.bin_dir, "dtensor-run"), artifact, "-n",
                  str(ranks), "--random-inputs", "1", "--warmup", str(warmup),
                  "--iters", str(iters)], timeout=a.case_timeout,
                 env=a.blas_env())
    m = RAN.search(result.stdout)
    if not m:
        raise RuntimeError("no timing line in dtensor-run's output:\n" +
                           result.stdout[-2000:] + result.stderr[-2000:])
    return {"median_ms": float(m.group(3)), "min_ms": float(m.group(4)),
            "iters": int(m.group(1)), "warmup": warmup}


def run_torch(a, plan, context):
    threads = a.cores
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    warmup, iters = (1, 3) if a.quick else (3, 10)
    result = run(module_command(a.decode_python,
                                "dtensor_testing.torch_generate") + [
                  plan, "--time", str(context), "--threads", str(threads),
                  "--warmup", str(warmup), "--iters", str(iters)],
                 timeout=a.case_timeout, env=env)
    line = json.loads(result.stdout.strip().splitlines()[-1])
    return {"median_ms": line["decode_ms"], "min_ms": line["decode_min_ms"],
            "threads": line["threads"], "iters": line["iters"],
            "warmup": warmup}


def torch_python(a, log):
    """The PyTorch 2 interpreter for torch_generate.py, or None and why."""
    if a.no_torch:
        return None, "--no-torch"
    # bench.py's PyTorch 2 interpreter when it found one already.
    python = getattr(a, "dtensor_python", None) or a.torch_python
    if not python:
        log("torch-cache: scripts/torch-env.sh --python (makes the "
            "environment if it is missing)")
        result = subprocess.run([os.path.join(SCRIPTS, "torch-env.sh"),
                                 "--python"], capture_output=True, text=True,
                                timeout=1800)
        lines = result.stdout.strip().splitlines()
        if result.returncode != 0 or not lines:
            return None, "scripts/torch-env.sh failed: " + (
                result.stderr.strip().splitlines() or ["no output"])[-1]
        python = lines[-1].strip()
    probe = subprocess.run(
        [python, "-c", "import torch, safetensors, torch.nn.functional as F;"
         " F.scaled_dot_product_attention; print(torch.__version__)"],
        capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        tail = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"{python} cannot run torch_generate.py: {tail}"
    return python, probe.stdout.strip()


def best(runs):
    """The round with the smallest median; every round's median kept."""
    if not runs:
        return None
    out = dict(min(runs, key=lambda r: r["median_ms"]))
    out["round_medians_ms"] = [r["median_ms"] for r in runs]
    return out


def recompute_iters(a, estimate_ms):
    """Timed and warm-up steps of a recompute measurement: about --budget
    seconds of steps (3 .. 50), 1 warm-up step."""
    if a.quick:
        return 3, 1
    return int(min(50, max(3, 1e3 * a.budget / max(estimate_ms, 1e-3)))), 1


# --- the measurement ------------------------------------------------------------

def measure(a, log=default_log):
    """Every selected (model, ranks, context): ours, recompute and
    torch-cache, interleaved in rounds. Returns the `decode` results (rows
    without the roofline: analyse() adds it with the final ceilings)."""
    work = os.path.join(a.out, "work", "decode")
    os.makedirs(work, exist_ok=True)
    a.decode_python, torch_info = torch_python(a, log)
    if a.decode_python:
        log(f"torch-cache: {a.decode_python} (torch {torch_info}), "
            f"{a.cores} threads")
    else:
        log(f"torch-cache: none ({torch_info}): no torch-cache column")
    contexts = sorted(a.context_list)
    max_seq = max(contexts)
    results = {"settings": {
        "models": {m: MODELS[m] for m in a.model_list},
        "contexts": contexts, "ranks": a.rank_list, "slots": SLOTS,
        "max_seq": max_seq, "prefill": contexts, "tokens": a.tokens,
        "batch": a.batch, "rounds": a.rounds, "cores": a.cores,
        "torch": {"python": a.decode_python, "version": torch_info}
        if a.decode_python else {"unavailable": torch_info},
        "load_average_at_start": os.getloadavg()}, "rows": [],
        "max_seq_probe": []}
    start = time.monotonic()
    for model in a.model_list:
        artifacts, memory = {}, {}
        for ranks in a.rank_list:
            plan = kv_plan(a, model, ranks, max_seq, contexts, work)
            log(f"{model} R={ranks}: compile the KV-cache plan (max-seq "
                f"{max_seq}, prefill {','.join(map(str, contexts))})")
            artifacts[ranks], seconds = compile_plan(a, plan, ranks)
            memory[ranks] = manifest_bytes(artifacts[ranks])
            memory[ranks]["compile_s"] = seconds
        rows = {}
        for context in contexts:
            prompt = prompt_file(a, model, context, work)
            recompute_art = {}
            for ranks in a.rank_list:
                row = {"model": model, "ranks": ranks, "context": context,
                       "prompt_tokens": context - a.tokens,
                       "decode_contexts": [context - a.tokens + 1,
                                           context - 1],
                       "ours_runs": [], "recompute_runs": [],
                       "torch_runs": []}
                rows[(context, ranks)] = row
                results["rows"].append(row)
                row["kv"] = kv_summary(memory[ranks])
                row["weights"] = weight_summary(memory[ranks])
                if not a.no_recompute:
                    plan = stateless_plan(a, model, ranks, context, work)
                    try:
                        recompute_art[ranks], _ = compile_plan(a, plan, ranks)
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        row["recompute_error"] = str(e)[-2000:]
                        log(f"  recompute plan failed: {str(e)[-300:]}")
            torch_plan = stateless_plan(a, model, 1, context, work)
            for round_ in range(a.rounds):
                load = os.getloadavg()[0]
                if a.decode_python:
                    log(f"{model} C={context}: round {round_ + 1}/{a.rounds} "
                        f"(load {load:.1f}): torch-cache")
                    try:
                        t = run_torch(a, torch_plan, context)
                        t["load_before"] = load
                        for ranks in a.rank_list:
                            rows[(context, ranks)]["torch_runs"].append(t)
                    except (RuntimeError, subprocess.TimeoutExpired,
                            ValueError) as e:
                        for ranks in a.rank_list:
                            rows[(context, ranks)]["torch_error"] = \
                                str(e)[-2000:]
                        log(f"  torch-cache failed: {str(e)[-300:]}")
                for ranks in a.rank_list:
                    row = rows[(context, ranks)]
                    load = os.getloadavg()[0]
                    log(f"{model} C={context} R={ranks}: round {round_ + 1}/"
                        f"{a.rounds} (load {load:.1f}): ours (--generate "
                        f"{a.tokens}, {a.batch} prompt(s) of "
                        f"{context - a.tokens}), recompute")
                    try:
                        ours = run_ours(a, artifacts[ranks], ranks, prompt)
                        ours["load_before"] = load
                        row["ours_runs"].append(ours)
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        row["ours_error"] = str(e)[-2000:]
                        log(f"  ours failed: {str(e)[-300:]}")
                    if ranks not in recompute_art:
                        continue
                    prior = row["recompute_runs"]
                    # A recompute step of seconds is measured once.
                    if prior and prior[-1]["median_ms"] > 1000:
                        continue
                    estimate = prior[-1]["median_ms"] if prior else None
                    iters, warmup = ((3, 1) if estimate is None else
                                     recompute_iters(a, estimate))
                    try:
                        rec = run_recompute(a, recompute_art[ranks], ranks,
                                            iters, warmup)
                        rec["load_before"] = load
                        prior.append(rec)
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        row["recompute_error"] = str(e)[-2000:]
                        log(f"  recompute failed: {str(e)[-300:]}")
            for ranks in a.rank_list:
                row = rows[(context, ranks)]
                for side in ("ours", "recompute", "torch"):
                    row[side] = best(row.pop(side + "_runs"))
                log(f"  {model} C={context} R={ranks}: " + ", ".join(
                    f"{side} {row[side]['median_ms']:.3f} ms"
                    for side in ("ours", "recompute", "torch") if row[side]))
                shutil.rmtree(recompute_art.get(ranks, "/nonexistent"),
                              ignore_errors=True)
        if not a.no_max_seq_probe and max(contexts) > min(contexts):
            results["max_seq_probe"].append(max_seq_probe(
                a, model, min(contexts), work, rows, log))
        for artifact in artifacts.values():
            shutil.rmtree(artifact, ignore_errors=True)
    results["wall_s"] = time.monotonic() - start
    results["settings"]["load_average_at_end"] = os.getloadavg()
    return results


def max_seq_probe(a, model, context, work, rows, log):
    """Ours on one rank at the smallest context with a cache of just that
    many positions, next to the table's plan (max-seq = largest context)."""
    plan = kv_plan(a, model, 1, context, [context], work)
    log(f"{model}: max-seq probe (max-seq {context}, context {context}, "
        f"1 rank)")
    probe = {"model": model, "ranks": 1, "context": context,
             "max_seq": context}
    try:
        artifact, _ = compile_plan(a, plan, 1)
        prompt = prompt_file(a, model, context, work)
        probe["ours"] = best([run_ours(a, artifact, 1, prompt)
                              for _ in range(a.rounds)])
        shutil.rmtree(artifact, ignore_errors=True)
        table = rows.get((context, 1), {}).get("ours")
        if table:
            probe["table_max_seq"] = max(a.context_list)
            probe["table_ours_ms"] = table["median_ms"]
            probe["table_over_probe"] = (table["median_ms"] /
                                         probe["ours"]["median_ms"])
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        probe["error"] = str(e)[-2000:]
        log(f"  max-seq probe failed: {str(e)[-300:]}")
    return probe


def kv_summary(memory):
    state = memory["state"]
    total = sum(t["bytes"] for t in state)
    per_rank = sum(t["bytes_per_rank"] for t in state)
    return {"bytes": total, "bytes_per_rank": per_rank,
            "fraction_per_rank": per_rank / total if total else 0.0,
            "placements": sorted({"/".join(t["placements"]) for t in state}),
            "tensors": len(state),
            "shape": state[0]["shape"] if state else None,
            "local_shape": state[0]["local_shape"] if state else None}


def weight_summary(memory):
    w = memory["weight"]
    return {"bytes": sum(t["bytes"] for t in w),
            "bytes_per_rank": sum(t["bytes_per_rank"] for t in w),
            "embedding": next(({"name": t["name"], "shape": t["shape"],
                                "local_shape": t["local_shape"],
                                "bytes_per_rank": t["bytes_per_rank"]}
                               for t in w if "embedding" in t["name"]), None)}


# --- roofline, targets ----------------------------------------------------------

def step_bytes(row, batch, positions):
    """The bytes a decode step of `batch` rows must read on one rank: the
    weight shards once (of the embedding only `batch` rows) and `positions`
    cached positions of each row from every state tensor."""
    w = row["weights"]
    weights = w["bytes_per_rank"]
    emb = w["embedding"]
    if emb:
        row_bytes = emb["bytes_per_rank"] // max(emb["local_shape"][0], 1)
        weights -= emb["bytes_per_rank"] - min(emb["bytes_per_rank"],
                                               batch * row_bytes)
    kv = row["kv"]
    slots, max_seq = kv["local_shape"][0], kv["local_shape"][1]
    per_position = kv["bytes_per_rank"] / (slots * max_seq)
    return weights + batch * positions * per_position


def step_flops(row, batch, positions):
    """2 per weight element and row, and attention's two products over the
    positions (per rank: its KV heads' share of q.k and p.v, each query
    head reading its group's keys)."""
    w = row["weights"]
    emb = w["embedding"]["bytes_per_rank"] if w["embedding"] else 0
    weight_elems = (w["bytes_per_rank"] - emb) / 4
    kv = row["kv"]
    cached = kv["bytes_per_rank"] / 4 / (kv["local_shape"][0] *
                                         kv["local_shape"][1])
    # cached: elements per position over all layers' K and V (local heads
    # x head dim x 2 x layers); the query heads of a group share them, so
    # the products cost 2 * (query heads / KV heads) per cached element.
    groups = row.get("gqa_groups", 1)
    return 2 * batch * weight_elems + 2 * batch * positions * cached * groups


def analyse(decode, ceilings_per_rank):
    """The roofline of every row, the ratios and the targets."""
    batch = decode["settings"]["batch"]
    slots, max_seq = decode["settings"]["slots"], decode["settings"]["max_seq"]
    for row in decode["rows"]:
        per_rank = ceilings_per_rank[str(row["ranks"])]
        model = decode["settings"]["models"][row["model"]]
        heads = int(model[model.index("--heads") + 1])
        kv_heads = (int(model[model.index("--kv-heads") + 1])
                    if "--kv-heads" in model else heads)
        row["gqa_groups"] = heads // kv_heads
        bw = per_rank["bandwidth_gbps"] * 1e9
        peak = per_rank["gemm_gflops"] * 1e9
        need = step_bytes(row, batch, row["context"])
        flops = step_flops(row, batch, row["context"])
        row["roofline"] = {
            "bytes_per_rank": need, "flops_per_rank": flops,
            "bandwidth_gbps": per_rank["bandwidth_gbps"],
            "gemm_gflops": per_rank["gemm_gflops"],
            "ms": 1e3 * max(need / bw, flops / peak),
            "bound": "memory" if need / bw >= flops / peak else "gemm",
            # What the compiled step reads: every slot row, all positions.
            "bytes_per_rank_at_max_seq": step_bytes(row, slots, max_seq),
            "ms_at_max_seq": 1e3 * step_bytes(row, slots, max_seq) / bw}
        ours = row.get("ours")
        if ours:
            row["fraction_of_roofline"] = row["roofline"]["ms"] / \
                ours["median_ms"]
            row["fraction_of_roofline_at_max_seq"] = \
                row["roofline"]["ms_at_max_seq"] / ours["median_ms"]
            for side in ("recompute", "torch"):
                if row.get(side):
                    row[f"{side}_over_ours"] = (row[side]["median_ms"] /
                                                ours["median_ms"])
    decode["targets"] = targets(decode)
    return decode


def targets(decode):
    out = []
    contexts = decode["settings"]["contexts"]
    first, last = min(contexts), max(contexts)
    by = {(r["model"], r["ranks"], r["context"]): r for r in decode["rows"]}
    for model in decode["settings"]["models"]:
        for ranks in decode["settings"]["ranks"]:
            lo, hi = by.get((model, ranks, first)), by.get((model, ranks, last))
            if not hi or not hi.get("ours"):
                continue
            name = f"{model} R={ranks}"
            if lo and lo.get("ours") and last > first:
                growth = hi["ours"]["median_ms"] / lo["ours"]["median_ms"]
                allowed = max(TARGET_FLAT, 1.1 * hi["roofline"]["ms"] /
                              lo["roofline"]["ms"])
                out.append({"case": name, "target": "flat",
                            "value": growth, "goal": allowed,
                            "met": growth <= allowed,
                            "text": f"ours C={last} / C={first}: "
                                    f"{growth:.2f}x (allowed {allowed:.2f}x)"})
            for side, goal in (("recompute", TARGET_RECOMPUTE),
                               ("torch", TARGET_TORCH)):
                value = hi.get(f"{side}_over_ours")
                if value is None:
                    continue
                out.append({"case": name, "target": f"{side}_speedup",
                            "context": last, "value": value, "goal": goal,
                            "met": value >= goal,
                            "text": f"{side} / ours at C={last}: "
                                    f"{value:.1f}x (goal {goal:.0f}x)"})
    return out


# --- output ---------------------------------------------------------------------

def markdown(decode):
    st = decode["settings"]
    torch_text = (f"PyTorch {st['torch']['version']} eager "
                  f"(dtensor_testing.torch_generate --time, {st['cores']} threads, "
                  f"one process)" if "version" in st["torch"] else
                  f"not measured ({st['torch']['unavailable']})")
    lines = ["## Decode with the KV cache", "",
             f"Each step produces the next token of a sequence whose context "
             f"is C tokens. ours: `dtensor-run --generate {st['tokens']}` on "
             f"the KV-cache plan (`gen-model-plan.py --kv-cache --slots "
             f"{st['slots']} --max-seq {st['max_seq']} --prefill "
             f"{','.join(map(str, st['prefill']))}`), {st['batch']} "
             f"prompt(s) of C − {st['tokens']} tokens, the median of its "
             f"{st['tokens'] - 1} decode steps (contexts C − "
             f"{st['tokens'] - 1} .. C − 1); the decode entry computes its "
             f"{st['slots']} rows; its fused attention reads each row's cache "
             f"positions up to its own (of {st['max_seq']}). recompute: the stateless plan "
             f"(`--batch 1 --seq C`) run as one step. torch-cache: "
             f"{torch_text}, a decode step at position C − 1; on R ranks "
             f"ours runs R processes of {st['cores']}/R threads against "
             f"torch's one of {st['cores']}. KV/rank: the cache's bytes on "
             f"the largest rank and its fraction of the whole. % roofline: "
             f"the least bytes a step reads per rank (weight shards once, "
             f"the looked-up embedding rows, the KV rows of the C positions)"
             f" over the memory bandwidth per rank; roofline@M counts what "
             f"an unfused step would read (the cache's {st['slots']} rows × "
             f"{st['max_seq']} positions). Best of {st['rounds']} "
             f"interleaved round(s); load average "
             f"{st['load_average_at_start'][0]:.1f} at the start, "
             f"{st['load_average_at_end'][0]:.1f} at the end; "
             f"{decode.get('wall_s', 0):.0f} s.", "",
             "| model | R | C | ours ms | recompute ms | torch-cache ms | "
             "recompute/ours | torch/ours | roofline ms | % roofline | "
             "roofline@M ms | prefill ms | KV/rank | KV fraction | "
             "weights/rank |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def cell(side, row):
        if row.get(side):
            return fmt_ms(row[side]["median_ms"])
        return "failed" if row.get(f"{side}_error") else "—"

    for row in decode["rows"]:
        ratio = {s: (f"{row[f'{s}_over_ours']:.1f}×" if f"{s}_over_ours" in row
                     else "—") for s in ("recompute", "torch")}
        roof = row.get("roofline", {})
        lines.append(
            f"| {row['model']} | {row['ranks']} | {row['context']} | "
            f"{cell('ours', row)} | {cell('recompute', row)} | "
            f"{cell('torch', row)} | {ratio['recompute']} | {ratio['torch']} "
            f"| {fmt_ms(roof['ms']) if roof else '—'} | "
            + (f"{100 * row['fraction_of_roofline']:.0f}%"
               if "fraction_of_roofline" in row else "—")
            + f" | {fmt_ms(roof['ms_at_max_seq']) if roof else '—'} | "
            + (fmt_ms(row["ours"]["prefill_ms"]) if row.get("ours") else "—")
            + f" | {fmt_bytes(row['kv']['bytes_per_rank'])} | "
            f"{row['kv']['fraction_per_rank']:.2f} "
            f"({'/'.join(row['kv']['placements'])}) | "
            f"{fmt_bytes(row['weights']['bytes_per_rank'])} |")
    probes = [p for p in decode.get("max_seq_probe", []) if "ours" in p]
    if probes:
        lines += ["", "Max-seq probe (1 rank, ours at the smallest context "
                  "with a cache of only that many positions):", "",
                  "| model | C | ours ms, max-seq C | ours ms, max-seq M | "
                  "ratio |", "|---|---|---|---|---|"]
        for p in probes:
            lines.append(
                f"| {p['model']} | {p['context']} | "
                f"{fmt_ms(p['ours']['median_ms'])} | "
                + (f"{fmt_ms(p['table_ours_ms'])} (M = {p['table_max_seq']}) "
                   f"| {p['table_over_probe']:.2f}× |"
                   if "table_ours_ms" in p else "— | — |"))
    lines += ["", "Targets (at the largest context; flat: ours at the "
              "largest over the smallest context):", ""]
    for t in decode.get("targets", []):
        lines.append(f"- {t['case']}: {t['text']}: "
                     + ("met" if t["met"] else "**missed**"))
    if not decode.get("targets"):
        lines.append("- none evaluated")
    return "\n".join(lines) + "\n"


def summary(decode):
    """One line for bench.py's summary."""
    ts = decode.get("targets", [])
    met = sum(t["met"] for t in ts)
    misses = [f"{t['case']} {t['target']}" for t in ts if not t["met"]]
    return f"{met} of {len(ts)} met" + (
        f" (missed: {', '.join(misses)})" if misses else "")


# --- command line ---------------------------------------------------------------

def add_options(p, prefix=""):
    """The options of the decode table (bench.py adds them with the prefix
    'decode-')."""
    p.add_argument(f"--{prefix}contexts", metavar="C,C,...",
                   help="contexts of the decode table (default 128,512,2048;"
                   " --quick 16,48)")
    p.add_argument(f"--{prefix}models", default=".*", metavar="REGEX",
                   help="models of the decode table (re.search over "
                   f"{', '.join(MODELS)}; --quick: llama_tiny)")
    p.add_argument(f"--{prefix}tokens", type=int,
                   help="tokens generated per prompt (the decode steps are "
                   "one fewer; default 16, --quick 4)")
    p.add_argument(f"--{prefix}batch", type=int, default=1,
                   help=f"prompts decoded together (1 .. {SLOTS}; default 1)")
    p.add_argument(f"--{prefix}no-recompute", action="store_true",
                   help="skip the recompute column")
    p.add_argument(f"--{prefix}no-torch", action="store_true",
                   help="skip the torch-cache column")
    p.add_argument(f"--{prefix}no-max-seq-probe", action="store_true",
                   help="skip the max-seq probe")


def configure(a, prefix=""):
    """Fills in the derived settings; returns an error message or None.
    `prefix`: that of add_options, with '_' for '-'."""
    dash, prefix = prefix.replace("_", "-"), prefix.replace("-", "_")
    get = lambda name: getattr(a, prefix + name)  # noqa: E731
    try:
        a.context_list = ([int(c) for c in get("contexts").split(",")]
                          if get("contexts") else
                          QUICK_CONTEXTS if a.quick else CONTEXTS)
    except ValueError:
        return f"--{dash}contexts {get('contexts')}: expected numbers"
    models = QUICK_MODELS if a.quick else list(MODELS)
    a.model_list = [m for m in models if re.search(get("models"), m)]
    a.tokens = get("tokens") or (4 if a.quick else 16)
    a.batch = get("batch")
    a.no_recompute = get("no_recompute")
    a.no_torch = get("no_torch")
    a.no_max_seq_probe = get("no_max_seq_probe")
    a.cores = os.cpu_count() or 1
    if a.tokens < 2:
        return f"--{dash}tokens must be at least 2 (one decode step)"
    if not 1 <= a.batch <= SLOTS:
        return f"--{dash}batch must be in [1, {SLOTS}]"
    if min(a.context_list) <= a.tokens:
        return f"every context must exceed --{dash}tokens {a.tokens}"
    if not a.model_list:
        return f"--{dash}models {get('models')}: no model matches"
    return None


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(ROOT, "bench-results",
                                                  "decode"))
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true",
                   help="the tiny model, contexts 16 and 48, few steps")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--rounds", type=int,
                   help="interleaved measurements, best kept (default 2; "
                   "--quick 1)")
    p.add_argument("--budget", type=float, default=3.0,
                   help="seconds of timed recompute steps per measurement")
    p.add_argument("--case-timeout", type=float, default=900)
    p.add_argument("--torch-python", metavar="PYTHON",
                   help="the PyTorch 2 interpreter of torch-cache (default: "
                   "scripts/torch-env.sh --python)")
    p.add_argument("--blas-coretype", default="runtime", metavar="FAMILY",
                   help="as bench.py's: runtime (our runtime picks), inherit "
                   "or an OpenBLAS family for DTENSOR_BLAS_CORETYPE")
    add_options(p)
    a = p.parse_args(argv)
    a.bin_dir = os.path.join(a.build_dir, "bin")
    a.rank_list = [int(r) for r in a.ranks.split(",")]
    a.rounds = a.rounds or (1 if a.quick else 2)
    error = configure(a)
    if error:
        p.error(error)
    a.blas_env = lambda: bench.blas_env(a)
    os.makedirs(os.path.join(a.out, "work"), exist_ok=True)
    ceilings = [bench.measure_ceilings(a, os.path.join(a.out, "work"),
                                       "start")]
    decode = measure(a)
    ceilings.append(bench.measure_ceilings(a, os.path.join(a.out, "work"),
                                           "end"))
    best_ceil = bench.best_ceilings(ceilings)
    per_rank = {str(r): bench.ceilings_per_rank(best_ceil, r)
                for r in a.rank_list}
    analyse(decode, per_rank)
    results = {"date": time.strftime("%Y-%m-%d %H:%M:%S"),
               "machine": {"cpu": best_ceil["cpu"]["model"],
                           "cores": best_ceil["cpu"]["cores"]},
               "ceilings_per_rank": per_rank, "decode": decode}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    text = markdown(decode)
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    print(text)
    failed = any(r.get(k) for r in decode["rows"]
                 for k in ("ours_error", "recompute_error", "torch_error"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The training table of the benchmarks (a table of dtensor_bench, or
alone): compiled training steps (a plan's `training` section: AdamW,
clip_grad_norm_ 1.0; docs/training.md) against PyTorch's.

  python3 -m dtensor_bench.training [--out DIR] [--build-dir DIR] [--quick]
      [--train-cases tiny,4m] [--train-meshes 1,dp2,tp2,dp2xtp2]
      [--iters N] [--torch-python PYTHON] [--no-torch]

Cases: `tiny` (llama_tiny: 2 layers, dim 64, vocab 256, 2 x 16 tokens) and
`4m` (4 layers, dim 256, 4 heads, ffn 688, vocab 2048, 8 x 128 tokens:
4.2M parameters), both dtensor_testing.gen_model_plan --loss --plan dp-tp;
`4m-ckpt`, run only when named, is 4m with `activation_checkpointing:
["layers.*"]` (no PyTorch columns).
Meshes: 1 rank, dp2, tp2 and dp2 x tp2 (4 ranks: on a 2-core machine
oversubscribed, for every column alike).

Ours: `dtensor-compile --mesh dp=D --mesh tp=T`, then under mpirun each
rank runs `dtensor-run --entry train_step` (and `eval_step`: the forward
and the loss) with random inputs, under context_parallel's --peak-rss
wrapper: the median step time, tokens per second (batch x sequence / step
time), the peak resident memory of the largest rank beside the compiler's
account of train_step's memory on its largest rank (`dtensor-compile
--memory-report`, docs/memory-report.md): its peak, the parameters and
optimizer state, the gradients and saved activations, the peak of the
step's own buffers as the program frees them and were each freed after
its last use; and the backward's
share: (train_step - eval_step) / eval_step, which counts the optimizer
update with the backward.

PyTorch (dtensor_bench.peers.torch_train, the scripts/torch-env.sh
environment): on one process, eager and torch.compile with the machine's
cores as threads; on each mesh, PyTorch DTensor (parallelize_module over
tp, DDP over dp, gloo) with cores / ranks threads per rank, as ours. The
ratio column is PyTorch's time over ours (above 1: ours is faster).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

from dtensor_bench.context_parallel import (PEAK, RAN, default_torch_python,
                                           launch_command)
from dtensor_bench.support import module_command, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
CASES = {
    "tiny": ["--preset", "tiny"],
    "4m": ["--layers", "4", "--dim", "256", "--heads", "4", "--ffn", "688",
           "--vocab", "2048", "--batch", "8", "--seq", "128"],
}
# Cases run only when named: the 4M case with every layer's activations
# recomputed in the backward (training.activation_checkpointing), for its
# step time and memory beside 4m's. No PyTorch columns: the peers do not
# checkpoint.
CHECKPOINTED = {"4m-ckpt": "4m"}
CASE_TRAINING = {"4m-ckpt": {"activation_checkpointing": ["layers.*"]}}
MESHES = {"1": (1, 1), "dp2": (2, 1), "tp2": (1, 2), "dp2xtp2": (2, 2)}
TRAINING = {"loss": "loss", "optimizer": {"kind": "adamw", "lr": 1e-3},
            "clip_grad_norm": 1.0}


def default_log(message):
    print(f"[bench-train] {message}", file=sys.stderr, flush=True)


def add_options(p, prefix=""):
    p.add_argument(f"--{prefix}cases", metavar="C,C",
                   help="cases: tiny, 4m (default both; --quick tiny), "
                   "4m-ckpt (4m with every layer checkpointed)")
    p.add_argument(f"--{prefix}meshes", metavar="M,M",
                   help="meshes: 1, dp2, tp2, dp2xtp2 (default all; --quick "
                   "1,tp2)")
    p.add_argument(f"--{prefix}no-torch", action="store_true",
                   help="skip the PyTorch columns")


def configure(a, prefix=""):
    dash, prefix = prefix.replace("_", "-"), prefix.replace("-", "_")
    cases = getattr(a, prefix + "cases")
    meshes = getattr(a, prefix + "meshes")
    a.train_case_list = (cases.split(",") if cases else
                         ["tiny"] if a.quick else list(CASES))
    a.train_mesh_list = (meshes.split(",") if meshes else
                         ["1", "tp2"] if a.quick else list(MESHES))
    a.train_no_torch = getattr(a, prefix + "no_torch")
    for case in a.train_case_list:
        if case not in CASES and case not in CHECKPOINTED:
            return f"--{dash}cases: unknown case '{case}'"
    for mesh in a.train_mesh_list:
        if mesh not in MESHES:
            return f"--{dash}meshes: unknown mesh '{mesh}'"
    return None


def plan_path(work, case):
    path = os.path.join(work, f"train-{case}.json")
    if not os.path.exists(path):
        run(module_command(sys.executable, "dtensor_testing.gen_model_plan")
            + CASES[CHECKPOINTED.get(case, case)]
            + ["--loss", "--plan", "dp-tp", "--mesh", "2x2", "-o", path])
        with open(path) as f:
            plan = json.load(f)
        plan["model"]["training"] = {**TRAINING,
                                     **CASE_TRAINING.get(case, {})}
        with open(path, "w") as f:
            json.dump(plan, f)
    return path


def token_inputs(work, plan):
    """`--input` flags of random token ids and targets in [0, vocab) (what
    --random-inputs leaves at zero: a step on constant targets, whose loss
    soon reaches 0), seeded, written next to the plan."""
    import numpy as np
    with open(plan) as f:
        model = json.load(f)["model"]
    vocab = next(p["shape"][0] for p in model["parameters"]
                 if p["name"] == "tok_embeddings.weight")
    generator = np.random.default_rng(1)
    flags = []
    for t in model["inputs"]:
        if t["name"] in ("tokens", "targets"):
            path = os.path.join(work, f"{os.path.basename(plan)}.{t['name']}.npy")
            np.save(path, generator.integers(0, vocab, t["shape"]))
            flags += ["--input", f"{t['name']}={path}"]
    return flags


def run_ours(a, artifact, ranks, entry, iters, inputs=()):
    cmd = launch_command(ranks) + [
        *module_command(sys.executable, "dtensor_bench.context_parallel"),
        "--peak-rss", "--", os.path.join(a.bin_dir, "dtensor-run"), artifact,
        "--entry", entry, "--random-inputs", "1", *inputs, "--warmup", "2",
        "--iters", str(iters)]
    result = run(cmd, timeout=a.case_timeout, env=a.blas_env())
    m = RAN.search(result.stdout)
    peaks = [int(k) * 1024 for _, k in PEAK.findall(result.stdout)]
    if not m or len(peaks) != ranks:
        raise RuntimeError("no timing or memory lines:\n" +
                           result.stdout[-2000:] + result.stderr[-2000:])
    return float(m.group(3)), max(peaks)


def memory_account(report):
    """The compiler's account of train_step on its largest rank, from
    `dtensor-compile --memory-report=json`: the rank with the largest peak
    (docs/memory-report.md)."""
    with open(report) as f:
        entries = json.load(f)["entries"]
    entry = next(e for e in entries if e["name"] == "train_step")
    return next(r for r in entry["ranks"] if r["rank"] == entry["max_rank"])


def run_torch(a, python, plan, args, iters):
    cmd = module_command(python, "dtensor_bench.peers.torch_train") + [
        plan, "--warmup", "2", "--iters", str(iters)] + args
    try:
        result = run(cmd, timeout=a.case_timeout, check=False,
                     env=a.blas_env())
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"torch_train failed: {tail}"}
    return json.loads(lines[-1])


def measure(a, log=default_log):
    work = os.path.join(a.out, "work-train")
    os.makedirs(work, exist_ok=True)
    cores = os.cpu_count() or 1
    iters = a.iters or (3 if a.quick else 10)
    python = None
    if not a.train_no_torch:
        python = getattr(a, "dtensor_python", None)
        if not python:
            python, reason = default_torch_python()
            if reason:
                log(f"PyTorch columns: not run ({reason})")
    rows = []
    for case in a.train_case_list:
        plan = plan_path(work, case)
        with open(plan) as f:
            shape = next(t["shape"] for t in json.load(f)["model"]["inputs"]
                         if t["name"] == "tokens")
        tokens = shape[0] * shape[1]
        inputs = token_inputs(work, plan)
        torch_single = {}
        peers = python if case not in CHECKPOINTED else None
        if peers:
            for mode in ("eager", "compiled"):
                torch_single[mode] = run_torch(
                    a, python, plan, ["--plain", "--mode", mode,
                                      "--threads", str(cores)], iters)
                log(f"{case}: PyTorch {mode}, 1 process: {torch_single[mode]}")
        for mesh in a.train_mesh_list:
            dp, tp = MESHES[mesh]
            ranks = dp * tp
            artifact = os.path.join(work, f"train-{case}-{mesh}.dtc")
            shutil.rmtree(artifact, ignore_errors=True)
            report = artifact + ".memory.json"
            run([os.path.join(a.bin_dir, "dtensor-compile"), plan, "-o",
                 artifact, "--mesh", f"dp={dp}", "--mesh", f"tp={tp}",
                 "--no-reference", "--memory-report=json",
                 "--memory-report-file", report], timeout=a.case_timeout)
            accounted = memory_account(report)
            train_ms, peak = run_ours(a, artifact, ranks, "train_step", iters,
                                      inputs)
            eval_ms, _ = run_ours(a, artifact, ranks, "eval_step", iters,
                                  inputs)
            shutil.rmtree(artifact, ignore_errors=True)
            os.remove(report)
            row = {"case": case, "mesh": mesh, "ranks": ranks,
                   "tokens": tokens, "train_ms": train_ms, "eval_ms": eval_ms,
                   "tokens_per_s": tokens / (train_ms / 1e3),
                   "backward_ratio": (train_ms - eval_ms) / eval_ms,
                   "peak_bytes_per_rank": peak,
                   "accounted_rank": accounted["rank"],
                   "accounted_peak_bytes_per_rank": accounted["peak"],
                   "parameter_bytes_per_rank": accounted["parameters"],
                   "optimizer_state_bytes_per_rank":
                       accounted["optimizer_state"],
                   "gradient_bytes_per_rank": accounted["gradients"],
                   "saved_activation_bytes_per_rank":
                       accounted["saved_activations"],
                   "transient_peak_bytes_per_rank":
                       accounted["transient_peak"],
                   "last_use_peak_bytes_per_rank":
                       accounted["last_use_peak"],
                   "cached_buffer_bytes_per_rank":
                       accounted["cached_buffers"]}
            if peers:
                threads = max(1, cores // ranks)
                row["torch_dtensor"] = run_torch(
                    a, python, plan, ["--dp", str(dp), "--tp", str(tp),
                                      "--threads", str(threads)], iters)
                if ranks == 1:
                    row["torch_eager"] = torch_single["eager"]
                    row["torch_compiled"] = torch_single["compiled"]
            log(f"{case} {mesh}: train_step {train_ms:.2f} ms "
                f"({row['tokens_per_s']:.0f} tokens/s), eval_step "
                f"{eval_ms:.2f} ms, peak {peak / 2**20:.0f} MiB/rank; "
                f"PyTorch DTensor {row.get('torch_dtensor')}")
            rows.append(row)
    return {"rows": rows, "iters": iters, "cores": cores,
            "torch_python": python}


def cell(ours_ms, peer):
    if not peer:
        return "—", "—"
    if "error" in peer:
        return "fails", "—"
    return f"{peer['median_ms']:.2f} ms", f"{peer['median_ms'] / ours_ms:.2f}x"


def markdown(results):
    lines = ["## Training steps (AdamW, clip_grad_norm_ 1.0)", "",
             f"Median of {results['iters']} steps after 2 warm-up steps; "
             f"{results['cores']} cores. Ratio: PyTorch's time over ours.",
             "",
             "Accounted: the compiler's account of train_step on its "
             "largest rank (dtensor-compile --memory-report): its peak, "
             "then parameters + optimizer state, gradients + saved "
             "activations, and the peak of the step's own buffers as the "
             "program frees them / were each freed after its last use.",
             "",
             "| Case | Mesh | train_step | tokens/s | backward + update / "
             "forward | peak RSS / rank | accounted peak / rank "
             "| parameters + optimizer state | gradients + saved activations "
             "| step buffers' peak: as freed / at last use "
             "| PyTorch DTensor | ratio | PyTorch "
             "eager (1 process) | ratio | torch.compile (1 process) | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
             "---|"]
    errors = []
    for row in results["rows"]:
        ms = row["train_ms"]
        cells = []
        for key in ("torch_dtensor", "torch_eager", "torch_compiled"):
            peer = row.get(key)
            cells.extend(cell(ms, peer))
            if peer and "error" in peer:
                errors.append(f"{row['case']} {row['mesh']} {key}: "
                              f"{peer['error']}")
        lines.append(
            f"| {row['case']} | {row['mesh']} | {ms:.2f} ms | "
            f"{row['tokens_per_s']:.0f} | {row['backward_ratio']:.2f} | "
            f"{row['peak_bytes_per_rank'] / 2**20:.0f} MiB | "
            f"{row['accounted_peak_bytes_per_rank'] / 2**20:.2f} MiB | "
            f"{row['parameter_bytes_per_rank'] / 2**20:.2f} + "
            f"{row['optimizer_state_bytes_per_rank'] / 2**20:.2f} MiB | "
            f"{row['gradient_bytes_per_rank'] / 2**20:.2f} + "
            f"{row['saved_activation_bytes_per_rank'] / 2**20:.2f} MiB | "
            f"{row['transient_peak_bytes_per_rank'] / 2**20:.2f} / "
            f"{row['last_use_peak_bytes_per_rank'] / 2**20:.2f} MiB | " +
            " | ".join(cells) + " |")
    lines.append("")
    lines.extend(f"- {e}" for e in errors)
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="bench-results")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--iters", type=int)
    p.add_argument("--case-timeout", type=float, default=1800)
    p.add_argument("--torch-python", metavar="PYTHON")
    add_options(p, "train-")
    a = p.parse_args(argv)
    error = configure(a, "train-")
    if error:
        p.error(error)
    a.dtensor_python = a.torch_python
    a.bin_dir = os.path.join(a.build_dir, "bin")
    a.blas_env = lambda: dict(os.environ)
    os.makedirs(a.out, exist_ok=True)
    results = {"training": measure(a)}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    text = markdown(results["training"])
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The long-prefill benchmark of context parallelism (a table of
dtensor_bench, or alone): one decoder block of small width over a long
sequence, on 1 rank and sequence-sharded over more (plan.context_parallel,
docs/model-plan.md).

  python3 -m dtensor_bench.context_parallel [--out DIR] [--build-dir DIR] [--quick]
      [--seqs 8192,32768] [--ranks 1,2] [--iters N] [--no-causal]
      [--no-torch | --torch-python PYTHON] [--load-balance]

Per sequence length S and rank count R: the plan of `gen-model-plan.py
--model block --layers 1 --dim 64 --heads 4 --ffn 128 --batch 1 --seq S
--plan cp --mesh 1` (causal attention, unless --no-causal),
`dtensor-compile --mesh R --no-reference --comm-report=json`, then each
rank of `mpirun -n R` runs `dtensor-run --random-inputs 1 --warmup 1
--iters N` under this script's `--peak-rss` wrapper, which prints the
rank's peak resident memory (getrusage of its child). The table: the
median step time, the peak memory of the largest rank, the bytes each
rank sends per step (the comm report: k and v of the other ranks, once
per attention), and the ratio to 1 rank's time and memory.

With the all-gather rotation each rank attends its queries to the whole
sequence's keys and values; under a causal mask the rank holding the
last queries reads the most keys, so 2 ranks take about 3/4 of 1 rank's
attention time rather than 1/2. --load-balance adds
`context_parallel.load_balance` (gen-model-plan.py --load-balance): the
sequence sharded head-tail, every rank the same causal work (two calls
of the fused attention kernel per rank, one per piece of its queries).

Side by side, each case also runs PyTorch's own context parallelism
(dtensor_bench.peers.torch_cp time, in the PyTorch 2 environment of
scripts/torch-env.sh): the same block as an nn.Module (bench_dtensor.py's,
the same weight shapes) under torch.distributed.tensor.experimental.
context_parallel on R gloo processes, the same warm-up and iterations:
its median step time (the slowest rank's), peak resident memory per rank
and the ratios to its own 1-rank run. Where PyTorch raises, its cells say
`fails` and a line under the table gives the error; where its output is
not the block's (bench_torch_cp.py compares it with the block on one
process), its time says `wrong`, a line gives the error and there is no
ratio; a line also gives the collectives its step issued. --no-torch skips it; without
--torch-python it uses $DTENSOR_TORCH_PYTHON or the environment
scripts/torch-env.sh makes (never making it here), and is skipped, with
a line under the table, when there is none. Inside dtensor_bench it
uses bench.py's PyTorch 2 peers' interpreter (none with
--no-dtensor-peers) and --cp-no-torch skips it.

Alone it writes DIR/results.json ({"context_parallel": ...}) and
DIR/results.md.
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

from dtensor_bench.support import ROOT, module_command, run

SEQS = [8192, 32768]
QUICK_SEQS = [1024]
MODEL = ["--model", "block", "--layers", "1", "--dim", "64", "--heads", "4",
         "--ffn", "128", "--batch", "1"]

RAN = re.compile(r"ran (\d+) steps? on (\d+) ranks?: median ([0-9.]+) ms, "
                 r"min ([0-9.]+) ms")
PEAK = re.compile(r"peak-rss rank (\d+): (\d+) KiB")


def default_log(message):
    print(f"[bench-cp] {message}", file=sys.stderr, flush=True)


def peak_rss(argv):
    """Runs argv as one rank and prints its peak resident memory."""
    code = subprocess.call(argv)
    rank = os.environ.get("OMPI_COMM_WORLD_RANK",
                          os.environ.get("PMIX_RANK", "0"))
    kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"peak-rss rank {rank}: {kib} KiB", flush=True)
    return code


def add_options(p, prefix=""):
    """The options of the table (bench.py adds them with the prefix
    'cp-')."""
    p.add_argument(f"--{prefix}seqs", metavar="S,S,...",
                   help="sequence lengths (default 8192,32768; --quick 1024)")
    p.add_argument(f"--{prefix}no-causal", action="store_true",
                   help="non-causal attention (default: causal)")
    p.add_argument(f"--{prefix}no-torch", action="store_true",
                   help="skip PyTorch's context_parallel "
                   "(dtensor_bench.peers.torch_cp) beside each case")
    p.add_argument(f"--{prefix}load-balance", action="store_true",
                   help="plan.context_parallel.load_balance: the sequence "
                   "sharded head-tail")


def configure(a, prefix=""):
    """Fills in the derived settings; returns an error message or None."""
    dash, prefix = prefix.replace("_", "-"), prefix.replace("-", "_")
    seqs = getattr(a, prefix + "seqs")
    try:
        a.cp_seq_list = ([int(s) for s in seqs.split(",")] if seqs else
                         QUICK_SEQS if a.quick else SEQS)
    except ValueError:
        return f"--{dash}seqs {seqs}: expected numbers"
    a.cp_causal = not getattr(a, prefix + "no_causal")
    a.cp_no_torch = getattr(a, prefix + "no_torch") and f"--{dash}no-torch"
    a.cp_load_balance = getattr(a, prefix + "load_balance")
    if min(a.cp_seq_list) < 1:
        return f"--{dash}seqs: lengths must be positive"
    return None


def default_torch_python():
    """$DTENSOR_TORCH_PYTHON, else the interpreter of the environment
    scripts/torch-env.sh makes (as test/lit.cfg.py finds it), or None and
    why."""
    python = os.environ.get("DTENSOR_TORCH_PYTHON")
    if python:
        return python, None
    venv = os.environ.get("DTENSOR_TORCH_VENV") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
        "dtensor", "torch-venv")
    python = os.path.join(venv, "bin", "python")
    if os.access(python, os.X_OK):
        return python, None
    return None, (f"no PyTorch 2 environment at {venv} "
                  "(scripts/torch-env.sh makes it)")


def torch_peer(a):
    """The interpreter that runs bench_torch_cp.py, or None and why."""
    if a.cp_no_torch:
        return None, a.cp_no_torch
    python = getattr(a, "cp_torch_python", None)
    if not python:
        return None, getattr(a, "cp_torch_reason", None) or "no interpreter"
    return python, None


def measure_torch(a, python, plan, ranks, log):
    """PyTorch's context_parallel on the plan (bench_torch_cp.py time):
    its JSON result; a step PyTorch refuses gives {"error": ...}."""
    cmd = module_command(python, "dtensor_bench.peers.torch_cp") + [
           "time", plan, "--ranks", str(ranks), "--warmup", "1",
           "--iters", str(a.iters or 3), "--timeout", str(a.case_timeout)]
    try:
        result = run(cmd, timeout=a.case_timeout + 60, check=False)
    except subprocess.TimeoutExpired as e:
        return {"error": f"timed out: {e}"}
    lines = result.stdout.strip().splitlines()
    if result.returncode not in (0, 3) or not lines:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"bench_torch_cp.py failed ({result.returncode}): "
                         f"{tail}", "crashed": True}
    torch = json.loads(lines[-1])
    if "error" in torch:
        log(f"  PyTorch context_parallel: {torch['error']}")
    else:
        log(f"  PyTorch context_parallel: {torch['median_ms']:.1f} ms, peak "
            f"{max(torch['peak_bytes_per_rank']) / 2**20:.0f} MiB/rank, "
            f"first step {torch['first_step_ms'] / 1e3:.1f} s")
    return torch


def launch_command(ranks):
    cmd = ["mpirun", "-n", str(ranks), "--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def measure_case(a, work, seq, ranks, log):
    name = f"cp-{seq}" + ("-lb" if a.cp_load_balance else "")
    plan = plan_path(a, work, seq)
    artifact = os.path.join(work, f"{name}-r{ranks}.dtc")
    shutil.rmtree(artifact, ignore_errors=True)
    start = time.monotonic()
    comm = run([os.path.join(a.bin_dir, "dtensor-compile"), plan, "-o",
                artifact, "--mesh", str(ranks), "--no-reference",
                "--comm-report=json"], timeout=a.case_timeout).stdout
    compile_s = time.monotonic() - start
    report = json.loads(comm)
    sent = sum(c["bytes_per_rank"] or 0 for f in report["functions"]
               for m in f["modules"] for c in m["collectives"])
    kinds = sorted({c["kind"] for f in report["functions"]
                    for m in f["modules"] for c in m["collectives"]})
    cmd = launch_command(ranks) + [
        *module_command(sys.executable, "dtensor_bench.context_parallel"),
        "--peak-rss", "--",
        os.path.join(a.bin_dir, "dtensor-run"), artifact, "--random-inputs",
        "1", "--warmup", "1", "--iters", str(a.iters or 3)]
    result = run(cmd, timeout=a.case_timeout, env=a.blas_env())
    m = RAN.search(result.stdout)
    peaks = {int(r): int(k) * 1024 for r, k in PEAK.findall(result.stdout)}
    if not m or len(peaks) != ranks:
        raise RuntimeError("no timing or memory lines in the output:\n" +
                           result.stdout[-2000:] + result.stderr[-2000:])
    shutil.rmtree(artifact, ignore_errors=True)
    case = {"seq": seq, "ranks": ranks, "causal": a.cp_causal,
            "load_balance": a.cp_load_balance,
            "median_ms": float(m.group(3)), "min_ms": float(m.group(4)),
            "iters": int(m.group(1)),
            "peak_bytes_per_rank": [peaks[r] for r in sorted(peaks)],
            "bytes_sent_per_rank": sent, "collectives": kinds,
            "compile_s": round(compile_s, 2)}
    log(f"  S={seq} R={ranks}: {case['median_ms']:.1f} ms, peak "
        f"{max(case['peak_bytes_per_rank']) / 2**20:.0f} MiB/rank, sends "
        f"{sent / 2**20:.2f} MiB/rank ({', '.join(kinds) or 'nothing'})")
    return case


def plan_path(a, work, seq):
    """The case's plan (gen-model-plan.py), written once per length and
    mask."""
    plan = os.path.join(work, f"cp-{seq}{'' if a.cp_causal else '-nc'}"
                        f"{'-lb' if a.cp_load_balance else ''}.json")
    if not os.path.exists(plan):
        flags = [] if a.cp_causal else ["--no-causal"]
        if a.cp_load_balance:
            flags.append("--load-balance")
        run(module_command(sys.executable, "dtensor_testing.gen_model_plan")
            + MODEL + ["--seq", str(seq), "--plan", "cp", "--mesh", "1",
                       "-o", plan] + flags)
    return plan


def measure(a, log=default_log):
    work = os.path.join(a.out, "work-cp")
    os.makedirs(work, exist_ok=True)
    python, skipped = torch_peer(a)
    if skipped:
        log(f"PyTorch context_parallel: not run ({skipped})")
    cases = []
    for seq in a.cp_seq_list:
        for ranks in a.rank_list:
            log(f"context parallel: {seq} tokens on {ranks} rank(s)")
            try:
                case = measure_case(a, work, seq, ranks, log)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                log(f"  FAILED: {str(e)[:2000]}")
                case = {"seq": seq, "ranks": ranks, "error": str(e)}
            if python:
                case["torch"] = measure_torch(a, python, plan_path(a, work, seq),
                                              ranks, log)
            cases.append(case)
    for case in cases:
        one = next((c for c in cases if c["seq"] == case["seq"] and
                    c["ranks"] == 1), None)
        if one and "error" not in one and "error" not in case:
            case["time_vs_1_rank"] = case["median_ms"] / one["median_ms"]
            case["memory_vs_1_rank"] = (max(case["peak_bytes_per_rank"]) /
                                        max(one["peak_bytes_per_rank"]))
        mine, base = case.get("torch", {}), (one or {}).get("torch", {})
        if ("median_ms" in mine and "median_ms" in base and
                not mine.get("wrong") and not base.get("wrong")):
            mine["time_vs_1_rank"] = mine["median_ms"] / base["median_ms"]
            mine["memory_vs_1_rank"] = (max(mine["peak_bytes_per_rank"]) /
                                        max(base["peak_bytes_per_rank"]))
    return {"model": " ".join(MODEL), "causal": a.cp_causal,
            "load_balance": a.cp_load_balance, "cases": cases,
            "torch": {"run": python is not None, "python": python,
                      "skipped": skipped}}


def torch_cells(t):
    """The PyTorch columns of a case (t: its "torch" result or None)."""
    if t is None:
        return ["", "", "", ""]
    if "median_ms" not in t:
        return ["fails", "", "", ""]
    ratio = (lambda k: f"{t[k]:.2f}" if k in t else "")
    return [f"{t['median_ms']:.1f}" + (" wrong" if t.get("wrong") else ""),
            f"{max(t['peak_bytes_per_rank']) / 2**20:.0f}",
            ratio("time_vs_1_rank"), ratio("memory_vs_1_rank")]


def torch_notes(results):
    """The lines under the table about the PyTorch columns: why they are
    empty, the errors PyTorch raised, what its steps communicated."""
    info = results.get("torch") or {}
    if not info.get("run"):
        return [f"PyTorch context_parallel: not run ({info.get('skipped')})."]
    runs = [c["torch"] for c in results["cases"] if "torch" in c]
    version = next((t["torch"] for t in runs if "torch" in t), "?")
    lines = []
    errors = {}
    for c in results["cases"]:
        t = c.get("torch", {})
        if "error" in t:
            errors.setdefault(t["error"], []).append(
                f"{c['seq']}x{c['ranks']}")
    for error, where in errors.items():
        lines.append(f"PyTorch {version} context_parallel (gloo, CPU) fails "
                     f"(tokens x ranks: {', '.join(where)}): {error}")
    wrong = [(c, c["torch"]) for c in results["cases"]
             if c.get("torch", {}).get("wrong")]
    if wrong:
        lines.append(
            f"PyTorch {version} context_parallel (gloo, CPU) computes "
            "something else (`wrong`: its output, put back in order, is not "
            "the block's on one process; tokens x ranks, relative error: "
            + ", ".join(f"{c['seq']}x{c['ranks']} {t['relative_error']:.2g}"
                        for c, t in wrong) + "); no ratios for those.")
    done = [t for t in runs if "median_ms" in t]
    if done:
        comms = {}
        for t in done:
            comms.setdefault(t["ranks"], set()).add(", ".join(
                f"{k} x{v}" for k, v in t["collectives"].items()) or "none")
        comms = [f"{r} rank(s) {' or '.join(sorted(kinds))}"
                 for r, kinds in sorted(comms.items())]
        setup = max(max(t["setup_bytes_per_rank"]) for t in done)
        first = max(t["first_step_ms"] for t in done)
        lines.append(
            f"PyTorch {version} context_parallel (gloo, CPU, rotate "
            f"{done[0]['rotate']}): collectives per step: "
            f"{'; '.join(comms)}; its peak memory includes up to "
            f"{setup / 2**20:.0f} MiB/rank before the first step (torch "
            f"itself, weights, input); first (warm-up) step up to "
            f"{first / 1e3:.1f} s.")
    return lines


def markdown(results):
    lines = ["## Context parallelism: long prefill", "",
             f"One block ({results['model']}), "
             f"{'causal' if results['causal'] else 'non-causal'} attention, "
             "the sequence sharded over the ranks (plan.context_parallel"
             f"{', load_balance: head-tail' if results.get('load_balance') else ''}"
             ", k and v all-gathered per attention); PyTorch: the same block "
             "under torch's context_parallel.", "",
             "| tokens | ranks | step ms | peak MiB/rank | sent MiB/rank | "
             "time / 1 rank | memory / 1 rank | PyTorch ms | "
             "PyTorch MiB/rank | PyTorch time / 1 rank | "
             "PyTorch memory / 1 rank |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in results["cases"]:
        if "error" in c:
            ours = ["failed", "", "", "", ""]
        else:
            ratio = (lambda k: f"{c[k]:.2f}" if k in c else "")
            ours = [f"{c['median_ms']:.1f}",
                    f"{max(c['peak_bytes_per_rank']) / 2**20:.0f}",
                    f"{c['bytes_sent_per_rank'] / 2**20:.2f}",
                    ratio("time_vs_1_rank"), ratio("memory_vs_1_rank")]
        cells = [str(c["seq"]), str(c["ranks"])] + ours + torch_cells(
            c.get("torch"))
        lines.append("| " + " | ".join(cells) + " |")
    notes = torch_notes(results)
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--peak-rss"]:
        rest = argv[1:]
        return peak_rss(rest[1:] if rest[:1] == ["--"] else rest)
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="bench-results")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--iters", type=int)
    p.add_argument("--case-timeout", type=float, default=1800)
    p.add_argument("--torch-python", metavar="PYTHON",
                   help="the PyTorch 2 interpreter of the PyTorch columns "
                   "(default: $DTENSOR_TORCH_PYTHON, else "
                   "scripts/torch-env.sh's environment if it exists)")
    add_options(p)
    a = p.parse_args(argv)
    error = configure(a)
    if error:
        p.error(error)
    if a.torch_python and a.no_torch:
        p.error("--torch-python and --no-torch exclude each other")
    a.cp_torch_python, a.cp_torch_reason = (
        (a.torch_python, None) if a.torch_python else default_torch_python())
    a.rank_list = [int(r) for r in a.ranks.split(",")]
    a.bin_dir = os.path.join(a.build_dir, "bin")
    a.blas_env = lambda: dict(os.environ)
    os.makedirs(a.out, exist_ok=True)
    results = {"context_parallel": measure(a)}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    text = markdown(results["context_parallel"])
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if any("error" in c for c in
                    results["context_parallel"]["cases"]) else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmark's suites of cases and how each case is measured: our
compiled programs (dtensor-compile, dtensor-run) in rounds beside the
PyTorch peers, and the compile time of the 32-layer plan."""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

from dtensor_bench.ceilings import blas_env, measure_ceilings
from dtensor_bench.peers.servers import (TorchServer, best_round,
                                         run_gemms_alone, torch_request)
from dtensor_bench.report import TARGET_COMPILE_S
from dtensor_bench.support import fmt_ms, log, module_command, run
from dtensor_bench.workloads import (MODELS, SHAPES, count_work, gemm_list,
                                     generate_plan)


FULL_SUITE = {
    "mlp": ["decode1", "decode8", "prefill256", "prefill2048"],
    "block": ["decode1", "decode8", "prefill256", "prefill2048"],
    "llama_tiny": ["decode1", "decode8", "prefill256", "prefill2048"],
    "mlp_large": ["decode1", "decode8", "prefill256", "prefill1024"],
    "block_large": ["decode1", "decode8", "prefill256", "prefill1024"],
}
QUICK_SUITE = {"mlp": ["decode8"], "block": ["decode8"],
               "llama_tiny": ["decode8"]}


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
    run(module_command(sys.executable, "dtensor_testing.gen_model_plan") + [
        "--model", "mlp", "--dim", "64", "--ffn", "128", "--batch", "1",
        "--seq", "64", "--plan", "tp", "--mesh", "1", "-o", plan])
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
    run(module_command(sys.executable, "dtensor_testing.gen_model_plan") + [
        "--preset", preset, "--plan", "tp", "--mesh", "2", "-o", plan_path])
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
    from dtensor_testing import make_test_tensors as mtt
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



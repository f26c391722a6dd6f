# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""This machine's ceilings (dtensor-bench-ceilings): the GEMM peak of each
OpenBLAS kernel family and the memory bandwidth, the best of several
runs, per rank; and the family our programs run."""

import json
import os

from dtensor_bench.support import log, run


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

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The benchmarks of dtensor (scripts/bench.sh builds the tools, then runs
this): compiled programs side by side with PyTorch eager and with this
machine's ceilings.

  python3 -m dtensor_bench [--out DIR] [--build-dir DIR] [--quick] [--cases REGEX]
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
2. self-check: the PyTorch tensor-parallel code (dtensor_bench.peers.torch_tp)
   on 2 ranks gives the outputs of dtensor_testing.torch_model in one process,
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
   setting. The PyTorch 2 peers (dtensor_bench.peers.torch_dtensor serve, with the
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
4. decode (dtensor_bench.decode; --no-decode skips it, --decode-only
   runs the ceilings and it alone): the decode step with the KV cache
   (`dtensor-run --generate`) of the llama_tiny shapes and a GQA model of
   dim 2048 at contexts --decode-contexts, on --ranks, side by side with
   the stateless plan recomputing the whole sequence and with PyTorch eager
   generating with a KV cache (dtensor_testing.torch_generate --time), the
   KV-cache bytes per rank and the roofline of a step (its weight shards
   and the context's cache rows over the memory bandwidth per rank); a
   table of its own in results.md and `decode` in results.json;
5. context parallelism (dtensor_bench.context_parallel;
   --no-context-parallel skips it, --context-parallel-only runs the
   ceilings and it alone): a long prefill (--cp-seqs tokens, default 8192
   and 32768) through one block of width 64 with causal attention, the
   sequence sharded over --ranks (plan.context_parallel): step time, peak
   memory per rank, bytes sent per rank and the ratios to 1 rank, beside
   PyTorch's context_parallel on the same block (dtensor_bench.peers.torch_cp
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
import os
import platform
import time

from dtensor_bench import context_parallel as bench_cp
from dtensor_bench import decode as bench_decode
from dtensor_bench import training as bench_train
from dtensor_bench.ceilings import (best_ceilings, blas_env, ceilings_per_rank,
                                    measure_ceilings)
from dtensor_bench.peers.servers import dtensor_python, self_check
from dtensor_bench.report import (analyse, families_used, summarise,
                                  write_outputs)
from dtensor_bench.suites import compile_time, detect_runtime_family, run_cases
from dtensor_bench.support import ROOT, log


# --- main ------------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="python3 -m dtensor_bench", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
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
                   help="skip the decode table (dtensor_bench.decode)")
    p.add_argument("--decode-only", action="store_true",
                   help="the ceilings and the decode table only (no "
                   "self-check, cases or compile time)")
    bench_decode.add_options(p, "decode-")
    p.add_argument("--no-context-parallel", action="store_true",
                   help="skip the context-parallel table "
                   "(dtensor_bench.context_parallel)")
    p.add_argument("--context-parallel-only", action="store_true",
                   help="the ceilings and the context-parallel table only")
    bench_cp.add_options(p, "cp-")
    p.add_argument("--no-training", action="store_true",
                   help="skip the training table (dtensor_bench.training)")
    p.add_argument("--training-only", action="store_true",
                   help="the ceilings and the training table only")
    bench_train.add_options(p, "train-")
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
    if a.training_only:
        if a.no_training or a.decode_only or a.context_parallel_only:
            p.error("--training-only excludes --no-training, --decode-only "
                    "and --context-parallel-only")
        a.no_self_check = a.no_compile_time = a.no_decode = True
        a.no_context_parallel = True
    if a.decode_only or a.context_parallel_only:
        a.no_training = True
    error = bench_train.configure(a, "train_")
    if error and not a.no_training:
        p.error(error)
    a.blas_env = lambda: blas_env(a)
    for tool in ("dtensor-compile", "dtensor-run", "dtensor-bench-ceilings"):
        if not os.access(os.path.join(a.bin_dir, tool), os.X_OK):
            p.error(f"{a.bin_dir}/{tool} not found: build it first "
                    f"(scripts/bench.sh does)")
    return a




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
    if not a.decode_only and not a.context_parallel_only and \
            not a.training_only:
        run_cases(a, results, work, tuned, runtime_core)
    if not a.no_decode:
        results["decode"] = bench_decode.measure(a, log)
    if not a.no_context_parallel and not a.decode_only:
        results["context_parallel"] = bench_cp.measure(a, log)
    if not a.no_training:
        results["training"] = bench_train.measure(a, log)
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


# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The PyTorch peers as the benchmark drives them: the serving processes
of peers.torch_tp and peers.torch_dtensor, the interpreter of the
PyTorch 2 peers, and the self-check against torch_model."""

import json
import os
import select
import subprocess
import sys

from dtensor_bench.ceilings import blas_env
from dtensor_bench.support import SCRIPTS, log, module_command, run
from dtensor_bench.workloads import MODELS


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
        self.module = ("dtensor_bench.peers.torch_dtensor" if python
                       else "dtensor_bench.peers.torch_tp")
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
        cmd = module_command(self.python or sys.executable, self.module) + [
               "serve", "--ranks", str(self.ranks), "--threads", str(threads)]
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
            raise RuntimeError(f"{self.module} serve (ranks {self.ranks}) "
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
        probe = run(module_command(python, "dtensor_bench.peers.torch_dtensor")
                    + ["info"], timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{python} cannot run dtensor_bench.peers.torch_dtensor: {e}"
    if probe.returncode != 0:
        tail = ((probe.stderr or probe.stdout).strip().splitlines()
                or ["no output"])[-1]
        return None, f"{python} cannot run dtensor_bench.peers.torch_dtensor: {tail}"
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
        run(module_command(sys.executable, "dtensor_testing.gen_model_plan") +
            MODELS[model] + ["--batch", "2", "--seq", "8", "--plan", "tp",
                             "-o", path])
        tensors = os.path.join(work, f"check-{model}")
        run(module_command(sys.executable, "dtensor_testing.make_test_tensors") +
            [path, "-d", tensors])
        plans.append(path)
        dirs += ["--weights-dir", tensors]
    result = run(module_command(sys.executable, "dtensor_bench.peers.torch_tp")
                 + ["check"] + plans + ["--ranks", "2"] + dirs, check=False)
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
            result = run(module_command(a.dtensor_python,
                                        "dtensor_bench.peers.torch_dtensor")
                         + ["check"] + plans + ["--ranks", "2", "--mode", mode] + dirs,
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



#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dtensor_bench.ceilings with made-up dtensor-bench-ceilings measurements:
kernel families of any names and number (a CPU with families the tool
never listed before, runs that list different ones), and the roofline's
GEMM peak of the family our programs ran, not the best one. Prints one
line per finding for FileCheck.

  ceilings-families.py   (PYTHONPATH: <root>/python, as test/lit.cfg.py sets)
"""

import json

from dtensor_bench import ceilings as bench


def family(core, gflops, ok=True):
    return {"coretype": core, "corename": core if ok else None, "ok": ok,
            "honoured": ok, "gflops": gflops if ok else 0.0}


def run(best, families, all_threads, concurrent):
    stream = {"copy_gbps": 10.0, "triad_gbps": 11.0, "read_gbps": 12.0}
    return {"cpu": {"model": "made-up", "cores": 4, "l2_bytes": 1 << 20},
            "gemm": {"families": families, "best_coretype": best,
                     "peak_1thread_gflops": max(f["gflops"] for f in families),
                     "peak_all_threads_gflops": all_threads,
                     "concurrent_min_gflops": min(concurrent),
                     "concurrent_per_process_gflops": concurrent},
            "stream": {"threads_1": dict(stream), "threads_all": dict(stream)}}


def main():
    # The full measurement: seven families, one that could not run; the
    # best (NewCore) is not the one our programs ran (Haswell).
    full = run("NewCore", [family("NewCore", 250.0), family("Cooperlake", 240.0),
                           family("SkylakeX", 230.0), family("Haswell", 133.0),
                           family("Sandybridge", 60.0),
                           family("Broken", 0.0, ok=False),
                           family("auto", 133.0)],
               900.0, [240.0, 238.0, 236.0, 231.0])
    # A probe of Haswell alone, and one listing a family the first lacked.
    probe = run("Haswell", [family("Haswell", 135.0)], 500.0,
                [130.0, 128.0, 127.0, 125.0])
    other = run("Zen5", [family("Zen5", 260.0)], 950.0, [250.0] * 4)
    best = bench.best_ceilings([full, probe, other], "Haswell")
    g = best["gemm"]
    json.dumps(best)  # well-formed, whatever the names
    print("families", " ".join(f["coretype"] for f in g["families"]))
    print("best", g["best_coretype"], "roofline", g["roofline_coretype"],
          "runs", g["roofline_family_runs"])
    print("peaks", g["peak_1thread_gflops"], g["peak_all_threads_gflops"],
          g["concurrent_min_gflops"])
    per_rank = bench.ceilings_per_rank(best, 1)
    print("per rank, 1 rank:", per_rank["gemm_gflops"])
    # Without a family (or one no run measured): the best one.
    print("default roofline", bench.best_ceilings([full])["gemm"]
          ["roofline_coretype"])


if __name__ == "__main__":
    main()

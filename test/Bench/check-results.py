#!/usr/bin/env python3
"""Checks the outputs of dtensor_bench in a folder: results.json has the
keys and positive numbers it should, results.md one table row per case,
results.png is a PNG (when matplotlib is installed); the kernel family of
every side is reported and the roofline's GEMM peak is that of the family
our programs ran; the PyTorch 2 DTensor peer columns are measured (or a
compile failure noted) in every case when they ran, and
--require-dtensor-peers makes their absence an error. Prints one line per
finding for FileCheck and exits 1 on the first problem.

  check-results.py DIR [--require-dtensor-peers]
"""

import json
import os
import sys


def fail(message):
    print(f"bad results: {message}")
    sys.exit(1)


def positive(value, where):
    if not isinstance(value, (int, float)) or not value > 0:
        fail(f"{where} = {value!r}, expected a positive number")


def main():
    out = sys.argv[1]
    require_peers = "--require-dtensor-peers" in sys.argv[2:]
    with open(os.path.join(out, "results.json")) as f:
        results = json.load(f)
    for key in ("machine", "settings", "ceilings", "ceilings_per_rank",
                "cases", "summary"):
        if key not in results:
            fail(f"no '{key}' in results.json")

    gemm = results["ceilings"]["gemm"]
    positive(gemm["peak_1thread_gflops"], "gemm.peak_1thread_gflops")
    positive(gemm["peak_all_threads_gflops"], "gemm.peak_all_threads_gflops")
    positive(gemm["concurrent_min_gflops"], "gemm.concurrent_min_gflops")
    if not any(f["ok"] for f in gemm["families"]):
        fail("no OpenBLAS kernel family ran")
    for threads in ("threads_1", "threads_all"):
        for kernel, value in results["ceilings"]["stream"][threads].items():
            positive(value, f"stream.{threads}.{kernel}")
    for ranks, r in results["ceilings_per_rank"].items():
        positive(r["gemm_gflops"], f"ceilings_per_rank[{ranks}].gemm_gflops")
        positive(r["bandwidth_gbps"],
                 f"ceilings_per_rank[{ranks}].bandwidth_gbps")
    print(f"ceilings: ok ({len(gemm['families'])} kernel families)")

    cases = results["cases"]
    if not cases:
        fail("no cases")
    for c in cases:
        name = f"{c['model']} {c['shape']} ranks {c['ranks']}"
        if "error" in c:
            fail(f"{name}: {c['error']}")
        for key in ("flops_per_rank", "bytes_per_rank"):
            positive(c["work"][key], f"{name}: work.{key}")
        for side in ("ours", "torch"):
            positive(c[side]["median_ms"], f"{name}: {side}.median_ms")
            positive(c[side]["iters"], f"{name}: {side}.iters")
        positive(c["gemms_alone"]["median_ms"], f"{name}: gemms_alone.median_ms")
        for key in ("gflops_per_rank", "gbps_per_rank", "roofline_ms",
                    "fraction_of_roofline", "speedup_torch", "gemm_share"):
            positive(c[key], f"{name}: {key}")
        if c["bound"] not in ("gemm", "memory"):
            fail(f"{name}: bound {c['bound']!r}")
        expected = c["ranks"] > 1
        if (c["collectives"]["bytes_per_rank"] > 0) != expected:
            fail(f"{name}: collective bytes {c['collectives']} on "
                 f"{c['ranks']} rank(s)")
        if not any(t["target"] == "speedup_vs_torch" for t in c["targets"]):
            fail(f"{name}: no speedup target")
    print(f"cases: {len(cases)} measured, ranks "
          f"{sorted({c['ranks'] for c in cases})}")

    # Kernel families: any names, any number of them (no fixed list).
    core = results.get("runtime_openblas_corename")
    family = results.get("runtime_coretype")
    if not isinstance(core, str) or not core:
        fail(f"runtime_openblas_corename = {core!r}")
    if gemm.get("roofline_coretype") != family:
        fail(f"the roofline's GEMM peak is of {gemm.get('roofline_coretype')!r}"
             f", our programs ran {family!r}")
    if gemm.get("roofline_family_runs", 0) < 1:
        fail(f"no all-core GEMM measurement of {family!r}")
    for c in cases:
        if not c["ours"].get("openblas_corename") in (None, core):
            fail(f"{c['model']} {c['shape']}: ours ran "
                 f"{c['ours']['openblas_corename']}, the probe {core}")
    fams = results.get("kernel_families", {})
    if not fams or not all(isinstance(v, str) and v for v in fams.values()):
        fail(f"kernel_families = {fams!r}")
    torch_core = cases[0]["torch"]["blas"].get("openblas_corename")
    print(f"kernel families: ours {core}, roofline {family}: same family; "
          f"torch {torch_core}; {len(fams)} sides listed")

    peers = results.get("dtensor_peers")
    if peers is None:
        fail("no 'dtensor_peers' in results.json")
    if not peers["available"]:
        if require_peers:
            fail(f"the DTensor peers did not run: {peers.get('reason')}")
        print(f"dtensor peers: unavailable ({peers.get('reason')})")
    else:
        counts = {}
        for c in cases:
            name = f"{c['model']} {c['shape']} ranks {c['ranks']}"
            for mode in peers["modes"]:
                key = "dtensor_" + mode
                cell = c.get(key)
                if cell is None:
                    fail(f"{name}: no {key}")
                if "compile_error" in cell:
                    if mode != "compiled" or not cell["compile_error"]:
                        fail(f"{name}: {key} {cell}")
                    counts["compile failed"] = counts.get("compile failed",
                                                          0) + 1
                    continue
                if "error" in cell:
                    fail(f"{name}: {key} failed: {cell['error']}")
                positive(cell["median_ms"], f"{name}: {key}.median_ms")
                positive(c["speedup_" + key], f"{name}: speedup_{key}")
                if not cell["blas"].get("family"):
                    fail(f"{name}: {key}: no BLAS family")
                counts[mode] = counts.get(mode, 0) + 1
            for f in c.get("faster_peers", []):
                if not f["reasons"] or not f["ratio"] < 1:
                    fail(f"{name}: faster peer without a reason: {f}")
        checks = results.get("self_check", {}).get("dtensor", {})
        for mode in peers["modes"]:
            if mode in checks and not checks[mode]["ok"]:
                fail(f"the DTensor {mode} self-check failed")
        print("dtensor peers: ok (" + ", ".join(
            f"{k} {v}" for k, v in sorted(counts.items())) + f"; "
            f"{peers['blas']['family']}; self-check "
            + ", ".join(f"{m} {len(checks[m]['lines'])} outputs"
                        for m in peers["modes"] if m in checks) + ")")

    check = results.get("self_check")
    if check is not None:
        if not check["ok"]:
            fail("the self-check failed: " + "; ".join(check["lines"]))
        print(f"self-check: ok ({len(check['lines'])} outputs)")

    ct = results.get("compile_time")
    if ct is not None:
        if not ct["ok"]:
            fail(f"compile time case: {ct}")
        positive(ct["wall_s"], "compile_time.wall_s")
        positive(ct["peak_rss_kib"], "compile_time.peak_rss_kib")
        print(f"compile time: ok ({ct['layers']} layers)")

    with open(os.path.join(out, "results.md")) as f:
        md = f.read()
    rows = [line for line in md.splitlines()
            if line.startswith("| ") and line.count("|") == 21 and
            line.split("|")[3].strip().isdigit()]
    if len(rows) != len(cases):
        fail(f"results.md has {len(rows)} case rows, expected {len(cases)}")
    for heading in ("## Ceilings", "## Cases", "## Where a peer is faster",
                    "## Targets", "Kernel families", "Conditions: "):
        if heading not in md:
            fail(f"results.md has no '{heading}'")
    print(f"table: {len(rows)} rows")

    png = os.path.join(out, "results.png")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot: skipped (no matplotlib)")
    else:
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail("results.png is not a PNG")
        print("plot: ok")


if __name__ == "__main__":
    main()

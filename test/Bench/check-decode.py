#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the decode table of dtensor_bench.decode (alone, or in
dtensor_bench's results) in a folder: results.json's `decode` has a row
per (model, ranks, context) with positive times where a side ran, the
KV-cache bytes per rank (1/R of the whole where the cache is sharded), a
roofline and the targets; results.md has the table with one line per row.
Checks well-formedness only, never a speed. Prints one line per finding for
FileCheck and exits 1 on the first problem.

  check-decode.py DIR [--require-torch]
"""

import json
import os
import sys


def fail(message):
    print(f"bad decode results: {message}")
    sys.exit(1)


def positive(value, where):
    if not isinstance(value, (int, float)) or not value > 0:
        fail(f"{where} = {value!r}, expected a positive number")


def main():
    out = sys.argv[1]
    require_torch = "--require-torch" in sys.argv[2:]
    with open(os.path.join(out, "results.json")) as f:
        results = json.load(f)
    decode = results.get("decode")
    if decode is None:
        fail("no 'decode' in results.json")
    st = decode["settings"]
    rows = decode["rows"]
    expected = len(st["models"]) * len(st["ranks"]) * len(st["contexts"])
    if len(rows) != expected:
        fail(f"{len(rows)} rows, expected {expected}")
    torch_ran = "version" in st["torch"]
    if require_torch and not torch_ran:
        fail(f"torch-cache did not run: {st['torch']}")
    fractions = {}
    for r in rows:
        name = f"{r['model']} R={r['ranks']} C={r['context']}"
        for key in ("ours_error", "recompute_error", "torch_error"):
            if r.get(key):
                fail(f"{name}: {key}: {r[key][-300:]}")
        positive(r["ours"]["median_ms"], f"{name}: ours.median_ms")
        positive(r["ours"]["prefill_ms"], f"{name}: ours.prefill_ms")
        positive(r["recompute"]["median_ms"], f"{name}: recompute.median_ms")
        positive(r["recompute_over_ours"], f"{name}: recompute_over_ours")
        if torch_ran:
            positive(r["torch"]["median_ms"], f"{name}: torch.median_ms")
            positive(r["torch_over_ours"], f"{name}: torch_over_ours")
        elif r.get("torch"):
            fail(f"{name}: a torch time without torch")
        kv = r["kv"]
        positive(kv["bytes_per_rank"], f"{name}: kv.bytes_per_rank")
        if kv["bytes_per_rank"] * r["ranks"] != kv["bytes"] and \
                kv["placements"] != ["R"]:
            fail(f"{name}: KV bytes per rank {kv['bytes_per_rank']} of "
                 f"{kv['bytes']} on {r['ranks']} ranks ({kv['placements']})")
        fractions[r["ranks"]] = kv["fraction_per_rank"]
        for key in ("ms", "bytes_per_rank", "ms_at_max_seq"):
            positive(r["roofline"][key], f"{name}: roofline.{key}")
        positive(r["fraction_of_roofline"], f"{name}: fraction_of_roofline")
    print(f"decode: {len(rows)} rows ({', '.join(st['models'])}; ranks "
          f"{', '.join(map(str, st['ranks']))}; contexts "
          f"{', '.join(map(str, st['contexts']))})")
    print("kv per rank: " + ", ".join(f"{r} rank{'s' if r > 1 else ''} "
                                       f"{fractions[r]:.2f}"
                                       for r in sorted(fractions)))
    print(f"torch-cache: {'measured' if torch_ran else 'unavailable'}")

    targets = decode["targets"]
    kinds = sorted({t["target"] for t in targets})
    for t in targets:
        if not isinstance(t["met"], bool) or "text" not in t:
            fail(f"target {t}")
    print(f"targets: {len(targets)} ({', '.join(kinds)})")
    probes = decode.get("max_seq_probe", [])
    for p in probes:
        if "error" in p:
            fail(f"max-seq probe {p['model']}: {p['error'][-300:]}")
        positive(p["ours"]["median_ms"], f"max-seq probe {p['model']}")
    print(f"max-seq probe: {len(probes)}")

    with open(os.path.join(out, "results.md")) as f:
        md = f.read()
    if "## Decode with the KV cache" not in md:
        fail("results.md has no '## Decode with the KV cache'")
    lines = [line for line in md.splitlines()
             if line.startswith("| ") and line.count("|") == 16 and
             line.split("|")[1].strip() in st["models"]]
    if len(lines) != len(rows):
        fail(f"results.md has {len(lines)} decode rows, expected {len(rows)}")
    print(f"table: {len(lines)} rows")


if __name__ == "__main__":
    main()

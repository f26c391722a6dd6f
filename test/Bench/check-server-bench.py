#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the output of dtensor_bench.server: results.json and results.md
are written and well formed (a row per model, server, rank count and client
count; every request answered; the same ids from both servers). Prints a
summary for FileCheck; exits 1 with "bad results: ..." otherwise. No timing
is compared with anything (timings depend on the machine's load)."""

import json
import os
import sys


def bad(message):
    print(f"bad results: {message}")
    sys.exit(1)


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "results.json")) as f:
        result = json.load(f)
    settings = result["settings"]
    rows = result["rows"]
    # --sampling adds both servers with sampling requests.
    servers = ("kv", "recompute") + (
        ("kv+sampling", "recompute+sampling") if settings.get("sampling")
        else ())
    expected = {(model, server, ranks, clients)
                for model in settings["models"]
                for server in servers
                for ranks in settings["ranks"]
                for clients in settings["concurrency"]}
    got = {(r["model"], r["server"], r["ranks"], r["clients"]) for r in rows}
    if got != expected or len(rows) != len(expected):
        bad(f"rows {sorted(got)}, expected {sorted(expected)}")
    for r in rows:
        name = f"{r['model']} {r['server']} ranks {r['ranks']} clients " \
               f"{r['clients']}"
        if r["errors"]:
            bad(f"{name}: {r['errors']} errors: {r['error_messages'][:3]}")
        if r["generated_tokens"] != r["requests"] * r["max_tokens"]:
            bad(f"{name}: {r['generated_tokens']} tokens generated")
        for key in ("tokens_per_s", "wall_s"):
            if not r[key] or r[key] <= 0:
                bad(f"{name}: {key} = {r[key]}")
        if r["ttft_ms"]["p50"] is None or r["itl_ms"]["p99"] is None:
            bad(f"{name}: no time to first token or inter-token latency")
    print(f"rows: {len(rows)}, every request answered with "
          f"{settings['max_tokens']} tokens")
    agreement = result["agreement"]
    print(f"same ids on both servers: {agreement['compared'] - agreement['differ_count']} "
          f"of {agreement['compared']} prompts")
    with open(os.path.join(out, "results.md")) as f:
        table = [line for line in f if line.startswith("| ")]
    if not table or "TTFT p50 ms" not in table[0]:
        bad("results.md has no table")
    print(f"table: {len(table) - 1} rows")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks a dtensor-run --trace file against the compile-time communication
report (dtensor-compile --comm-report=json) of the same artifact.

  check-trace.py TRACE.json COMM.json --ranks R --steps N

The trace must be a Chrome trace (JSON object format: `traceEvents`, every
complete event "X" with a name, numeric ts >= 0 and dur >= 0, pid and tid,
a process_name for each rank), with N steps per rank, and each step of
each rank must run exactly the collectives the report counts, kind by kind.
Prints one summary line per rank; exits 1 on the first difference.
"""

import argparse
import collections
import json
import sys


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("comm")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()

    with open(args.comm) as f:
        report = json.load(f)
    expected = collections.Counter()
    for function in report["functions"]:
        for module in function["modules"]:
            for c in module["collectives"]:
                expected[c["kind"]] += c["calls"]

    with open(args.trace) as f:
        trace = json.load(f)
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents list")
    names = {e["pid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    if sorted(names) != list(range(args.ranks)):
        fail(f"process names for pids {sorted(names)}")
    per_step = collections.defaultdict(collections.Counter)
    steps = collections.defaultdict(set)
    for e in events:
        if e.get("ph") != "X":
            continue
        for key in ("name", "ts", "dur", "pid", "tid", "cat"):
            if key not in e:
                fail(f"event without {key}: {e}")
        if not (isinstance(e["ts"], (int, float)) and e["ts"] >= 0 and
                isinstance(e["dur"], (int, float)) and e["dur"] >= 0):
            fail(f"bad times: {e}")
        step = e["args"]["step"]
        if e["cat"] == "step":
            steps[e["pid"]].add(step)
        elif e["cat"] == "collective":
            per_step[(e["pid"], step)][e["name"]] += 1
    for rank in range(args.ranks):
        if steps[rank] != set(range(args.steps)):
            fail(f"rank {rank}: steps {sorted(steps[rank])}")
        for step in range(args.steps):
            got = per_step[(rank, step)]
            if got != expected:
                fail(f"rank {rank} step {step}: ran {dict(got)}, the report "
                     f"counts {dict(expected)}")
        print(f"rank {rank}: {args.steps} steps, each "
              + (" ".join(f"{k}={expected[k]}" for k in sorted(expected))
                 or "no collective"))


if __name__ == "__main__":
    main()

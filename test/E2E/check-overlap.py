#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks that a dtensor-run --trace file shows asynchronous collectives
running under compute.

  check-overlap.py TRACE.json --kind all_reduce

For every rank, some collective of KIND that ran on the communication
thread ("async" true, thread 2) must overlap in time a compute interval
(the program thread's time outside its synchronous collectives and waits)
of the same rank and step. Prints one line per rank with the number of
such collectives and the share of their time under compute; exits 1 when a
rank has none.
"""

import argparse
import collections
import json
import sys


def overlap(a_start, a_end, b_start, b_end):
    return max(0.0, min(a_end, b_end) - max(a_start, b_start))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--kind", default="all_reduce")
    args = parser.parse_args()
    with open(args.trace) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    compute = collections.defaultdict(list)
    collectives = collections.defaultdict(list)
    for e in events:
        key = (e["pid"], e["args"]["step"])
        if e["cat"] == "compute":
            compute[key].append((e["ts"], e["ts"] + e["dur"]))
        elif (e["cat"] == "collective" and e["name"] == args.kind and
              e["args"].get("async")):
            if e["tid"] != 2:
                print(f"FAIL: an async {args.kind} not on thread 2: {e}")
                sys.exit(1)
            collectives[key].append((e["ts"], e["ts"] + e["dur"]))
    ranks = sorted({pid for pid, _ in list(compute) + list(collectives)})
    failed = False
    for rank in ranks:
        hidden = total = 0.0
        under = 0
        for (pid, step), spans in collectives.items():
            if pid != rank:
                continue
            for start, end in spans:
                shared = sum(overlap(start, end, a, b)
                             for a, b in compute[(pid, step)])
                under += shared > 0
                hidden += shared
                total += end - start
        share = hidden / total if total else 0.0
        print(f"rank {rank}: {under} async {args.kind} under compute, "
              f"{share:.0%} of their time hidden")
        failed |= under == 0
    if failed or not ranks:
        print(f"FAIL: a rank has no async {args.kind} overlapping compute")
        sys.exit(1)


if __name__ == "__main__":
    main()

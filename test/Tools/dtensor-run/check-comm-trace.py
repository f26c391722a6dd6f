#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks dtensor-run --comm-trace=json against the compile-time
communication report (dtensor-compile --comm-report=json) of the artifact.

  check-comm-trace.py TRACE.json COMM.json --ranks R --steps N

For every module and every collective kind and reduction in it, the report's
calls and bytes per rank (summed over its mesh groups) must equal the
trace's compile-time figures and what every rank ran per step; every module
of the report must be in the trace's module tree at its dotted place, and
every module's total must be its own collectives plus its children's.
Prints one line per module and kind; exits 1 on the first difference.
"""

import argparse
import collections
import json
import sys


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def report_rows(comm):
    """{(module, kind, reduction): [calls, bytes or None]} of the report."""
    rows = collections.OrderedDict()
    (function,) = comm["functions"]
    for module in function["modules"]:
        name = module["module"] or ""
        for c in module["collectives"]:
            row = rows.setdefault((name, c["kind"], c["reduction"] or ""),
                                  [0, 0])
            row[0] += c["calls"]
            row[1] = (None if row[1] is None or c["bytes_per_rank"] is None
                      else row[1] + c["bytes_per_rank"])
    return rows


def walk(node, parent, rows, ranks):
    """Collects the node's rows, checks its place and its totals; returns
    its per-rank totals [calls, bytes] per rank."""
    fqn = node["fqn"]
    if parent is not None:
        expected_parent = fqn.rsplit(".", 1)[0] if "." in fqn else ""
        if parent != expected_parent:
            fail(f"module '{fqn}' is a child of '{parent}'")
    totals = [[0.0, 0.0] for _ in range(ranks)]
    for c in node["collectives"]:
        key = (fqn, c["kind"], c["reduction"] or "")
        if key in rows:
            fail(f"{key} listed twice")
        rows[key] = c
        if len(c["per_rank"]) != ranks:
            fail(f"{key}: {len(c['per_rank'])} ranks")
        for r, figures in enumerate(c["per_rank"]):
            totals[r][0] += figures["calls"]
            totals[r][1] += figures["bytes_sent"]
    for child in node["children"]:
        for r, (calls, sent) in enumerate(walk(child, fqn, rows, ranks)):
            totals[r][0] += calls
            totals[r][1] += sent
    for r, figures in enumerate(node["total"]["per_rank"]):
        if [figures["calls"], figures["bytes_sent"]] != totals[r]:
            fail(f"module '{fqn}' rank {r}: total {figures} is not the sum "
                 f"{totals[r]} of its collectives and children")
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("comm")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args()
    with open(args.trace) as f:
        trace = json.load(f)
    with open(args.comm) as f:
        comm = json.load(f)
    if trace["ranks"] != args.ranks or trace["steps"] != args.steps:
        fail(f"trace of {trace['steps']} steps on {trace['ranks']} ranks")
    if not trace["has_sites"]:
        fail("the artifact has no collective sites")
    if trace["module"]["fqn"] != "":
        fail("the root module is not ''")
    traced = {}
    walk(trace["module"], None, traced, args.ranks)
    expected = report_rows(comm)
    if set(traced) != set(expected):
        fail(f"modules and kinds differ: trace {sorted(traced)}, "
             f"report {sorted(expected)}")
    for key, (calls, sent) in expected.items():
        c = traced[key]
        if c["compiled_calls"] != calls or c["compiled_bytes_sent"] != sent:
            fail(f"{key}: the trace's report figures {c['compiled_calls']}, "
                 f"{c['compiled_bytes_sent']} are not the report's {calls}, "
                 f"{sent}")
        for figures in c["per_rank"]:
            if figures["calls"] != calls or (
                    sent is not None and figures["bytes_sent"] != sent):
                fail(f"{key}: rank {figures['rank']} ran {figures['calls']} "
                     f"calls of {figures['bytes_sent']} bytes per step; the "
                     f"report says {calls} of {sent}")
        if not c["matches_report"]:
            fail(f"{key}: not flagged as matching")
        module, kind, reduction = key
        print(f"{module or '<unnamed>'} {kind}{'(' + reduction + ')' if reduction else ''}: "
              f"calls={calls} bytes={sent} on every rank")
    if not trace["matches_report"]:
        fail("the trace is not flagged as matching")


if __name__ == "__main__":
    main()

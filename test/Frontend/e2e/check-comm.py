#!/usr/bin/env python3
"""Asserts collective counts and sizes in a communication report
(`dtensor-compile --comm-report=json`, docs/comm-report.md).

  check-comm.py REPORT.json [--calls KIND[@MODULE]=N] ...
      [--max-bytes KIND[@MODULE]=B] ... [--mesh-dims D[,D...]]

KIND is a collective kind (all_reduce, all_gather, reduce_scatter,
all_to_all, broadcast, shift) or `*` for any; MODULE a module pattern (fnmatch,
`<unnamed>` for collectives without a module), default every module.
Calls are summed over the functions of the report.
  --calls       the number of calls is exactly N
  --max-bytes   no row (one module, kind and group) sends more than B bytes
                per rank; a row of unknown size fails
  --mesh-dims   every collective runs over exactly these mesh dims
Prints the rows, then one line per assertion; exits 1 when one fails."""

import argparse
import fnmatch
import json
import sys


def rows(report):
    for function in report["functions"]:
        for module in function["modules"]:
            name = module["module"] if module["module"] is not None else "<unnamed>"
            for c in module["collectives"]:
                yield function["name"], name, c


def parse_key(text, flag):
    key, sep, value = text.rpartition("=")
    if not sep:
        sys.exit(f"check-comm: {flag} {text}: expected KIND[@MODULE]=N")
    kind, _, module = key.partition("@")
    return kind, module or "*", int(value)


def matches(kind, module, name, c):
    return (kind == "*" or c["kind"] == kind) and fnmatch.fnmatchcase(name, module)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report")
    p.add_argument("--calls", action="append", default=[])
    p.add_argument("--max-bytes", action="append", default=[])
    p.add_argument("--mesh-dims")
    a = p.parse_args(argv)
    with open(a.report) as f:
        report = json.load(f)
    table = list(rows(report))
    for function, name, c in table:
        print(f"  {function}: {name} {c['kind']} {c['reduction'] or '-'} "
              f"mesh_dims {c['mesh_dims']} ranks {c['group_size']} "
              f"calls {c['calls']} bytes {c['bytes_per_rank']}")
    ok = True

    def result(good, message):
        nonlocal ok
        ok &= good
        print(("ok: " if good else "FAILED: ") + message)

    for spec in a.calls:
        kind, module, want = parse_key(spec, "--calls")
        got = sum(c["calls"] for _, name, c in table
                  if matches(kind, module, name, c))
        result(got == want, f"calls of {kind} in {module}: {got} (expected {want})")
    for spec in a.max_bytes:
        kind, module, limit = parse_key(spec, "--max-bytes")
        worst = None
        for _, name, c in table:
            if not matches(kind, module, name, c):
                continue
            size = c["bytes_per_rank"]
            if size is None or size > limit:
                worst = f"{name} {c['kind']} sends {size}"
                break
        result(worst is None, f"bytes of {kind} in {module} <= {limit}" +
               (f": {worst}" if worst else ""))
    if a.mesh_dims is not None:
        want = [int(d) for d in a.mesh_dims.split(",")]
        bad = [f"{name} {c['kind']} {c['mesh_dims']}" for _, name, c in table
               if c["mesh_dims"] != want]
        result(not bad, f"every collective over mesh dims {want}" +
               (": not " + "; ".join(bad) if bad else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes a variant of a model plan: variant.py BASE OUT STATEMENT...

Each STATEMENT is Python run with `m` bound to the plan (a dict), e.g.
'm["model"]["custom_ops"][0]["strategies"][0][1].append("R")'. OUT is
written with two-space indentation."""

import json
import sys


def main():
    base, out, *statements = sys.argv[1:]
    with open(base) as f:
        m = json.load(f)
    for statement in statements:
        exec(statement, {}, {"m": m})
    with open(out, "w") as f:
        json.dump(m, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes broken copies of a model plan with entries (entries.test's
cached.json) to DIR/<name>.json, one mistake each."""

import copy
import json
import sys


def per_entry(model):
    # Fine for T = 2 rows of 8 only where B * T * 8 = B * 2 * 8.
    model["ops"].insert(2, {"op": "view", "inputs": ["x"], "output": "pairs",
                            "shape": ["B", 2, 8]})


VARIANTS = {
    "dims-no-entries": lambda m: m.pop("entries"),
    "dim-twice": lambda m: m.update(dims=["B", "T", "B"]),
    "dim-name": lambda m: m.update(dims=["B", "T", "2x"]),
    "unknown-dim": lambda m: m["inputs"][0].update(shape=["B", "S", 8]),
    "entry-missing-dim": lambda m: m["entries"][0].update(dims={"B": 3}),
    "entry-unknown-dim": lambda m: m["entries"][0]["dims"].update(S=2),
    "entry-negative": lambda m: m["entries"][0]["dims"].update(T=-1),
    "entry-twice": lambda m: m["entries"][1].update(name="decode"),
    "entry-no-dims": lambda m: m["entries"][1].pop("dims"),
    "entry-member": lambda m: m["entries"][1].update(batch=1),
    "entry-name": lambda m: m["entries"][1].update(name="pre-fill"),
    "entries-empty": lambda m: m.update(entries=[]),
    "update-not-state": lambda m: m.update(updates={"rows": "cache_new"}),
    "update-unknown": lambda m: m.update(updates={"cache": "cache_old"}),
    "update-input": lambda m: m.update(updates={"cache": "slots"}),
    "update-type": lambda m: m.update(updates={"cache": "rows"}),
    "per-entry": per_entry,
}


def main(base, directory):
    with open(base) as f:
        plan = json.load(f)
    for name, change in VARIANTS.items():
        variant = copy.deepcopy(plan)
        change(variant["model"])
        with open(f"{directory}/{name}.json", "w") as f:
            json.dump(variant, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])

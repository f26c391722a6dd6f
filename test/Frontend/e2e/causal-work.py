#!/usr/bin/env python3
"""Per-rank causal attention work of a sequence-sharded layout, read from
the ranks' local pieces of an output that holds minus each token's global
position (cp-positions.json run with `dtensor-run --output-local`).

  causal-work.py FILE.{rank}.npy RANKS [--max-ratio R]

A causal query at position p attends p + 1 keys; a rank's work is the sum
over the queries it holds. Prints each rank's positions and work, then the
ratio of the largest to the smallest work; exits 1 when the ranks do not
hold every position once, or the ratio exceeds R."""

import argparse
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("pattern")
    p.add_argument("ranks", type=int)
    p.add_argument("--max-ratio", type=float)
    a = p.parse_args()
    seen = []
    works = []
    for rank in range(a.ranks):
        local = np.load(a.pattern.replace("{rank}", str(rank)))
        positions = [int(round(-x)) for x in local.reshape(-1)]
        work = sum(position + 1 for position in positions)
        print(f"rank {rank}: positions {positions} causal work {work}")
        seen += positions
        works.append(work)
    if sorted(seen) != list(range(len(seen))):
        print("the ranks do not hold every position once")
        return 1
    ratio = max(works) / min(works)
    print(f"largest / smallest work: {ratio:.3f}")
    if a.max_ratio is not None and ratio > a.max_ratio:
        print(f"ratio above {a.max_ratio}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

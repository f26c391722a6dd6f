#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes the inputs of cache-write.test and the NumPy reference of its
cache_write: cache.npy [4, 8, 3, 4] f32, new.npy [7, 2, 3, 4] f32,
slots.npy [7] i64, positions.npy [7] i32 and ref.npy, into DIR.

  cache-write.py DIR

The rows cover every case: two rows inside the cache, one overlapping an
earlier one (the later wins), and a slot of -1, a slot of 5 (of 4), a
position of -1 and a position of 7 (+2 > 8), which are skipped. Prints how
many rows were written and how many elements changed."""

import os
import sys

import numpy as np


def cache_write(cache, values, slots, positions):
    out = cache.copy()
    num_slots, length = cache.shape[:2]
    rows = values.shape[1]
    written = 0
    for b in range(values.shape[0]):
        s, p = int(slots[b]), int(positions[b])
        if 0 <= s < num_slots and 0 <= p and p + rows <= length:
            out[s, p:p + rows] = values[b]
            written += 1
    return out, written


def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(5)
    cache = rng.standard_normal((4, 8, 3, 4)).astype(np.float32)
    new = rng.standard_normal((7, 2, 3, 4)).astype(np.float32)
    slots = np.array([2, 0, 5, 1, 0, -1, 3], dtype=np.int64)
    positions = np.array([6, 3, 0, 7, 4, 1, -1], dtype=np.int32)
    ref, written = cache_write(cache, new, slots, positions)
    for name, value in [("cache", cache), ("new", new), ("slots", slots),
                        ("positions", positions), ("ref", ref)]:
        np.save(os.path.join(out_dir, name + ".npy"), value)
    print(f"rows written: {written}, "
          f"elements changed: {int(np.count_nonzero(ref != cache))}")


if __name__ == "__main__":
    main()

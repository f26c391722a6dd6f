# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Token data for data.test: a learnable sequence t[j+1] = (5 t[j] + 3) mod
256 written as an .npy of uint16 (the first `split` tokens) and an llm.c
.bin shard (the rest: 256 int32 of header, magic 20240520, version 1, the
count, then uint16 tokens), and the batches dtensor-run --data must feed in
the files' order: window w is tokens [w * seq, (w + 1) * seq], row r of
batch b the window (b * rows + r) mod windows, the targets shifted by one.

  make-token-data.py DIR --tokens N --split K --rows R --seq S --steps T
"""

import argparse
import os

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--split", type=int, required=True)
    p.add_argument("--rows", type=int, required=True)
    p.add_argument("--seq", type=int, required=True)
    p.add_argument("--steps", type=int, required=True)
    a = p.parse_args()
    t = [1]
    while len(t) < a.tokens:
        t.append((5 * t[-1] + 3) % 256)
    t = np.array(t, np.uint16)
    np.save(os.path.join(a.dir, "part1.npy"), t[:a.split])
    rest = t[a.split:]
    header = np.zeros(256, np.int32)
    header[:3] = [20240520, 1, len(rest)]
    with open(os.path.join(a.dir, "part2.bin"), "wb") as f:
        f.write(header.tobytes() + rest.tobytes())
    windows = (len(t) - 1) // a.seq
    tokens = np.zeros((a.steps, a.rows, a.seq), np.int64)
    targets = np.zeros_like(tokens)
    for b in range(a.steps):
        for r in range(a.rows):
            w = (b * a.rows + r) % windows
            tokens[b, r] = t[w * a.seq:(w + 1) * a.seq]
            targets[b, r] = t[w * a.seq + 1:(w + 1) * a.seq + 1]
    np.save(os.path.join(a.dir, "tokens.npy"), tokens)
    np.save(os.path.join(a.dir, "targets.npy"), targets)
    print(f"{len(t)} tokens, {windows} windows")


if __name__ == "__main__":
    main()

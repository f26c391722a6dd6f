#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes the inputs of kv-decode.json to DIR/<name>.npy and prints the
--input flags of dtensor-run and torch_model.py.

  kv-inputs.py kv-decode.json DIR

Floats are N(0, 1) from a fixed seed. The integers describe a decode step
over a KV cache of 5 slots of 12 positions, 2 new tokens per row:
- row 0 (slot 3) at positions 10, 11: the whole cache row is valid;
- row 1 (slot 0) at 0, 1: a fresh prompt, causal within the new tokens,
  positions 2.. of the slot hold stale values that must be masked;
- row 2 (slot 4) at -1, 0: its first query sees no key (fully masked, so
  zeros), its second sees key 0 only;
- row 3 (slot 1) at -2, -1: a padding row, every query fully masked.
`times` selects cache positions 11, 0 and 12 (out of range: zeros); `last`
picks each row's last token of the flattened [B * L] tokens."""

import json
import os
import sys

import numpy as np

DTYPES = {"f32": np.float32, "i32": np.int32, "i64": np.int64}
INTEGERS = {
    "slots": [3, 0, 4, 1],
    "start": [10, 0, -1, -2],
    "token_pos": [[10, 11], [0, 1], [-1, 0], [7, 3]],
    "times": [11, 0, 12],
    "last": [1, 3, 5, 7],
}


def main():
    plan_path, out = sys.argv[1:3]
    model = json.load(open(plan_path))["model"]
    os.makedirs(out, exist_ok=True)
    rng = np.random.RandomState(11)
    flags = []
    for tensor in model["inputs"]:
        name, dtype = tensor["name"], DTYPES[tensor["dtype"]]
        if name in INTEGERS:
            value = np.array(INTEGERS[name], dtype=dtype)
        else:
            value = rng.standard_normal(tensor["shape"]).astype(dtype)
        assert list(value.shape) == tensor["shape"], name
        path = os.path.join(out, name + ".npy")
        np.save(path, value)
        flags.append(f"--input {name}={path}")
    print(" ".join(flags))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The greedy tokens of a KV-cache artifact for some prompts, by
`dtensor-run --generate` (up to --slots prompts per run, each in its own
slot), as the reference of check-cache-server.py.

  generate-reference.py --dtensor-run BIN --artifact kv.dtc --weights W
      --lengths 1,5,9 --tokens N --slots S --work DIR -o ref.json
"""

import argparse
import json
import os
import random
import subprocess
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    for name in ("--dtensor-run", "--artifact", "--weights", "--work", "-o"):
        p.add_argument(name, required=True)
    p.add_argument("--lengths", required=True)
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--slots", type=int, required=True)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--ranks", type=int, default=1)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = random.Random(3)
    prompts = [[rng.randrange(a.vocab) for _ in range(int(n))]
               for n in a.lengths.split(",")]
    generated, runs = [], 0
    for first in range(0, len(prompts), a.slots):
        files = []
        for i, prompt in enumerate(prompts[first:first + a.slots]):
            path = os.path.join(a.work, f"p{first + i}.npy")
            np.save(path, np.array(prompt, dtype=np.int64))
            files += ["--prompt", path]
        out = subprocess.run([a.dtensor_run, a.artifact, "-n", str(a.ranks),
                              "-q", "--weights", a.weights, "--generate",
                              str(a.tokens)] + files,
                             capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"dtensor-run failed: {out.stderr}")
        runs += 1
        for line in out.stdout.splitlines():
            if line.startswith("generated "):
                generated.append([int(t) for t in line.split(":")[1].split()])
    if len(generated) != len(prompts):
        sys.exit(f"{len(generated)} generations for {len(prompts)} prompts")
    with open(a.o, "w") as f:
        json.dump({"prompts": prompts, "generated": generated,
                   "tokens": a.tokens}, f)
    print(f"reference: {len(prompts)} prompts x {a.tokens} tokens, {runs} "
          f"runs of dtensor-run --generate")


if __name__ == "__main__":
    main()

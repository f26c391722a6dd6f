#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hugging Face models end to end: each config of Inputs/ (random weights)
is exported with dtensor_export and its family's tensor-parallel plan,
compiled for each rank count, run with dtensor-run, and its logits compared
with the Hugging Face module's own output in PyTorch.

  hf_models.py --tools BIN --work DIR [--ranks 1,2,3,4] [--timing] NAME...

Prints per model and rank count
  ok NAME@N logits: max rel R, argmax A/B (C rows too close to call)
(or MISMATCH), where R is the largest absolute error over the largest
reference magnitude (must be <= --rtol, 1e-4) and argmax is compared on
the rows whose top two logits differ by more than --margin of that
magnitude. With --timing the lines also give compile and step times, and
the Hugging Face module's eager step in PyTorch (median of --iters)."""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# dtensor_export comes from PYTHONPATH (<root>/python: test/lit.cfg.py).


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"failed: {' '.join(command)}")
    return done.stdout


def compare(actual, expected, rtol, margin):
    import numpy as np

    err = float(np.max(np.abs(actual.astype(np.float64) - expected)))
    scale = float(np.max(np.abs(expected)))
    rel = err / scale
    top2 = np.sort(expected, axis=-1)[..., -2:]
    decided = (top2[..., 1] - top2[..., 0]) > margin * scale
    same = (np.argmax(actual, -1) == np.argmax(expected, -1))[decided]
    return rel, int(same.sum()), int(decided.sum()), int((~decided).sum())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tools", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--ranks", default="1,2,3,4")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=12)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--margin", type=float, default=1e-4)
    p.add_argument("--timing", action="store_true",
                   help="also time compile and steps (--iters steps)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--no-composites", action="store_true",
                   help="lower RMSNorm from its parts (to measure the "
                   "composite's effect)")
    p.add_argument("names", nargs="+")
    a = p.parse_args(argv)

    import numpy as np
    import torch

    from dtensor_export import export, hf

    os.makedirs(a.work, exist_ok=True)
    ok = True
    for name in a.names:
        model = hf.model_from_config(os.path.join(HERE, "Inputs",
                                                  f"{name}.json"))
        generator = torch.Generator().manual_seed(1)
        ids = torch.randint(0, model.config.vocab_size, (a.batch, a.seq),
                            generator=generator)
        plan_path = os.path.join(a.work, f"{name}.json")
        weights = os.path.join(a.work, f"{name}.safetensors")
        result = export(model, (), (2,), hf.tp_plan(model),
                        example_kwargs={"input_ids": ids, "use_cache": False},
                        plan_path=plan_path, weights_path=weights,
                        recognize_composites=not a.no_composites)
        ids_path = os.path.join(a.work, f"{name}-ids.npy")
        np.save(ids_path, ids.numpy())
        with torch.no_grad():
            expected = model(input_ids=ids, use_cache=False).logits
        expected = expected.double().numpy()
        eager_ms = None
        if a.timing:
            with torch.no_grad():
                for _ in range(3):
                    model(input_ids=ids, use_cache=False)
                times = []
                for _ in range(a.iters):
                    start = time.perf_counter()
                    model(input_ids=ids, use_cache=False)
                    times.append((time.perf_counter() - start) * 1e3)
            eager_ms = sorted(times)[len(times) // 2]
        for n in [int(r) for r in a.ranks.split(",")]:
            artifact = os.path.join(a.work, f"{name}{n}.dtc")
            start = time.perf_counter()
            run([os.path.join(a.tools, "dtensor-compile"), plan_path,
                 "-o", artifact, "--mesh", str(n)])
            compile_s = time.perf_counter() - start
            out = os.path.join(a.work, f"{name}{n}-logits.npy")
            iters = ["--iters", str(a.iters), "--warmup", "3"] \
                if a.timing else []
            log = run([os.path.join(a.tools, "dtensor-run"), artifact,
                       "-n", str(n), "--weights", weights,
                       "--input", f"input_ids={ids_path}",
                       "--output", f"logits={out}"] + iters)
            rel, same, decided, close = compare(np.load(out), expected,
                                                a.rtol, a.margin)
            good = rel <= a.rtol and same == decided
            ok &= good
            line = (f"{'ok' if good else 'MISMATCH'} {name}@{n} logits: "
                    f"max rel {'<= 1e-4' if rel <= a.rtol else f'{rel:.3g}'}"
                    f", argmax {same}/{decided} ({close} rows too close to "
                    "call)")
            if a.timing:
                step = re.search(r"median ([0-9.]+) ms", log)
                line += (f"; rel {rel:.2g}; compile {compile_s:.2f} s, step "
                         f"{step.group(1) if step else '?'} ms, "
                         f"{len(result.plan['model']['ops'])} ops; Hugging "
                         f"Face eager {eager_ms:.3f} ms")
            print(line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

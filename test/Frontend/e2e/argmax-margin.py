#!/usr/bin/env python3
"""Runs a model plan with dtensor_testing.torch_model and checks that, for every
argmax op, the largest value of each row beats the second largest by at
least --min-gap, so an argmax computed in another summation order (another
world size) picks the same index.

  argmax-margin.py model.json [--min-gap G] -- FLAGS...

FLAGS are make_test_tensors's (--input NAME=FILE.npy, --weights FILE).
dtensor_testing comes from PYTHONPATH (<root>/python; test/lit.cfg.py)."""

import argparse
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("plan")
    p.add_argument("--min-gap", type=float, default=1e-3)
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--weights", action="append", default=[])
    a = p.parse_args(argv)
    import torch
    from dtensor_testing import torch_model as tm

    plan = tm.load_plan(a.plan)
    decls = tm.declarations(plan)
    tensors = {}
    for path in a.weights:
        tensors.update(tm.load_safetensors(path))
    for name, path in tm.parse_pairs(a.input, "--input").items():
        tensors[name] = tm.load_npy(path, decls[name][1])
    values = tm.run_plan(plan, tensors, return_all=True)
    ok = True
    for op in plan["model"]["ops"]:
        if op["op"] != "argmax":
            continue
        x = values[op["inputs"][0]].float()
        top2 = torch.topk(x, 2, dim=op["dim"]).values
        gap = (top2.select(op["dim"], 0) - top2.select(op["dim"], 1)).min().item()
        good = gap >= a.min_gap
        ok &= good
        print(f"{'ok' if good else 'TOO SMALL'}: argmax of {op['inputs'][0]}: "
              f"smallest top-1 margin {gap:.3g} (need {a.min_gap})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

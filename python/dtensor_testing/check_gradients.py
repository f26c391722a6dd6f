#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the gradients dtensor compiles against PyTorch autograd in f64.

  python3 -m dtensor_testing.check_gradients PLAN.json --work DIR
      [--ranks 1,2,3] [--mesh-dim NAME] [--int-high N] [--wrt weights|all]
      [--tolerance X] [--seed N] [--weight-scale X] [--lm-loss LOGITS]
      [--probe] [--reference-plan REF.json] [--custom-op-library LIB]

The plan's model (its first output a float scalar: the loss) is imported,
differentiated by `dtensor-opt --dtensor-differentiate`, compiled for each
rank count (the mesh dim NAME, default the plan's first, set to it) and run
by `dtensor-run --check` (the N-rank gradients equal the single-device
program's) on random inputs and weights: float values from a normal
distribution (weights scaled by --weight-scale, default 0.2, so that a deep
model stays well conditioned in f32), integer inputs uniform in
[0, --int-high). The same plan run
by dtensor_testing.torch_model in f64 with autograd gives the reference;
the loss and every gradient must agree within --tolerance, relative to the
largest magnitude of the reference tensor. Prints one line per tensor and
rank count; exits 1 on the first disagreement.

--lm-loss LOGITS makes a language model's plan a loss: the ops after the one
that defines LOGITS ([..., V]) are dropped, and the output is the mean
cross-entropy of the logits against a new integer input `targets` of the
shape of the logits without V.

--reference-plan REF.json gives the reference the same model written with
built-in ops (same inputs, parameters and outputs): the way to check a
plan whose custom ops PyTorch cannot run, with --custom-op-library naming
the library of their kernels (passed to dtensor-compile). A plan with
local maps is imported once per rank count, on a mesh of that size: a
local map's body is typed with the rank's pieces.

--probe makes any plan a loss: sum over its float outputs o of
sum(o * probe.o), each probe.o a new random input of o's shape, so that
every output's gradient is a different random tensor (an op zoo).
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch

from dtensor_testing import torch_model


def tool(name):
    """A tool of the build: $DTENSOR_BIN/name, else name on PATH."""
    directory = os.environ.get("DTENSOR_BIN")
    return os.path.join(directory, name) if directory else name


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"check_gradients: {' '.join(command)} failed:\n"
                 f"{result.stdout}{result.stderr}")
    return result.stdout


def with_lm_loss(plan, logits):
    """`plan` whose output is the cross-entropy of `logits` (see above)."""
    plan = copy.deepcopy(plan)
    model = plan["model"]
    ops = model["ops"]
    index = next(i for i, op in enumerate(ops) if op.get("output") == logits)
    del ops[index + 1:]
    shapes = {t["name"]: t["shape"]
              for t in model["inputs"] + model.get("parameters", [])}
    # The logits' shape: the first input's leading dims (the tokens) and
    # the vocabulary, the output weight's rows.
    tokens = next(t for t in model["inputs"] if t["dtype"] in ("i32", "i64"))
    weight = ops[index]["inputs"][1]
    vocabulary = shapes[weight][0]
    count = 1
    for size in tokens["shape"]:
        count *= size
    model["inputs"].append({"name": "targets", "shape": tokens["shape"],
                            "dtype": "i64"})
    ops += [{"op": "view", "inputs": [logits], "output": "loss.logits",
             "shape": [count, vocabulary]},
            {"op": "view", "inputs": ["targets"], "output": "loss.targets",
             "shape": [count]},
            {"op": "cross_entropy", "inputs": ["loss.logits", "loss.targets"],
             "output": "loss"}]
    model["outputs"] = ["loss"]
    return plan


def with_probe_loss(plan):
    """`plan` whose output is the probe loss (see above)."""
    plan = copy.deepcopy(plan)
    model = plan["model"]
    generator = torch.Generator().manual_seed(1)
    tensors = {}
    for name, (shape, dtype) in torch_model.declarations(plan).items():
        tensors[name] = (torch.randn(shape, generator=generator, dtype=dtype)
                         if dtype.is_floating_point else
                         torch.zeros(shape, dtype=dtype))
    outputs = torch_model.run_plan(plan, tensors)
    terms = []
    for name, value in outputs.items():
        if not value.is_floating_point():
            continue
        probe = "probe." + name
        model["inputs"].append({"name": probe, "shape": list(value.shape),
                                "dtype": "f32"})
        model["ops"].append({"op": "mul", "inputs": [name, probe],
                             "output": probe + ".term"})
        term = probe + ".term"
        if value.dim() > 0:
            model["ops"].append({"op": "sum", "inputs": [term],
                                 "output": probe + ".sum",
                                 "dim": list(range(value.dim()))})
            term = probe + ".sum"
        terms.append(term)
    loss = terms[0]
    for index, term in enumerate(terms[1:]):
        model["ops"].append({"op": "add", "inputs": [loss, term],
                             "output": f"probe.loss.{index}"})
        loss = f"probe.loss.{index}"
    model["outputs"] = [loss]
    return plan


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("plan")
    parser.add_argument("--work", required=True)
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--mesh-dim")
    parser.add_argument("--int-high", type=int, default=2)
    parser.add_argument("--wrt", default="weights")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weight-scale", type=float, default=0.2)
    parser.add_argument("--lm-loss")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--reference-plan")
    parser.add_argument("--custom-op-library")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    work = lambda name: os.path.join(args.work, name)
    plan = json.load(open(args.plan))
    if args.lm_loss or args.probe:
        plan = (with_lm_loss(plan, args.lm_loss) if args.lm_loss else
                with_probe_loss(plan))
        args.plan = work("plan.json")
        with open(args.plan, "w") as f:
            json.dump(plan, f)
    model = plan["model"]

    def differentiate(plan_path, suffix=""):
        """The gradient function of the imported plan, in gradient.mlir
        (with `suffix`); returns the forward function's name."""
        imported = run([tool("dtensor-translate"), "--import-json",
                        plan_path])
        name = re.search(r"func\.func @([\w.$-]+)", imported).group(1)
        with open(work(f"forward{suffix}.mlir"), "w") as f:
            f.write(imported)
        run([tool("dtensor-opt"), work(f"forward{suffix}.mlir"),
             f"--dtensor-differentiate=function={name} wrt={args.wrt}",
             "-o", work(f"gradient{suffix}.mlir")])
        return name

    function = differentiate(args.plan)

    # Random inputs and weights, in f32 for dtensor and f64 for torch.
    generator = torch.Generator().manual_seed(args.seed)
    values = {}
    for t in model["inputs"] + model.get("parameters", []):
        shape = t["shape"]
        if t["dtype"] in ("i32", "i64"):
            values[t["name"]] = torch.randint(
                0, args.int_high, shape, generator=generator,
                dtype=torch_model.DTYPES[t["dtype"]])
        else:
            values[t["name"]] = torch.randn(shape, generator=generator,
                                            dtype=torch.float32)
    parameters = [t["name"] for t in model.get("parameters", [])]
    for name in parameters:
        if values[name].is_floating_point():
            values[name] *= args.weight_scale
    wrt = [t["name"] for t in model["inputs"] + model.get("parameters", [])
           if t["dtype"] not in ("i32", "i64") and
           (args.wrt == "all" or t["name"] in parameters)]
    from safetensors.torch import save_file
    save_file({name: values[name].contiguous() for name in parameters},
              work("weights.safetensors"))
    input_flags = []
    for t in model["inputs"]:
        path = work(t["name"].replace("/", "_") + ".npy")
        np.save(path, values[t["name"]].numpy())
        input_flags += ["--input", f"{t['name']}={path}"]

    # The reference: the plan in f64 with autograd.
    reference_plan = copy.deepcopy(
        json.load(open(args.reference_plan)) if args.reference_plan else plan)
    for t in reference_plan["model"]["inputs"] + \
            reference_plan["model"].get("parameters", []):
        if t["dtype"] == "f32":
            t["dtype"] = "f64"
    tensors = {name: (v.double() if v.is_floating_point() else v)
               for name, v in values.items()}
    for name in wrt:
        tensors[name].requires_grad_(True)
    outputs = torch_model.run_plan(reference_plan, tensors, grad=True)
    loss = next(iter(outputs.values()))
    loss.backward()
    expected = {"loss": loss.detach().numpy()}
    for name in wrt:
        expected[name + ".grad"] = tensors[name].grad.numpy()
    loss_name = model["outputs"][0]

    mesh_dim = args.mesh_dim or plan["mesh"]["names"][0]
    for ranks in [int(r) for r in args.ranks.split(",")]:
        artifact = work(f"artifact{ranks}")
        gradient = work("gradient.mlir")
        if plan.get("plan", {}).get("local_maps"):
            sized = copy.deepcopy(plan)
            sized["mesh"]["shape"] = [ranks]
            with open(work(f"plan{ranks}.json"), "w") as f:
                json.dump(sized, f)
            differentiate(work(f"plan{ranks}.json"), str(ranks))
            gradient = work(f"gradient{ranks}.mlir")
        library = (["--custom-op-library", args.custom_op_library]
                   if args.custom_op_library else [])
        run([tool("dtensor-compile"), gradient, "--entry",
             f"{function}_grad", "--mesh", f"{mesh_dim}={ranks}", "-o",
             artifact] + library)
        output_flags = []
        for name in expected:
            output = loss_name if name == "loss" else name
            output_flags += ["--output",
                             f"{output}={work(f'{name}.{ranks}.npy')}"]
        run([tool("dtensor-run"), artifact, "-n", str(ranks), "--weights",
             work("weights.safetensors"), "--check"] + input_flags +
            output_flags)
        for name, reference in expected.items():
            got = np.load(work(f"{name}.{ranks}.npy")).astype(np.float64)
            scale = max(np.abs(reference).max(), 1e-30)
            error = np.abs(got - reference).max() / scale
            status = "ok" if error <= args.tolerance else "FAIL"
            print(f"{ranks} ranks {name}: relative error {error:.2e} {status}")
            if status != "ok":
                sys.exit(1)


if __name__ == "__main__":
    main()

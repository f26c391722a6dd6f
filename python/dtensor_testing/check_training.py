#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks compiled training steps against a PyTorch training loop.

  python3 -m dtensor_testing.check_training PLAN.json --work DIR
      [--training JSON] [--lm-loss LOGITS] [--meshes M;M;...]
      [--steps N] [--int-high N] [--seed N] [--weight-scale X]
      [--loss-tolerance X] [--sgd-tolerance X] [--adamw-factor X]
      [--learn-sequence A,B --below X] [--dtensor-peer D,T]
      [--unchecked-tolerance X [--no-torch-reference]]

The plan's `model.training` section (or --training, a JSON object that
becomes it; with --lm-loss LOGITS the plan first gets a cross-entropy loss
as in dtensor_testing.check_gradients and the section's loss defaults to
it) is compiled by dtensor-compile for each mesh of --meshes (each a comma
list of dtensor-compile --mesh overrides, e.g. "tp=2" or "dp=2,tp=2"; ";"
between meshes) and trained for --steps calls of `train_step` by
`dtensor-run --per-step`, each call on its own random batch (float inputs
normal, integer inputs uniform in [0, --int-high)) from the same random
weights (normal, times --weight-scale).

The reference is PyTorch on one device, in f32: the plan's model run by
dtensor_testing.torch_model with autograd, torch.optim.SGD or AdamW with
the same parameter groups, torch.nn.utils.clip_grad_norm_, the schedule as
a LambdaLR, and gradient accumulation as (loss / N).backward() over N
calls. Each call's loss must agree within --loss-tolerance (relative), the
gradient norm and learning rate of each update within 1e-4, and the final
parameters (dtensor-run --save-weights) within --sgd-tolerance relative to
each parameter's largest magnitude for SGD, or elementwise within
--adamw-factor * lr * updates for AdamW (which amplifies the last bits of a
gradient: an element whose second moment is tiny moves by about lr either
way). Prints one line per mesh and quantity; exits 1 on the first
disagreement.

--dtensor-peer D,T (a dtensor_testing.gen_model_plan Llama with --lm-loss,
whose last mesh is dp=D,tp=T; D may be RxS, the replicate and shard dims of
HSDP) also trains with PyTorch DTensor itself
(dtensor_testing.dtensor_training: parallelize_module over tp with loss
parallelism, DDP over dp, gloo) from the same weights and batches: its
losses and final parameters must agree with ours as with the one-device
loop, and the collectives of a step are printed beside ours (the
compile-time report of train_step; CommDebugMode for PyTorch).

--unchecked-tolerance X (a section with activation_checkpointing) also
trains, on each mesh, the plan without activation_checkpointing from the
same weights and batches: each call's loss (relative) and the final
parameters (relative to each one's largest magnitude) of the checkpointed
run must be within X of it. --no-torch-reference leaves the PyTorch loop
out, for plans whose random ops (dropout) PyTorch draws otherwise: the run
without checkpointing, which keeps the forward's draws, is then the
reference, and agreeing with it means the recomputed draws are the same.

--learn-sequence A,B (with --lm-loss) checks that training learns instead:
each row of `tokens` follows t[j+1] = (A * t[j] + B) mod V (V = --int-high)
from a random start, `targets` holds the next tokens, and after --steps
calls on the first mesh the mean loss of the last 5 calls must be below
--below (chance is log V), from random weights with a fixed seed.
"""

import argparse
import copy
import fnmatch
import json
import math
import os
import sys

import numpy as np
import torch

from dtensor_testing import torch_model
from dtensor_testing.check_gradients import run, tool, with_lm_loss


def schedule_factor(schedule, step):
    """The schedule's factor at update `step` (1-based), as the compiler's."""
    warmup = schedule.get("warmup_steps", 0)
    if warmup > 0 and step <= warmup:
        return step / warmup
    decay = schedule.get("decay", "constant")
    if decay == "constant":
        return 1.0
    total = schedule["total_steps"]
    low = schedule.get("min_lr_ratio", 0.0)
    progress = min(1.0, (step - warmup) / (total - warmup))
    if decay == "linear":
        return 1.0 - (1.0 - low) * progress
    return low + (1.0 - low) * 0.5 * (1.0 + math.cos(math.pi * progress))


def torch_optimizer(training, parameters):
    """torch.optim.SGD or AdamW over `parameters` (name -> tensor) with the
    section's groups: the first group whose patterns match a name takes
    it; the others form the last group, with the optimizer's settings."""
    spec = dict(training["optimizer"])
    kind = spec.pop("kind")
    groups = training.get("groups", [])
    members = [[] for _ in groups] + [[]]
    for name, tensor in parameters.items():
        index = next((i for i, g in enumerate(groups)
                      if matches_any(g["params"], name)), len(groups))
        members[index].append(tensor)
    param_groups = []
    for group, tensors in zip(groups + [{}], members):
        settings = {k: v for k, v in group.items() if k != "params"}
        if tensors:
            param_groups.append({"params": tensors, **settings})
    if "betas" in spec:
        spec["betas"] = tuple(spec["betas"])
    if kind == "sgd":
        spec.setdefault("lr", 1e-3)
        return torch.optim.SGD(param_groups, **spec)
    return torch.optim.AdamW(param_groups, **spec)


def matches_any(patterns, name):
    """Whether a glob of `patterns` (one, or a list: a section's `params` or
    `frozen`) matches the parameter name `name`."""
    if isinstance(patterns, str):
        patterns = [patterns]
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def is_frozen(training, name):
    """Whether the section's `frozen` globs name the weight `name`."""
    return matches_any(training.get("frozen", []), name)


def reference_run(plan, training, weights, batches, calls):
    """The PyTorch loop: per call its loss; per update its gradient norm and
    learning rate; the final parameters. A frozen weight has
    requires_grad=False and is left out of the optimizer and the norm."""
    constants = {name: value.clone() for name, value in weights.items()
                 if is_frozen(training, name)}
    parameters = {name: value.clone().requires_grad_(True)
                  for name, value in weights.items()
                  if not is_frozen(training, name)}
    optimizer = torch_optimizer(training, parameters)
    schedule = training.get("schedule", {})
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda k: schedule_factor(schedule, k + 1))
    accumulation = training.get("accumulation_steps", 1)
    clip = training.get("clip_grad_norm")
    loss_name = training["loss"]
    losses, norms, lrs = [], [], []
    for call in range(calls):
        if call % accumulation == 0:
            optimizer.zero_grad()
        tensors = dict(parameters)
        tensors.update(constants)
        tensors.update({name: batch[call] for name, batch in batches.items()})
        loss = torch_model.run_plan(plan, tensors, grad=True)[loss_name]
        (loss / accumulation).backward()
        losses.append(loss.item())
        if (call + 1) % accumulation:
            continue
        grads = [p.grad for p in parameters.values() if p.grad is not None]
        if clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(
                list(parameters.values()), clip)
        else:
            norm = torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        norms.append(norm.item())
        # The optimizer's lr times the schedule's factor (LambdaLR's).
        factor = scheduler.get_last_lr()[0] / scheduler.base_lrs[0]
        lrs.append(training["optimizer"].get("lr", 1e-3) * factor)
        optimizer.step()
        scheduler.step()
    final = {name: p.detach().numpy()
             for name, p in {**parameters, **constants}.items()}
    return np.array(losses), np.array(norms), np.array(lrs), final


def mesh_of(plan, overrides):
    names = plan["mesh"].get("names", [])
    shape = list(plan["mesh"]["shape"])
    for override in overrides:
        name, size = override.split("=")
        shape[names.index(name)] = int(size)
    return shape


def learn(args, plan_path, training, calls, input_flags, work):
    """--learn-sequence: the loss falls below --below."""
    overrides = [o for o in args.meshes.split(";")[0].split(",") if o]
    plan = json.load(open(plan_path))
    ranks = int(np.prod(mesh_of(plan, overrides)))
    mesh_flags = sum((["--mesh", o] for o in overrides), [])
    run([tool("dtensor-compile"), plan_path, "-o", work("artifact"),
         "--no-reference"] + mesh_flags)
    run([tool("dtensor-run"), work("artifact"), "-n", str(ranks), "--entry",
         "train_step", "--per-step", "--iters", str(calls), "--weights",
         work("weights.safetensors"), "--output",
         f"{training['loss']}={work('loss.npy')}"] + input_flags)
    losses = np.load(work("loss.npy")).astype(np.float64)
    final = losses[-5:].mean()
    status = "ok" if final < args.below else "FAIL"
    print(f"learned: loss {losses[0]:.3f} at the first call, {final:.3f} "
          f"over the last 5 of {calls} (bound {args.below}) {status}")
    if status != "ok":
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("plan")
    parser.add_argument("--work", required=True)
    parser.add_argument("--training")
    parser.add_argument("--lm-loss")
    parser.add_argument("--meshes", default="")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--int-high", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weight-scale", type=float, default=0.2)
    parser.add_argument("--loss-tolerance", type=float, default=1e-5)
    parser.add_argument("--sgd-tolerance", type=float, default=1e-5)
    parser.add_argument("--adamw-factor", type=float, default=2e-2)
    parser.add_argument("--learn-sequence")
    parser.add_argument("--below", type=float)
    parser.add_argument("--dtensor-peer")
    parser.add_argument("--unchecked-tolerance", type=float)
    parser.add_argument("--no-torch-reference", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    work = lambda name: os.path.join(args.work, name)
    plan = json.load(open(args.plan))
    if args.lm_loss:
        plan = with_lm_loss(plan, args.lm_loss)
    if args.training:
        training = json.loads(args.training)
        training.setdefault("loss", plan["model"]["outputs"][0])
        plan["model"]["training"] = training
    training = plan["model"].get("training")
    if not training:
        sys.exit("check_training: the plan has no model.training section "
                 "(give --training)")
    plan_path = work("plan.json")
    with open(plan_path, "w") as f:
        json.dump(plan, f)
    model = plan["model"]
    calls = args.steps
    updates = calls // training.get("accumulation_steps", 1)

    # Random weights and one random batch per call.
    generator = torch.Generator().manual_seed(args.seed)
    weights = {}
    for t in model.get("parameters", []):
        weights[t["name"]] = args.weight_scale * torch.randn(
            t["shape"], generator=generator, dtype=torch.float32)
    batches = {}
    for t in model["inputs"]:
        shape = [calls] + t["shape"]
        if t["dtype"] in ("i32", "i64"):
            batches[t["name"]] = torch.randint(
                0, args.int_high, shape, generator=generator,
                dtype=torch_model.DTYPES[t["dtype"]])
        else:
            batches[t["name"]] = torch.randn(shape, generator=generator,
                                             dtype=torch.float32)
    if args.learn_sequence:
        a, b = (int(v) for v in args.learn_sequence.split(","))
        vocabulary = args.int_high
        shape = [calls] + next(t["shape"] for t in model["inputs"]
                               if t["name"] == "targets")
        sequence = torch.empty(shape[:-1] + [shape[-1] + 1],
                               dtype=torch.int64)
        sequence[..., 0] = torch.randint(0, vocabulary, shape[:-1],
                                         generator=generator)
        for j in range(shape[-1]):
            sequence[..., j + 1] = (a * sequence[..., j] + b) % vocabulary
        tokens = next(t for t in model["inputs"] if t["name"] != "targets")
        batches[tokens["name"]] = sequence[..., :-1].to(
            torch_model.DTYPES[tokens["dtype"]])
        batches["targets"] = sequence[..., 1:].clone()
    from safetensors.numpy import load_file
    from safetensors.torch import save_file
    save_file({name: value.contiguous() for name, value in weights.items()},
              work("weights.safetensors"))
    input_flags = []
    for name, batch in batches.items():
        path = work(name.replace("/", "_") + ".npy")
        np.save(path, batch.numpy())
        input_flags += ["--input", f"{name}={path}"]

    if args.learn_sequence:
        return learn(args, plan_path, training, calls, input_flags, work)
    if args.no_torch_reference and args.unchecked_tolerance is None:
        sys.exit("check_training: --no-torch-reference needs "
                 "--unchecked-tolerance (the reference is then the run "
                 "without checkpointing)")
    if args.unchecked_tolerance is not None and \
            "activation_checkpointing" not in training:
        sys.exit("check_training: --unchecked-tolerance needs a section "
                 "with activation_checkpointing")
    if not args.no_torch_reference:
        losses, norms, lrs, final = reference_run(plan, training, weights,
                                                  batches, calls)
    unchecked_path = work("plan.unchecked.json")
    if args.unchecked_tolerance is not None:
        unchecked = copy.deepcopy(plan)
        del unchecked["model"]["training"]["activation_checkpointing"]
        with open(unchecked_path, "w") as f:
            json.dump(unchecked, f)
    adamw = training["optimizer"]["kind"] == "adamw"
    lr = training["optimizer"].get("lr", 1e-3)

    ours = None
    for mesh in [m for m in args.meshes.split(";")] or [""]:
        overrides = [o for o in mesh.split(",") if o]
        shape = mesh_of(plan, overrides)
        ranks = int(np.prod(shape))
        label = "x".join(str(s) for s in shape)
        mesh_flags = []
        for override in overrides:
            mesh_flags += ["--mesh", override]

        def train(path, tag):
            artifact = work(f"artifact.{tag}")
            run([tool("dtensor-compile"), path, "-o", artifact,
                 "--no-reference"] + mesh_flags)
            run([tool("dtensor-run"), artifact, "-n", str(ranks), "--entry",
                 "train_step", "--per-step", "--iters", str(calls),
                 "--weights", work("weights.safetensors"), "--save-weights",
                 work(f"trained.{tag}.safetensors"),
                 "--output", f"{training['loss']}={work(f'loss.{tag}.npy')}",
                 "--output", f"grad_norm={work(f'grad_norm.{tag}.npy')}",
                 "--output", f"lr={work(f'lr.{tag}.npy')}"] + input_flags)

        train(plan_path, label)
        out = lambda name: work(f"{name}.{label}.npy")
        if args.dtensor_peer:
            ours = (np.load(out("loss")).astype(np.float64),
                    load_file(work(f"trained.{label}.safetensors")),
                    mesh_flags)
        got_losses = np.load(out("loss")).astype(np.float64)
        got_norms = np.load(out("grad_norm")).astype(np.float64)
        got_lrs = np.load(out("lr")).astype(np.float64)
        # The norm and lr of the calls that update.
        every = training.get("accumulation_steps", 1)
        got_norms = got_norms[every - 1::every]
        got_lrs = got_lrs[every - 1::every]
        trained = load_file(work(f"trained.{label}.safetensors"))

        def verdict(name, error, bound):
            status = "ok" if error <= bound else "FAIL"
            print(f"mesh {label} {name}: error {error:.2e} "
                  f"(bound {bound:.1e}) {status}")
            if status != "ok":
                sys.exit(1)

        if args.unchecked_tolerance is not None:
            train(unchecked_path, f"unchecked.{label}")
            plain_losses = np.load(
                work(f"loss.unchecked.{label}.npy")).astype(np.float64)
            plain = load_file(work(f"trained.unchecked.{label}.safetensors"))
            verdict(f"{calls} losses against no checkpointing",
                    np.max(np.abs(got_losses - plain_losses) /
                           np.abs(plain_losses)), args.unchecked_tolerance)
            verdict("parameters against no checkpointing",
                    max(np.abs(trained[name].astype(np.float64) -
                               plain[name]).max() /
                        max(np.abs(plain[name]).max(), 1e-30)
                        for name in plain), args.unchecked_tolerance)
        if args.no_torch_reference:
            continue
        verdict(f"{calls} losses",
                np.max(np.abs(got_losses - losses) / np.abs(losses)),
                args.loss_tolerance)
        verdict(f"{updates} gradient norms",
                np.max(np.abs(got_norms - norms) / np.abs(norms)), 1e-4)
        verdict(f"{updates} learning rates",
                np.max(np.abs(got_lrs - lrs) / np.maximum(np.abs(lrs),
                                                           1e-30)), 1e-4)
        for name, reference in final.items():
            value = trained[name].astype(np.float64)
            if adamw:
                verdict(f"parameter {name}",
                        np.abs(value - reference).max(),
                        args.adamw_factor * lr * updates)
            else:
                verdict(f"parameter {name}",
                        np.abs(value - reference).max() /
                        max(np.abs(reference).max(), 1e-30),
                        args.sgd_tolerance)
    if args.dtensor_peer:
        check_dtensor_peer(args, plan, training, weights, batches, calls,
                           ours, work)


def check_dtensor_peer(args, plan, training, weights, batches, calls, ours,
                       work):
    """--dtensor-peer: PyTorch DTensor's run against ours."""
    from dtensor_testing import dtensor_training
    dp_text, tp_text = args.dtensor_peer.split(",")
    dp, tp = [int(v) for v in dp_text.split("x")], int(tp_text)
    schedule = training.get("schedule", {})
    peer = dtensor_training.train(
        plan, {k: v.numpy() for k, v in weights.items()},
        {k: v.numpy() for k, v in batches.items()}, dp, tp,
        lambda t: schedule_factor(schedule, t))
    our_losses, our_params, artifact_flags = ours
    fsdp = "FSDP2 " if plan.get("plan", {}).get("fully_shard") else ""
    label = f"PyTorch DTensor {fsdp}dp{dp_text} x tp{tp}"
    error = np.max(np.abs(np.array(peer["losses"]) - our_losses) /
                   np.abs(our_losses))
    status = "ok" if error <= args.loss_tolerance else "FAIL"
    print(f"{label} {calls} losses against ours: error {error:.2e} "
          f"(bound {args.loss_tolerance:.1e}) {status}")
    if status != "ok":
        sys.exit(1)
    adamw = training["optimizer"]["kind"] == "adamw"
    lr = training["optimizer"].get("lr", 1e-3)
    updates = calls // training.get("accumulation_steps", 1)
    worst = 0.0
    for name, value in peer["final"].items():
        theirs = np.array(value, dtype=np.float64)
        mine = our_params[name].astype(np.float64)
        worst = max(worst, np.abs(theirs - mine).max() if adamw else
                    np.abs(theirs - mine).max() / max(np.abs(mine).max(),
                                                      1e-30))
    bound = args.adamw_factor * lr * updates if adamw else args.sgd_tolerance
    status = "ok" if worst <= bound else "FAIL"
    print(f"{label} final parameters against ours: error {worst:.2e} "
          f"(bound {bound:.1e}) {status}")
    if status != "ok":
        sys.exit(1)
    # Collectives of one step: ours from the compile-time report.
    report = run([tool("dtensor-compile"), work("plan.json"), "-o",
                  work("report.dtc"), "--no-reference",
                  "--comm-report=json"] + artifact_flags)
    report = json.loads(report[report.index("{"):])
    step = next(f for f in report["functions"] if f["name"] == "train_step")
    kinds = {}
    for module in step["modules"]:
        for c in module["collectives"]:
            kinds[c["kind"]] = kinds.get(c["kind"], 0) + c["calls"]
    theirs = peer["comms"][-1]
    short = {k.split(".")[-1]: v for k, v in theirs.items()}
    print(f"collectives per step: ours {sum(kinds.values())} "
          f"{dict(sorted(kinds.items()))}; {label} "
          f"{sum(theirs.values())} {dict(sorted(short.items()))}")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch DTensor as the oracle: runs the same models and redistributions
with PyTorch's own DTensor (dtensor_worker.py, gloo) and with dtensor's
compiled artifacts, and compares them. Needs the PyTorch environment of
scripts/torch-env.sh (run with its python).

  oracle.py models --tools DIR --work DIR [--cases REGEX] [--compile]
  oracle.py redistribute --tools DIR --work DIR --mesh 2x2 [--pairs N]
      [--seed S] [--shapes 8x6,5x7]

models: every stateless plan of examples/*.json (training plans aside)
and plans from dtensor_testing.gen_model_plan (MLP, decoder block, Llama;
tp, sequence parallel, loss parallel, dp x tp), each on several mesh
shapes (1 to 4 ranks). Both sides get the same weights and inputs (seeded); DTensor's
outputs (full_tensor()) must equal the gathered outputs of `dtensor-run`
(f32: largest error relative to the largest magnitude <= 1e-5; integers
exactly). Prints one line per case and output:

  ok <case> <output>: max rel <e>       (or MISMATCH, or ERROR <why>)
  comm <case>: dtensor <kind>=<n> ... | ours <kind>=<n> ...

A case DTensor cannot run (PyTorch raises) is compared with the
single-device result of dtensor_testing.torch_model instead and says so:
`ok-single-device <case> <output>: ... (DTensor: <first line of its error>)`.

redistribute: N random (source, target) placement pairs on the mesh, for
each shape; every rank's shard from dtensor-run --output-local must equal
DTensor's redistribute(...).to_local() byte for byte:

  ok <source> -> <target> <shape>    (or MISMATCH ... rank R: ...)

except where a Partial(sum) or Partial(avg) source is reduced: the ranks'
contributions are added in another order by MPI than by gloo, so those
are `ok-rounding` within 1e-6 relative; pairs DTensor refuses are
`ok-global` (the gathered value equals the source's full_tensor()).

Exits 1 when a comparison failed.
"""

import argparse
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys

import numpy as np
import torch
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
from dtensor_testing import llama, torch_model

TOLERANCE = 1e-5
KINDS = {"all_reduce": "all_reduce", "all_gather_into_tensor": "all_gather",
         "reduce_scatter_tensor": "reduce_scatter",
         "all_to_all_single": "all_to_all", "broadcast": "broadcast"}


def run(command, merge_stderr=True, **kwargs):
    """The command's output; with merge_stderr false, stdout alone (remarks
    on stderr do not mix into a JSON report)."""
    result = subprocess.run(
        command, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed "
                           f"({result.returncode}):\n{result.stdout}"
                           f"{result.stderr or ''}")
    return result.stdout


def run_dtensor_jobs(jobs, world, work):
    """Runs `jobs` on `world` DTensor ranks (one process each)."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, f"jobs-{world}.json")
    with open(path, "w") as f:
        json.dump(jobs, f, indent=1)
    store = os.path.join(work, f"store-{world}")
    if os.path.exists(store):
        os.remove(store)
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    logs = [open(os.path.join(work, f"worker-{world}.{r}.log"), "w")
            for r in range(world)]
    procs = [subprocess.Popen(
        [sys.executable, os.path.join(HERE, "dtensor_worker.py"), path,
         "--rank", str(r), "--world", str(world), "--store", store],
        stdout=logs[r], stderr=subprocess.STDOUT, env=env)
        for r in range(world)]
    try:
        codes = [p.wait(timeout=900) for p in procs]
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        codes = ["timeout"] * world
    for log in logs:
        log.close()
    if any(code != 0 for code in codes):
        text = open(os.path.join(work, f"worker-{world}.0.log")).read()
        raise RuntimeError(f"DTensor workers exited with {codes}:\n{text}")


def worker_report(out, kind):
    """The first rank's `kind` ("error" or "refused") report of a job, or
    None."""
    for name in sorted(os.listdir(out)):
        if name.startswith(kind + "."):
            return open(os.path.join(out, name)).read()
    return None


def compare(name, ours, theirs):
    """(ok, text) for one output."""
    if ours.shape != theirs.shape:
        return False, f"shape {list(ours.shape)} against {list(theirs.shape)}"
    if not np.issubdtype(ours.dtype, np.floating):
        bad = int(np.sum(ours != theirs.astype(ours.dtype)))
        return bad == 0, f"exact ({bad} of {ours.size} differ)"
    ours64, theirs64 = ours.astype(np.float64), theirs.astype(np.float64)
    scale = float(np.max(np.abs(theirs64))) if theirs.size else 0.0
    err = float(np.max(np.abs(ours64 - theirs64))) if ours.size else 0.0
    rel = err / scale if scale > 0 else err
    return rel <= TOLERANCE and np.all(np.isfinite(ours64)), \
        f"max rel {rel:.2e}"


# --- models ---------------------------------------------------------------------


def model_cases():
    """(case name, plan dict) for every example and generated plan, on each
    mesh shape it is checked on."""
    plans = []
    for name in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if name.endswith(".json"):
            with open(os.path.join(ROOT, "examples", name)) as f:
                plan = json.load(f)
            # Stateful plans (a KV cache, entries): kv-generate.test checks
            # their generation against PyTorch's recomputation. Training
            # plans: test/E2E/training.test trains them against PyTorch
            # (DTensor itself included).
            if "entries" not in plan["model"] and \
                    "training" not in plan["model"]:
                plans.append((name[:-5], plan))
    for label, args in [
            ("gen_mlp_tp", ["--model", "mlp", "--plan", "tp"]),
            ("gen_block_tp", ["--model", "block", "--plan", "tp"]),
            ("gen_block_sp", ["--model", "block", "--plan", "tp-sp"]),
            ("gen_llama_tp", ["--model", "llama", "--plan", "tp"]),
            ("gen_llama_sp", ["--model", "llama", "--plan", "tp-sp"]),
            ("gen_llama_loss", ["--model", "llama", "--plan", "tp",
                                "--loss"]),
            ("gen_llama_dp_tp", ["--model", "llama", "--plan", "dp-tp",
                                 "--mesh", "2x2"])]:
        plans.append((label, json.loads(run([sys.executable, "-m",
                                          "dtensor_testing.gen_model_plan"]
                                         + args))))
    for label, plan in plans:
        if len(plan["mesh"]["shape"]) == 1:
            shapes = [[1], [2], [4]]
            if "mlp" in label:
                shapes.append([3])  # uneven: 128 columns over 3 ranks
        else:
            shapes = [[1, 2], [2, 1], [2, 2]]
        for shape in shapes:
            variant = json.loads(json.dumps(plan))
            variant["mesh"]["shape"] = shape
            yield f"{label}@{'x'.join(map(str, shape))}", variant


def tensors_for(plan, seed):
    """Seeded inputs and weights (llama.random_tensors: weights scaled
    so activations keep unit scale, ids over the vocabulary) as NumPy arrays
    of the declared dtypes."""
    dtypes = {t["name"]: t["dtype"] for t in
              plan["model"]["inputs"] + plan["model"].get("parameters", [])}
    return {name: value.to(torch_model.DTYPES[dtypes[name]]).numpy()
            for name, value in llama.random_tensors(plan, seed).items()}


def our_counts(report):
    counts = {}
    for function in report["functions"]:
        for module in function["modules"]:
            for c in module["collectives"]:
                counts[c["kind"]] = counts.get(c["kind"], 0) + c["calls"]
    return counts


def their_counts(raw):
    counts = {}
    for op, n in raw.items():
        base = op.split(".")[-1] if "." in op else op
        base = re.sub(r"_$", "", base)
        kind = KINDS.get(base, base)
        counts[kind] = counts.get(kind, 0) + n
    return counts


def format_counts(counts):
    return " ".join(f"{k}={counts[k]}" for k in sorted(counts)) or "none"


def models(args):
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = [(name, plan) for name, plan in model_cases()
             if re.search(args.cases, name)]
    prepared = []
    for index, (name, plan) in enumerate(cases):
        folder = os.path.join(work, name)
        os.makedirs(folder)
        plan_path = os.path.join(folder, "plan.json")
        with open(plan_path, "w") as f:
            json.dump(plan, f, indent=1)
        values = tensors_for(plan, 1000 + index)
        params = {p["name"] for p in plan["model"].get("parameters", [])}
        weights = os.path.join(folder, "weights.safetensors")
        save_file({k: v for k, v in values.items() if k in params}, weights)
        inputs = {}
        for decl in plan["model"]["inputs"]:
            inputs[decl["name"]] = os.path.join(folder, decl["name"] + ".npy")
            np.save(inputs[decl["name"]], values[decl["name"]])
        single = torch_model.run_plan(
            plan, {k: torch.from_numpy(v) for k, v in values.items()})
        world = int(np.prod(plan["mesh"]["shape"]))
        prepared.append(dict(name=name, plan=plan, plan_path=plan_path,
                             folder=folder, weights=weights, inputs=inputs,
                             world=world, single={k: v.numpy() for k, v in
                                                  single.items()}))

    # DTensor: one group of processes per world size runs all its cases.
    by_world = {}
    for case in prepared:
        by_world.setdefault(case["world"], []).append(dict(
            kind="model", plan=case["plan_path"], weights=case["weights"],
            inputs=case["inputs"], mesh=case["plan"]["mesh"]["shape"],
            mesh_names=case["plan"]["mesh"].get("names"),
            out=os.path.join(case["folder"], "dtensor"),
            compile=args.compile,
            output_shapes=[list(v.shape) for v in case["single"].values()]))
    for world, jobs in sorted(by_world.items()):
        run_dtensor_jobs(jobs, world, os.path.join(work, "workers"))

    failed = False
    for case in prepared:
        name, folder = case["name"], case["folder"]
        artifact = os.path.join(folder, "model.dtc")
        try:
            report = json.loads(run([
                os.path.join(args.tools, "dtensor-compile"), case["plan_path"],
                "-o", artifact, "--no-reference", "--comm-report=json"],
                merge_stderr=False))
            command = [os.path.join(args.tools, "dtensor-run"), artifact, "-n",
                       str(case["world"]), "-q", "--weights", case["weights"],
                       "--threads", "1"]
            for input_name, path in case["inputs"].items():
                command += ["--input", f"{input_name}={path}"]
            for output in case["single"]:
                command += ["--output",
                            f"{output}={os.path.join(folder, output)}.ours.npy"]
            run(command)
        except RuntimeError as error:
            print(f"ERROR {name}: dtensor: {error}")
            failed = True
            continue
        out = os.path.join(folder, "dtensor")
        error = worker_report(out, "error")
        if error:
            print(f"ERROR {name}: the DTensor harness failed:\n{error}")
            failed = True
            continue
        refused = worker_report(out, "refused")
        for output, single in case["single"].items():
            ours = np.load(os.path.join(folder, output + ".ours.npy"))
            if refused is None:
                theirs = np.load(os.path.join(out, output + ".npy"))
                ok, text = compare(output, ours, theirs)
                label = "ok" if ok else "MISMATCH"
                print(f"{label} {name} {output}: {text}")
            else:
                ok, text = compare(output, ours, single)
                label = "ok-single-device" if ok else "MISMATCH"
                print(f"{label} {name} {output}: {text} (DTensor: {refused})")
            failed |= not ok
        if refused is None:
            with open(os.path.join(out, "comm.json")) as f:
                theirs = their_counts(json.load(f)["total"])
            print(f"comm {name}: dtensor {format_counts(theirs)} | ours "
                  f"{format_counts(our_counts(report))}")
    return 1 if failed else 0


# --- redistribute ---------------------------------------------------------------


def placement_options(rank):
    return [f"S({d})" for d in range(rank)] + ["R", "P(sum)", "P(avg)",
                                                 "P(max)", "P(min)"]


def mlir_placement(text):
    if text == "R":
        return "replicate"
    if text.startswith("S("):
        return f"shard<{text[2:-1]}>"
    return f"partial<{text[2:-1]}>"


def redistribute(args):
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    mesh = [int(s) for s in args.mesh.split("x")]
    world = int(np.prod(mesh))
    rng = random.Random(args.seed)
    cases = []
    for shape_text in args.shapes.split(","):
        shape = [int(s) for s in shape_text.split("x")]
        options = placement_options(len(shape))
        layouts = list(itertools.product(options, repeat=len(mesh)))
        # DTensor holds no tensor with two kinds of Partial (from_local
        # refuses it), so no source has them.
        sources = [ps for ps in layouts
                   if len({p for p in ps if p.startswith("P(")}) <= 1]
        pairs = list(itertools.product(sources, layouts))
        for source, target in rng.sample(pairs, min(args.pairs, len(pairs))):
            cases.append(dict(shape=shape, source=list(source),
                              target=list(target),
                              seed=rng.randrange(1 << 30)))
    out = os.path.join(work, "dtensor")
    run_dtensor_jobs([dict(kind="redistribute", mesh=mesh, cases=cases,
                           out=out)], world, os.path.join(work, "workers"))
    problem = worker_report(out, "error")
    if problem:
        print(f"ERROR DTensor: {problem}")
        return 1

    tensor = lambda shape: f"tensor<{'x'.join(map(str, shape))}xf32>"  # noqa
    layout = lambda ps: ("#dtensor.layout<@mesh, [" +  # noqa: E731
                         ", ".join(mlir_placement(p) for p in ps) + "]>")
    lines = [f"dtensor.mesh @mesh shape [{', '.join(map(str, mesh))}]",
             "func.func @main("]
    lines.append(",\n".join(
        f"    %a{i}: {tensor(c['shape'])} {{dtensor.layout = "
        f"{layout(c['source'])}, dtensor.name = \"in_{i}\"}}"
        for i, c in enumerate(cases)))
    lines.append("  ) -> (")
    lines.append(",\n".join(
        f"    {tensor(c['shape'])} {{dtensor.layout = {layout(c['target'])}, "
        f"dtensor.name = \"out_{i}\"}}" for i, c in enumerate(cases)))
    lines.append("  ) {")
    lines.append(f"  return {', '.join(f'%a{i}' for i in range(len(cases)))}"
                 f" : {', '.join(tensor(c['shape']) for c in cases)}")
    lines.append("}")
    program = os.path.join(work, "redistribute.mlir")
    with open(program, "w") as f:
        f.write("\n".join(lines) + "\n")
    artifact = os.path.join(work, "redistribute.dtc")
    run([os.path.join(args.tools, "dtensor-compile"), program, "-o", artifact,
         "--no-reference"])
    command = [os.path.join(args.tools, "dtensor-run"), artifact, "-n",
               str(world), "-q", "--threads", "1"]
    for i in range(len(cases)):
        command += ["--input-local", f"in_{i}={out}/in_{i}.{{rank}}.npy",
                    "--output-local", f"out_{i}={work}/out_{i}.{{rank}}.npy",
                    "--output", f"out_{i}={work}/out_{i}.npy"]
    run(command)

    failed = False
    for i, case in enumerate(cases):
        label = (f"[{', '.join(case['source'])}] -> "
                 f"[{', '.join(case['target'])}] "
                 f"{'x'.join(map(str, case['shape']))}")
        refused = os.path.join(out, f"refused_{i}.txt")
        if os.path.exists(refused):
            # DTensor cannot do it: the gathered result must still be the
            # source's global value.
            ours = np.load(os.path.join(work, f"out_{i}.npy"))
            ok, text = compare(f"out_{i}", ours,
                               np.load(os.path.join(out, f"global_{i}.npy")))
            failed |= not ok
            print(f"{'ok-global' if ok else 'MISMATCH'} {label}: {text} "
                  f"(DTensor: {open(refused).read()})")
            continue
        bad = []
        rounding = 0.0
        reduces = any(src in ("P(sum)", "P(avg)") and t != src
                      for src, t in zip(case["source"], case["target"]))
        for r in range(world):
            ours = np.load(os.path.join(work, f"out_{i}.{r}.npy"))
            theirs = np.load(os.path.join(out, f"exp_{i}.{r}.npy"))
            if ours.shape != theirs.shape:
                bad.append(f"rank {r}: shape {list(ours.shape)} against "
                           f"{list(theirs.shape)}")
            elif ours.tobytes() != theirs.tobytes():
                diff = np.max(np.abs(ours.astype(np.float64) - theirs))
                scale = max(float(np.max(np.abs(theirs))), 1e-30)
                if reduces and diff / scale <= 1e-6:
                    # Sums of partial values: MPI and gloo add the ranks'
                    # contributions in different orders.
                    rounding = max(rounding, diff / scale)
                    continue
                bad.append(f"rank {r}: bytes differ (max abs {diff:.3g})")
        if rounding:
            print(f"ok-rounding {label}: max rel {rounding:.2e} (sums "
                  f"partial values in another order)")
            continue
        if bad:
            failed = True
            print(f"MISMATCH {label}: {'; '.join(bad)}")
        else:
            print(f"ok {label}")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("models")
    m.add_argument("--cases", default=".", help="regex of case names")
    m.add_argument("--compile", action="store_true",
                   help="DTensor under torch.compile (Inductor)")
    r = sub.add_parser("redistribute")
    r.add_argument("--mesh", required=True)
    r.add_argument("--pairs", type=int, default=40)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--shapes", default="8x6,5x7")
    for p in (m, r):
        p.add_argument("--tools", required=True, help="dtensor's bin folder")
        p.add_argument("--work", required=True, help="scratch folder")
    args = parser.parse_args()
    return models(args) if args.command == "models" else redistribute(args)


if __name__ == "__main__":
    sys.exit(main())

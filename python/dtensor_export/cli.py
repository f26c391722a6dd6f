# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dtensor-export: a PyTorch model to a dtensor model plan and weights.

  dtensor-export --hf-config config.json --batch 1 --seq 16 --mesh 2 \\
      -o model.json --weights model.safetensors
  dtensor-export --module mypkg.models:build --mesh 4 -o m.json --weights m.st

The model comes from a Hugging Face config (random weights, seeded), a
local folder saved with save_pretrained, or a Python factory returning
(module, example_args) or (module, example_args, parallelize_plan).
Exits 1 with one message (the op, its module and source line) when the
model cannot be exported; then nothing is written."""

import argparse
import importlib
import json
import os
import sys

from .errors import ExportError


def _mesh(text):
    try:
        shape = [int(d) for d in text.lower().split("x")]
    except ValueError:
        shape = []
    if not shape or any(d < 1 for d in shape):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a mesh shape such as 2 or 2x4")
    return shape


def _override(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"'{text}' is not KEY=VALUE")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def parser():
    p = argparse.ArgumentParser(
        prog="dtensor-export", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf-config", metavar="FILE",
                        help="Hugging Face config.json (with model_type); "
                        "the model gets random weights from --seed")
    source.add_argument("--hf-model", metavar="DIR",
                        help="folder of a Hugging Face model saved with "
                        "save_pretrained (local files only)")
    source.add_argument("--module", metavar="MODULE:FUNCTION",
                        help="Python factory returning (module, args) or "
                        "(module, args, parallelize_plan)")
    p.add_argument("--set", dest="overrides", type=_override, action="append",
                   default=[], metavar="KEY=VALUE",
                   help="override a --hf-config entry (JSON value), "
                   "repeatable")
    p.add_argument("--batch", type=int, default=1,
                   help="rows of the example input_ids (Hugging Face; "
                   "default 1)")
    p.add_argument("--seq", type=int, default=16,
                   help="tokens per row of the example input_ids (Hugging "
                   "Face; default 16)")
    p.add_argument("--mesh", type=_mesh, default=[1], metavar="SHAPE",
                   help="device mesh, e.g. 2 or 2x4 (default 1; "
                   "dtensor-compile --mesh may reshape it)")
    p.add_argument("--mesh-names", metavar="A,B",
                   help="mesh dim names (default tp for one dim)")
    p.add_argument("--data-parallel", metavar="DIM",
                   help="a mesh dim name for data parallelism (the plan's "
                   "data_parallel): the inputs' first dim is sharded over "
                   "it and, in a training plan, the gradients are reduced "
                   "over it (DDP); the tensor-parallel styles apply to the "
                   "other dims")
    p.add_argument("--tp-plan", default="hf", metavar="hf|none|FILE.json",
                   help="hf: the model's own tensor-parallel plan "
                   "(dtensor_export.hf.tp_plan) or the factory's; none: "
                   "replicated; a JSON file of pattern -> Hugging Face style "
                   "string (colwise, rowwise, colwise_gather_output, ...)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random weights and example ids")
    p.add_argument("--name", help="the model's entry function name")
    p.add_argument("--next-token", action="store_true",
                   help="add the output next_token, the argmax of logits "
                   "over the vocabulary (what dtensor-server serves)")
    p.add_argument("--training", metavar="JSON|FILE.json",
                   help="make the plan a training plan: an input targets, "
                   "the output loss (mean cross-entropy of logits) and this "
                   "training section (docs/training.md), e.g. "
                   "'{\"optimizer\": {\"kind\": \"adamw\", \"lr\": 1e-3}}'")
    p.add_argument("-o", "--output", required=True, metavar="PLAN.json",
                   help="the model plan to write")
    p.add_argument("--weights", required=True, metavar="FILE.safetensors",
                   help="the weights to write, under the module's own "
                   "parameter names")
    p.add_argument("--tokenizer", metavar="DIR",
                   help="copy DIR's tokenizer files (tokenizer.json or "
                   "tokenizer.model, tokenizer_config.json with the chat "
                   "template, generation_config.json) to PLAN.tokenizer/ "
                   "for dtensor-server --tokenizer (default with "
                   "--hf-model: that folder's, when it has them)")
    p.add_argument("--save-example", metavar="DIR",
                   help="also write the example inputs and the module's "
                   "outputs on them as DIR/<name>.npy")
    return p


def _load(args):
    import torch

    from . import hf

    plan = None
    if args.module:
        module_name, _, function = args.module.partition(":")
        if not function:
            raise ExportError(f"--module '{args.module}' is not "
                              "MODULE:FUNCTION")
        made = getattr(importlib.import_module(module_name), function)()
        if not isinstance(made, tuple) or len(made) not in (2, 3):
            raise ExportError(f"{args.module} must return (module, args) or "
                              "(module, args, parallelize_plan)")
        model, example = made[0], tuple(made[1])
        plan = made[2] if len(made) == 3 else None
        return model, example, {}, plan
    if args.hf_config:
        model = hf.model_from_config(args.hf_config, seed=args.seed,
                                     overrides=dict(args.overrides))
    else:
        if args.overrides:
            raise ExportError("--set applies to --hf-config only")
        model = hf.model_from_folder(args.hf_model)
    generator = torch.Generator().manual_seed(args.seed)
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.seq),
                        generator=generator)
    kwargs = {"input_ids": ids, "use_cache": False}
    return model, (), kwargs, None


def _plan(args, model, factory_plan):
    from . import hf

    if args.tp_plan == "none":
        return {}
    if args.tp_plan == "hf":
        return factory_plan if args.module else hf.tp_plan(model)
    with open(args.tp_plan) as f:
        return json.load(f)


def main(argv=None):
    args = parser().parse_args(argv)
    names = args.mesh_names.split(",") if args.mesh_names else None
    if names is not None and len(names) != len(args.mesh):
        print(f"dtensor-export: --mesh-names gives {len(names)} names for "
              f"{len(args.mesh)} mesh dims", file=sys.stderr)
        return 2
    try:
        from . import export

        training = None
        if args.training is not None:
            text = args.training
            if not text.lstrip().startswith("{"):
                with open(text) as f:
                    text = f.read()
            try:
                training = json.loads(text)
            except json.JSONDecodeError as error:
                raise ExportError(f"--training: not JSON: {error}") from error
        model, example, kwargs, factory_plan = _load(args)
        result = export(model, example, args.mesh,
                        _plan(args, model, factory_plan),
                        example_kwargs=kwargs, mesh_names=names,
                        plan_path=args.output, weights_path=args.weights,
                        name=args.name, next_token=args.next_token,
                        training=training,
                        data_parallel=args.data_parallel)
        from .tokenizer_files import copy_tokenizer, has_tokenizer

        source = args.tokenizer
        if source is None and args.hf_model and has_tokenizer(args.hf_model):
            source = args.hf_model
        tokenizer = (copy_tokenizer(source, args.output, model)
                     if source else None)
    except (ExportError, OSError) as error:
        print(f"dtensor-export: error: {error}", file=sys.stderr)
        return 1
    if args.save_example:
        import numpy as np

        os.makedirs(args.save_example, exist_ok=True)
        for name, value in list(result.inputs.items()) + list(
                result.outputs.items()):
            np.save(os.path.join(args.save_example, f"{name}.npy"),
                    value.detach().numpy())
    ops = len(result.plan["model"]["ops"])
    print(f"dtensor-export: {args.output}: {ops} ops, "
          f"{len(result.plan['model']['parameters'])} parameters; "
          f"{args.weights}" + (f"; tokenizer {tokenizer}" if tokenizer
                               else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

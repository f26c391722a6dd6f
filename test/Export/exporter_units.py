#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Unit tests of dtensor_export's pieces (unittest): style translation,
constant rebuilding, output naming, and lowerings checked against PyTorch
on small modules (the plan is interpreted by name, op by op, with PyTorch
ops, so each lowering's semantics is compared without the compiler)."""

import os
import tempfile
import unittest

# dtensor_export comes from PYTHONPATH (<root>/python: test/lit.cfg.py).
import torch
from torch.distributed.tensor import Partial, Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel, PrepareModuleInput, PrepareModuleOutput,
    RowwiseParallel, SequenceParallel)

from dtensor_export import ExportError, constants, export
from dtensor_export.styles import convert_style


def no_embedding(_):
    return False


class StyleTest(unittest.TestCase):
    def test_defaults_are_left_out(self):
        self.assertEqual(convert_style("a", ColwiseParallel(), no_embedding),
                         {"style": "colwise"})
        self.assertEqual(convert_style("a", RowwiseParallel(), no_embedding),
                         {"style": "rowwise"})

    def test_layouts(self):
        style = ColwiseParallel(input_layouts=Shard(1),
                                output_layouts=Replicate(),
                                use_local_output=False)
        self.assertEqual(convert_style("a", style, no_embedding),
                         {"style": "colwise", "input_layouts": ["S(1)"],
                          "output_layouts": ["R"],
                          "use_local_output": False})
        style = RowwiseParallel(output_layouts=Partial())
        self.assertEqual(convert_style("a", style, no_embedding),
                         {"style": "rowwise", "output_layouts": ["P"]})

    def test_rowwise_embedding_input(self):
        # PyTorch's default Shard(-1) and torchtitan's Replicate() both
        # say "the ids" for an embedding: no layout is written for either.
        for style in (RowwiseParallel(),
                      RowwiseParallel(input_layouts=Replicate())):
            self.assertEqual(convert_style("e", style, lambda _: True),
                             {"style": "rowwise"})

    def test_other_styles(self):
        self.assertEqual(convert_style("n", SequenceParallel(sequence_dim=0),
                                       no_embedding),
                         {"style": "sequence_parallel", "sequence_dim": 0})
        style = PrepareModuleInput(input_layouts=(Shard(1), None),
                                   desired_input_layouts=(Replicate(), None))
        self.assertEqual(convert_style("m", style, no_embedding),
                         {"style": "prepare_module_input",
                          "input_layouts": ["S(1)", None],
                          "desired_input_layouts": ["R", None]})
        style = PrepareModuleOutput(output_layouts=Shard(0),
                                    desired_output_layouts=Replicate())
        self.assertEqual(convert_style("m", style, no_embedding),
                         {"style": "prepare_module_output",
                          "output_layouts": ["S(0)"],
                          "desired_output_layouts": ["R"]})

    def test_hugging_face_strings(self):
        self.assertEqual(convert_style("h", "colwise_gather_output",
                                       no_embedding),
                         {"style": "colwise", "output_layouts": ["R"]})
        self.assertIsNone(convert_style("h", "replicated_with_grad_allreduce",
                                        no_embedding))
        with self.assertRaisesRegex(ExportError, "unknown style string"):
            convert_style("h", "diagonal", no_embedding)

    def test_kwarg_layouts_refused(self):
        style = PrepareModuleInput(input_kwarg_layouts={"x": Shard(0)},
                                   desired_input_kwarg_layouts={
                                       "x": Replicate()})
        with self.assertRaisesRegex(ExportError, "input_kwarg_layouts"):
            convert_style("m", style, no_embedding)


class ConstantTest(unittest.TestCase):
    def test_broadcast_base(self):
        base = torch.arange(8).reshape(1, 8)
        self.assertEqual(list(constants.broadcast_base(
            base.expand(3, 8)).shape), [1, 8])
        table = torch.randn(4, 8)
        self.assertEqual(list(constants.broadcast_base(table).shape), [4, 8])

    def test_arange_and_uniform(self):
        self.assertEqual(constants.arange_of(torch.arange(3, 15, 4)), (3, 4))
        self.assertIsNone(constants.arange_of(torch.tensor([0, 1, 3])))
        self.assertIsNone(constants.arange_of(torch.arange(4.0)))
        self.assertEqual(constants.uniform_value(torch.full((2, 3), 7)), 7)
        self.assertIsNone(constants.uniform_value(
            torch.full((2,), float("-inf"))))

    def test_causal_mask(self):
        mask = torch.ones(5, 5, dtype=torch.bool).tril()
        self.assertTrue(constants.is_causal_mask(mask.expand(2, 1, 5, 5)))
        self.assertFalse(constants.is_causal_mask(mask.T))


def run_plan(result, inputs):
    """The plan's ops run with PyTorch, by name (a reference interpreter of
    the subset the tests below produce)."""
    values = dict(result.weights)
    values.update(inputs)
    for op in result.plan["model"]["ops"]:
        x = [values[name] for name in op["inputs"]]
        kind = op["op"]
        if kind in ("add", "sub", "mul", "div"):
            fn = getattr(torch, kind)
            out = fn(x[0], x[1] if len(x) > 1 else op["scalar"])
        elif kind == "full":
            out = torch.full(op["shape"], op["value"])
        elif kind == "arange":
            out = torch.arange(op["start"], op["end"], op["step"])
        elif kind == "expand":
            out = x[0].expand(op["shape"])
        elif kind == "reshape":
            out = x[0].reshape(op["shape"])
        elif kind == "unsqueeze":
            out = x[0].unsqueeze(op["dim"])
        elif kind == "embedding":
            out = torch.nn.functional.embedding(x[0], x[1])
        elif kind == "pow":
            out = torch.pow(x[0], op["exponent"])
        elif kind in ("rsqrt", "sigmoid", "cos", "sin", "exp", "neg"):
            out = getattr(torch, kind)(x[0])
        elif kind == "mean":
            out = x[0].mean(op["dim"], keepdim=op.get("keepdim", False))
        elif kind == "rms_norm":
            out = torch.nn.functional.rms_norm(x[0], op["normalized_shape"],
                                               x[1], op["eps"])
        elif kind == "linear":
            out = torch.nn.functional.linear(*x)
        elif kind == "cast":
            out = x[0].to({"f32": torch.float32, "i64": torch.int64,
                           "i32": torch.int32}[op["dtype"]])
        else:
            raise AssertionError(f"the test interpreter lacks {kind}")
        values[op["output"]] = out
    return {name: values[name] for name in result.plan["model"]["outputs"]}


class Positions(torch.nn.Module):
    """Position ids from arange (rebuilt as an op), a table computed from a
    buffer (a constant parameter), an rms norm from parts."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Embedding(16, 8)
        self.register_buffer("freq", torch.linspace(0.1, 1.0, 8),
                             persistent=False)
        self.weight = torch.nn.Parameter(torch.randn(8))

    def forward(self, x):
        positions = torch.arange(x.shape[1]).unsqueeze(0).expand(
            x.shape[0], -1)
        h = x + self.table(positions)
        angle = torch.arange(x.shape[1]).float()[:, None] * self.freq
        h = h * torch.cos(angle)
        scale = torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return {"hidden": self.weight * (h * scale)}


class LoweringTest(unittest.TestCase):
    def test_positions(self):
        torch.manual_seed(0)
        module = Positions()
        x = torch.randn(3, 5, 8)
        result = export(module, (x,))
        kinds = [op["op"] for op in result.plan["model"]["ops"]]
        self.assertIn("arange", kinds)
        self.assertIn("expand", kinds)
        self.assertEqual(result.plan["model"]["outputs"], ["hidden"])
        names = [p["name"] for p in result.plan["model"]["parameters"]]
        self.assertIn("table.weight", names)
        self.assertIn("weight", names)
        self.assertTrue(any(n.startswith("_constants.") for n in names))
        self.assertIn("rms_norm", kinds)  # the composite, recognised
        got = run_plan(result, {"x": x})["hidden"]
        torch.testing.assert_close(got, module(x)["hidden"])
        # From its parts, the same values.
        parts = export(module, (x,), recognize_composites=False)
        kinds = [op["op"] for op in parts.plan["model"]["ops"]]
        self.assertNotIn("rms_norm", kinds)
        self.assertIn("rsqrt", kinds)
        got = run_plan(parts, {"x": x})["hidden"]
        torch.testing.assert_close(got, module(x)["hidden"])

    def test_composite_needs_single_uses(self):
        class Shared(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.randn(8))

            def forward(self, x):
                normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True)
                                         + 1e-6)
                return self.weight * normed, normed

        x = torch.randn(2, 8)
        module = Shared()
        result = export(module, (x,))
        kinds = [op["op"] for op in result.plan["model"]["ops"]]
        self.assertNotIn("rms_norm", kinds)
        got = run_plan(result, {"x": x})
        for name, want in zip(result.plan["model"]["outputs"], module(x)):
            torch.testing.assert_close(got[name], want)

    def test_files_written_together(self):
        module = Positions()
        with tempfile.TemporaryDirectory() as folder:
            plan = os.path.join(folder, "p.json")
            weights = os.path.join(folder, "w.safetensors")
            export(module, (torch.randn(1, 4, 8),), plan_path=plan,
                   weights_path=weights)
            self.assertEqual(sorted(os.listdir(folder)),
                             ["p.json", "w.safetensors"])
            from safetensors.torch import load_file
            stored = load_file(weights)
            self.assertTrue(torch.equal(stored["table.weight"],
                                        module.table.weight))

    def test_training_dropout_refused(self):
        class Dropper(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.dropout(x, 0.5, training=True)

        with self.assertRaisesRegex(ExportError, "dropout"):
            export(Dropper(), (torch.randn(2, 2),))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes deterministic inputs (.npy) and weights (.safetensors) for a JSON
model plan (docs/model-plan.md), for dtensor-run and dtensor_testing.torch_model.

  python3 -m dtensor_testing.make_test_tensors model.json -d DIR [--seed N] [--int-range NAME=LO:HI]
      [--entry NAME]

Writes DIR/<input>.npy for every input, DIR/weights.safetensors with every
parameter, and prints the flags that pass them on, one line:

  --input x=DIR/x.npy ... --weights DIR/weights.safetensors

Values depend only on the seed and the tensor's name:
- integer tensors read as embedding ids: uniform in [0, V), V the rows of
  the table; read as cross_entropy targets: uniform in [0, C), C the
  classes; otherwise uniform in [0, 16) (--int-range NAME=LO:HI overrides);
- weights of layer_norm / rms_norm: 1 + 0.1 N(0, 1); other 1-D parameters
  (biases): 0.1 N(0, 1);
- a linear's weight[out, in]: N(0, 1) / sqrt(in), a matmul/bmm right-hand
  side [.., k, n]: N(0, 1) / sqrt(k), so activations keep unit scale and the
  largest logit stands clear of the next;
- everything else (float inputs, embedding tables): N(0, 1).
A plan with entries (model.entries) gets the inputs of --entry NAME (default:
the first entry), its dims' sizes written in; state is not written (it starts
at zero). Standard library and NumPy only; bf16 is rounded from f32 (nearest even).
"""

import argparse
import json
import math
import os
import re
import struct
import sys
import zlib

import numpy as np

NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32,
         "i64": np.int64, "bf16": np.float32}
SAFETENSORS = {"f32": "F32", "f16": "F16", "bf16": "BF16", "i32": "I32",
               "i64": "I64"}
# Ops through which an integer tensor keeps its meaning (ids stay ids).
SHAPE_OPS = {"reshape", "view", "transpose", "permute", "slice", "split",
             "concat", "cat", "unsqueeze", "squeeze", "expand",
             "repeat_interleave"}


def fail(message):
    sys.exit(f"make-test-tensors: {message}")


def broadcast(a, b):
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        out.append(max(x, y) if 1 in (x, y) else x)
    return out[::-1]


def infer_shapes(model):
    """name -> shape of every value (the shapes the importer computes)."""
    shapes = {t["name"]: list(t["shape"])
              for t in model["inputs"] + model.get("state", []) +
              model.get("parameters", [])}
    for op in model["ops"]:
        kind = op["op"]
        ins = [shapes[n] for n in op["inputs"]]
        x = ins[0] if ins else []
        rank = len(x)

        def dim(key, default=None):
            d = op.get(key, default)
            return d % rank if rank else 0

        if kind == "custom":
            # The declaration's shape rule: sizes, or [input name, dim].
            decl = next(c for c in model.get("custom_ops", [])
                        if c["name"] == op["custom_op"])
            names = [i["name"] for i in decl["inputs"]]
            out = [d if isinstance(d, int) else ins[names.index(d[0])][d[1]]
                   for d in decl["output"]["shape"]]
        elif kind == "linear":
            out = x[:-1] + [ins[1][0]]
        elif kind in ("matmul", "bmm"):
            out = x[:-1] + [ins[1][-1]]
        elif kind in ("add", "sub", "mul", "div"):
            out = x if len(ins) == 1 else broadcast(ins[0], ins[1])
        elif kind == "where":
            out = broadcast(broadcast(ins[0], ins[1]), ins[2])
        elif kind == "arange":
            start, end, step = op.get("start", 0), op["end"], op.get("step", 1)
            out = [max(0, math.ceil((end - start) / step))]
        elif kind in ("full", "zeros", "ones"):
            out = list(op["shape"])
        elif kind == "embedding":
            out = x + [ins[1][1]]
        elif kind == "index_select":
            out = list(x)
            out[dim("dim")] = ins[1][0]
        elif kind == "transpose":
            out = list(x)
            i, j = dim("dim0"), dim("dim1")
            out[i], out[j] = out[j], out[i]
        elif kind == "permute":
            out = [x[d % rank] for d in op["dims"]]
        elif kind in ("reshape", "view"):
            out = list(op["shape"])
            if -1 in out:
                known = 1
                for s in out:
                    known *= s if s != -1 else 1
                total = 1
                for s in x:
                    total *= s
                out[out.index(-1)] = total // known if known else 0
        elif kind == "unsqueeze":
            d = op["dim"]
            d = d + rank + 1 if d < 0 else d
            out = x[:d] + [1] + x[d:]
        elif kind == "squeeze":
            d = op.get("dim")
            dims = list(range(rank)) if d is None else (
                [d] if isinstance(d, int) else list(d))
            dims = {v % rank for v in dims} if rank else set()
            out = [s for i, s in enumerate(x) if not (i in dims and s == 1)]
        elif kind == "expand":
            shape = list(op["shape"])
            lead = len(shape) - rank
            out = [x[i - lead] if s == -1 else s for i, s in enumerate(shape)]
        elif kind == "repeat_interleave":
            out = list(x)
            out[dim("dim")] *= op["repeats"]
        elif kind in ("concat", "cat"):
            d = dim("dim", 0)
            out = list(x)
            out[d] = sum(s[d] for s in ins)
        elif kind == "split":
            d = dim("dim", 0)
            size = op["split_size_or_sections"]
            names = op.get("outputs", [op.get("output")])
            if isinstance(size, int):
                sizes = [min(size, x[d] - i * size) for i in range(len(names))]
            else:
                sizes = size
            for name, s in zip(names, sizes):
                shapes[name] = x[:d] + [s] + x[d + 1:]
            continue
        elif kind == "slice":
            d = dim("dim", 0)
            out = list(x)
            out[d] = len(range(*slice(op.get("start", 0), op.get("end"),
                                      op.get("step", 1)).indices(x[d])))
        elif kind == "scaled_dot_product_attention":
            out = x[:-1] + [ins[2][-1]]
        elif kind in ("sum", "mean", "max", "argmax"):
            d = op.get("dim")
            dims = list(range(rank)) if d is None else (
                [d] if isinstance(d, int) else list(d))
            dims = {v % rank for v in dims} if rank else set()
            if op.get("keepdim", False):
                out = [1 if i in dims else s for i, s in enumerate(x)]
            else:
                out = [s for i, s in enumerate(x) if i not in dims]
        elif kind == "cross_entropy":
            out = [x[0]] if op.get("reduction", "mean") == "none" else []
        else:  # elementwise, softmax, norms, rotary, cache_write
            out = list(x)
        shapes[op.get("output") or op["outputs"][0]] = out
    return shapes


def integer_ranges(model, shapes):
    """name -> (lo, hi) for integer inputs and parameters that are read as
    embedding ids or cross_entropy targets, directly or through reshapes."""
    readers = {}
    for op in model["ops"]:
        for i, name in enumerate(op["inputs"]):
            readers.setdefault(name, []).append((op, i))

    def find(name, seen):
        for op, i in readers.get(name, []):
            if op["op"] == "embedding" and i == 0:
                return (0, shapes[op["inputs"][1]][0])
            if op["op"] == "cross_entropy" and i == 1:
                return (0, shapes[op["inputs"][0]][-1])
            if op["op"] in SHAPE_OPS:
                for out in op.get("outputs", [op.get("output")]):
                    if out not in seen:
                        seen.add(out)
                        found = find(out, seen)
                        if found:
                            return found
        return None

    ranges = {}
    for t in model["inputs"] + model.get("parameters", []):
        if t["dtype"] in ("i32", "i64"):
            ranges[t["name"]] = find(t["name"], {t["name"]}) or (0, 16)
    return ranges


def float_scales(model):
    """name -> (mean, std) of float parameters by how the model reads them."""
    scales = {}
    params = {t["name"]: t["shape"] for t in model.get("parameters", [])}
    for op in model["ops"]:
        for i, name in enumerate(op["inputs"]):
            if name not in params or name in scales:
                continue
            shape = params[name]
            kind = op["op"]
            if kind in ("layer_norm", "rms_norm") and i == 1:
                scales[name] = (1.0, 0.1)
            elif len(shape) <= 1:
                scales[name] = (0.0, 0.1)
            elif kind == "linear" and i == 1:
                scales[name] = (0.0, 1.0 / max(shape[-1], 1) ** 0.5)
            elif kind in ("matmul", "bmm") and i == 1:
                scales[name] = (0.0, 1.0 / max(shape[-2], 1) ** 0.5)
    return scales


def generator(seed, name):
    return np.random.RandomState((seed * 1000003 + zlib.crc32(name.encode()))
                                 % 2**32)


def make_tensor(seed, decl, ranges, scales):
    name, shape, dtype = decl["name"], decl["shape"], decl["dtype"]
    rng = generator(seed, name)
    if dtype in ("i32", "i64"):
        lo, hi = ranges.get(name, (0, 16))
        return rng.randint(lo, max(hi, lo + 1), size=shape).astype(NUMPY[dtype])
    mean, std = scales.get(name, (0.0, 1.0))
    return (mean + std * rng.standard_normal(size=shape)).astype(NUMPY[dtype])


def bf16_bytes(array):
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


def write_safetensors(path, tensors):
    """tensors: list of (name, dtype name, numpy array)."""
    header, blobs, offset = {}, [], 0
    for name, dtype, array in tensors:
        data = (bf16_bytes(array) if dtype == "bf16" else
                np.ascontiguousarray(array).astype(
                    np.dtype(NUMPY[dtype]).newbyteorder("<")).tobytes())
        header[name] = {"dtype": SAFETENSORS[dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def specialize(model, entry_name):
    """The model of one of its entries: every dim name in a `shape` array
    replaced by the entry's size."""
    entries = model.get("entries")
    if not entries:
        if entry_name:
            fail(f"--entry {entry_name}: the plan lists no entries")
        return model
    entry = next((e for e in entries if e["name"] == entry_name), None) \
        if entry_name else entries[0]
    if entry is None:
        fail(f"--entry {entry_name}: no such entry (the plan has: "
             + ", ".join(e["name"] for e in entries) + ")")
    sizes = entry.get("dims", {})

    def walk(value):
        if isinstance(value, dict):
            return {k: ([sizes.get(v, v) if isinstance(v, str) else v
                         for v in w] if k == "shape" and isinstance(w, list)
                        else walk(w)) for k, w in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value
    return walk(model)


def file_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("plan")
    p.add_argument("-d", "--dir", required=True, help="directory to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--entry", help="the entry whose inputs to write (a plan "
                   "with model.entries; default its first)")
    p.add_argument("--int-range", action="append", default=[],
                   metavar="NAME=LO:HI")
    a = p.parse_args(argv)
    with open(a.plan) as f:
        model = specialize(json.load(f)["model"], a.entry)
    shapes = infer_shapes(model)
    ranges = integer_ranges(model, shapes)
    for spec in a.int_range:
        name, _, bounds = spec.partition("=")
        try:
            lo, hi = (int(v) for v in bounds.split(":"))
        except ValueError:
            fail(f"--int-range {spec}: expected NAME=LO:HI")
        ranges[name] = (lo, hi)
    scales = float_scales(model)
    os.makedirs(a.dir, exist_ok=True)
    flags = []
    for decl in model["inputs"]:
        if decl["dtype"] == "bf16":
            fail(f"input '{decl['name']}' is bf16, which .npy cannot hold")
        path = os.path.join(a.dir, file_name(decl["name"]) + ".npy")
        np.save(path, make_tensor(a.seed, decl, ranges, scales))
        flags.append(f"--input {decl['name']}={path}")
    params = model.get("parameters", [])
    if params:
        path = os.path.join(a.dir, "weights.safetensors")
        write_safetensors(path, [(d["name"], d["dtype"],
                                  make_tensor(a.seed, d, ranges, scales))
                                 for d in params])
        flags.append(f"--weights {path}")
    print(" ".join(flags))


if __name__ == "__main__":
    main()

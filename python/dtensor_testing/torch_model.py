#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs a JSON model plan (docs/model-plan.md) in PyTorch eager mode on one
device: the reference the compiled programs are checked against.

  python3 -m dtensor_testing.torch_model model.json [--input NAME=FILE.npy ...] [--weights W.safetensors]
      [--output NAME=FILE.npy ...] [--threads N]

Every input must be given, and every parameter but those whose `init` is
zeros, ones or a constant (the random initializers of dtensor-run are not
reproduced: give such parameters with --weights). Outputs not written to a file are
summarised (shape, dtype, min, max, mean). An input declared bf16 may come
as an f32 .npy file (NumPy has no bf16) and is rounded to bf16; a bf16
output is written as f32.

As a library:

  import torch_model
  plan = torch_model.load_plan("model.json")
  outputs = torch_model.run_plan(plan, {"x": x, "fc1.weight": w1, ...})

The plan's `plan` member (how to parallelize) does not change the values and
is ignored: this is the single-device semantics every parallel run must
reproduce. Each op kind is one function of OPS, named after the torch
function it follows.
"""

import argparse
import json
import math
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

# torch.nn.functional.scaled_dot_product_attention with enable_gqa (torch
# >= 2.5; Debian's python3-torch is older).
HAS_GQA_SDPA = "enable_gqa" in (
    getattr(getattr(F, "scaled_dot_product_attention", None), "__doc__", None)
    or "")

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "i32": torch.int32, "i64": torch.int64,
          # Not a dtype of model plans: what the gradient checks run the
          # reference in (check_gradients.py).
          "f64": torch.float64}
HALF = (torch.float16, torch.bfloat16)


class PlanError(Exception):
    """A plan or tensor this interpreter cannot run, with the place."""


class Attrs:
    """An op's attributes; every key must be one the op kind defines."""

    def __init__(self, op, where, known):
        self.op = op
        self.where = where
        self.dtype = None  # the declared dtype of the op's first input
        unknown = sorted(set(op) - {"op", "inputs", "output", "outputs",
                                    "module"} - set(known))
        if unknown:
            raise PlanError(f"{where}: unknown attribute(s) "
                            f"{', '.join(unknown)} for '{op['op']}'")

    def get(self, key, default=None):
        return self.op.get(key, default)

    def has(self, key):
        return key in self.op

    def require(self, key):
        if key not in self.op:
            raise PlanError(f"{self.where}: '{self.op['op']}' needs '{key}'")
        return self.op[key]


class OpKind:
    def __init__(self, fn, attrs, inputs, float_compute, multi):
        self.fn = fn
        self.attrs = attrs
        self.inputs = inputs  # (min, max); max None: any number
        self.float_compute = float_compute
        self.multi = multi


OPS = {}


def op(*kinds, attrs=(), inputs=(1, 1), float_compute=True, multi=False):
    """Registers an op function. float_compute: f16/bf16 inputs are computed
    in f32 and the result rounded back (docs/model-plan.md, Ops)."""
    def register(fn):
        for kind in kinds:
            OPS[kind] = OpKind(fn, attrs, inputs, float_compute, multi)
        return fn
    return register


def norm_dim(dim, rank):
    if not -rank <= dim < max(rank, 1):
        raise PlanError(f"dim {dim} out of range for rank {rank}")
    return dim % rank if rank else 0


# --- ops ---------------------------------------------------------------------

@op("linear", inputs=(2, 3))
def linear(ins, a):
    return F.linear(*ins)


@op("matmul", inputs=(2, 2))
def matmul(ins, a):
    return torch.matmul(ins[0], ins[1])


@op("bmm", inputs=(2, 2))
def bmm(ins, a):
    return torch.bmm(ins[0], ins[1])


BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
          "div": torch.div}


@op("add", "sub", "mul", "div", attrs=("scalar",), inputs=(1, 2))
def binary(ins, a):
    fn = BINARY[a.op["op"]]
    if a.has("scalar"):
        if len(ins) != 1:
            raise PlanError(f"{a.where}: with 'scalar' the op takes one input")
        lhs, rhs = ins[0], a.get("scalar")
    else:
        if len(ins) != 2:
            raise PlanError(f"{a.where}: expected two inputs (or 'scalar')")
        lhs, rhs = ins
        if lhs.dtype != rhs.dtype:
            raise PlanError(f"{a.where}: dtypes differ: {lhs.dtype}, {rhs.dtype}")
    # No type promotion: torch's true division of integers gives floats, an
    # integer tensor and a fractional scalar too; both are errors.
    if not lhs.is_floating_point():
        if fn is torch.div:
            raise PlanError(f"{a.where}: div needs a floating-point tensor")
        if a.has("scalar") and float(rhs) != int(rhs):
            raise PlanError(f"{a.where}: 'scalar' must be an integer for "
                            f"{lhs.dtype}")
    return fn(lhs, rhs).to(lhs.dtype)


@op("neg")
def neg(ins, a):
    return torch.neg(ins[0])


@op("exp")
def exp(ins, a):
    return torch.exp(ins[0])


@op("tanh")
def tanh(ins, a):
    return torch.tanh(ins[0])


@op("sqrt")
def sqrt(ins, a):
    return torch.sqrt(ins[0])


@op("rsqrt")
def rsqrt(ins, a):
    return torch.rsqrt(ins[0])


@op("sigmoid")
def sigmoid(ins, a):
    return torch.sigmoid(ins[0])


@op("cos")
def cos(ins, a):
    return torch.cos(ins[0])


@op("sin")
def sin(ins, a):
    return torch.sin(ins[0])


@op("pow", attrs=("exponent",))
def pow_(ins, a):
    if not ins[0].is_floating_point():
        raise PlanError(f"{a.where}: pow needs a floating-point tensor")
    return torch.pow(ins[0], a.require("exponent"))


@op("relu")
def relu(ins, a):
    return F.relu(ins[0])


@op("silu")
def silu(ins, a):
    return F.silu(ins[0])


@op("gelu", attrs=("approximate",))
def gelu(ins, a):
    approximate = a.get("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise PlanError(f"{a.where}: approximate must be 'none' or 'tanh'")
    return F.gelu(ins[0], approximate=approximate)


@op("cast", "to", attrs=("dtype",), float_compute=False)
def cast(ins, a):
    return ins[0].to(DTYPES[a.require("dtype")])


@op("where", inputs=(3, 3), float_compute=False)
def where(ins, a):
    # No bool dtype: a condition is true where it is nonzero.
    cond, x, y = ins
    if x.dtype != y.dtype:
        raise PlanError(f"{a.where}: dtypes differ: {x.dtype}, {y.dtype}")
    return torch.where(cond != 0, x, y)


@op("masked_fill", attrs=("value",), inputs=(2, 2), float_compute=False)
def masked_fill(ins, a):
    x, mask = ins
    value = a.require("value")
    if not x.is_floating_point() and float(value) != int(value):
        raise PlanError(f"{a.where}: 'value' must be an integer for {x.dtype}")
    if torch.broadcast_shapes(mask.shape, x.shape) != x.shape:
        raise PlanError(f"{a.where}: the mask does not broadcast to x")
    return x.masked_fill(mask != 0, value)


@op("arange", attrs=("start", "end", "step", "dtype"), inputs=(0, 0),
    float_compute=False)
def arange(ins, a):
    start, end, step = a.get("start", 0), a.require("end"), a.get("step", 1)
    integers = all(isinstance(v, int) for v in (start, end, step))
    dtype = a.get("dtype", "i64" if integers else "f32")
    return torch.arange(start, end, step, dtype=DTYPES[dtype])


@op("full", "zeros", "ones", attrs=("shape", "value", "dtype"), inputs=(0, 0),
    float_compute=False)
def full(ins, a):
    kind = a.op["op"]
    if kind == "full":
        value = a.require("value")
    elif a.has("value"):
        raise PlanError(f"{a.where}: '{kind}' takes no 'value'")
    else:
        value = 0 if kind == "zeros" else 1
    dtype = DTYPES[a.get("dtype", "f32")]
    if not dtype.is_floating_point and float(value) != int(value):
        raise PlanError(f"{a.where}: 'value' must be an integer for {dtype}")
    return torch.full(a.require("shape"), value, dtype=dtype)


# Random ops draw from PyTorch's own generator, not dtensor's: their values
# agree with a compiled program's only where they do not depend on the
# draws (dropout with p 0 or not training, bernoulli with p 0 or 1, draws
# multiplied by 0), which is how test/Frontend/e2e/op-zoo.json uses them.
@op("rand", "randn", attrs=("shape", "dtype"), inputs=(0, 0),
    float_compute=False)
def rand(ins, a):
    dtype = DTYPES[a.get("dtype", "f32")]
    draw = torch.rand if a.op["op"] == "rand" else torch.randn
    return draw(a.require("shape"), dtype=torch.float32).to(dtype)


@op("rand_like", attrs=("dtype",), float_compute=False)
def rand_like(ins, a):
    dtype = DTYPES[a.get("dtype")] if a.has("dtype") else ins[0].dtype
    return torch.rand(ins[0].shape, dtype=torch.float32).to(dtype)


@op("dropout", attrs=("p", "training"))
def dropout(ins, a):
    return F.dropout(ins[0], p=a.get("p", 0.5), training=a.get("training", True))


@op("bernoulli", attrs=("p",), float_compute=False)
def bernoulli(ins, a):
    if a.has("p"):
        return torch.bernoulli(ins[0], a.get("p"))
    return torch.bernoulli(ins[0].float().clamp(0, 1)).to(ins[0].dtype)


@op("softmax", attrs=("dim",))
def softmax(ins, a):
    return F.softmax(ins[0], dim=a.get("dim", -1))


@op("log_softmax", attrs=("dim",))
def log_softmax(ins, a):
    return F.log_softmax(ins[0], dim=a.get("dim", -1))


def normalized_shape(x, a):
    shape = a.get("normalized_shape", [x.shape[-1]] if x.dim() else [])
    return [shape] if isinstance(shape, int) else list(shape)


@op("layer_norm", attrs=("normalized_shape", "eps"), inputs=(1, 3))
def layer_norm(ins, a):
    x = ins[0]
    weight = ins[1] if len(ins) > 1 else None
    bias = ins[2] if len(ins) > 2 else None
    return F.layer_norm(x, normalized_shape(x, a), weight, bias,
                        a.get("eps", 1e-5))


@op("rms_norm", attrs=("normalized_shape", "eps"), inputs=(1, 2))
def rms_norm(ins, a):
    # torch.nn.functional.rms_norm (torch >= 2.4):
    #   x * rsqrt(mean(x^2 over the normalized dims) + eps) * weight,
    # eps defaulting to the machine epsilon of x's dtype.
    x = ins[0]
    shape = normalized_shape(x, a)
    eps = a.get("eps", torch.finfo(a.dtype).eps)
    dims = list(range(x.dim() - len(shape), x.dim()))
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    if a.dtype in HALF:
        y = y.to(a.dtype).float()  # rounded before the weight, as PyTorch
    return y * ins[1] if len(ins) > 1 else y


@op("embedding", inputs=(2, 2), float_compute=False)
def embedding(ins, a):
    ids, table = ins
    if ids.is_floating_point():
        raise PlanError(f"{a.where}: ids must be i32 or i64")
    vocab = table.shape[0]
    # F.embedding, except that an id outside [0, V) gives a row of zeros.
    valid = (ids >= 0) & (ids < vocab)
    if vocab == 0:
        return table.new_zeros(list(ids.shape) + [table.shape[1]])
    rows = F.embedding(torch.where(valid, ids, torch.zeros_like(ids)).long(),
                       table)
    return rows * valid.unsqueeze(-1).to(table.dtype)


@op("index_select", attrs=("dim",), inputs=(2, 2), float_compute=False)
def index_select(ins, a):
    x, index = ins
    if index.is_floating_point() or index.dim() != 1:
        raise PlanError(f"{a.where}: index must be a 1-D i32 or i64 tensor")
    dim = norm_dim(a.require("dim"), x.dim())
    size = x.shape[dim]
    # torch.index_select, except that an index outside [0, size) gives a
    # slice of zeros (PyTorch raises).
    valid = (index >= 0) & (index < size)
    if size == 0:
        shape = list(x.shape)
        shape[dim] = index.shape[0]
        return x.new_zeros(shape)
    picked = torch.index_select(x, dim, index.clamp(0, size - 1).long())
    view = [1] * x.dim()
    view[dim] = -1
    return torch.where(valid.view(view), picked, torch.zeros_like(picked))
@op("cache_write", inputs=(4, 4), float_compute=False)
def cache_write(ins, a):
    cache, values, slots, positions = ins
    if slots.is_floating_point() or positions.is_floating_point():
        raise PlanError(f"{a.where}: slots and positions must be i32 or i64")
    # cache[slots[b], positions[b] + t] = values[b, t]; a row outside the
    # cache is skipped, and a later row wins where rows overlap.
    out = cache.clone()
    slot_count, length = cache.shape[0], cache.shape[1]
    rows = values.shape[1]
    for b in range(values.shape[0]):
        s, p = int(slots[b]), int(positions[b])
        if 0 <= s < slot_count and 0 <= p and p + rows <= length:
            out[s, p:p + rows] = values[b]
    return out


@op("transpose", attrs=("dim0", "dim1"), float_compute=False)
def transpose(ins, a):
    return ins[0].transpose(a.require("dim0"), a.require("dim1"))


@op("permute", attrs=("dims",), float_compute=False)
def permute(ins, a):
    return ins[0].permute(*a.require("dims"))


@op("reshape", "view", attrs=("shape",), float_compute=False)
def reshape(ins, a):
    return ins[0].reshape(a.require("shape"))


@op("unsqueeze", attrs=("dim",), float_compute=False)
def unsqueeze(ins, a):
    return torch.unsqueeze(ins[0], a.require("dim"))


@op("squeeze", attrs=("dim",), float_compute=False)
def squeeze(ins, a):
    x, dim = ins[0], a.get("dim")
    if dim is None:
        return x.squeeze()
    # One dim at a time, the last first (torch < 2.0 takes no tuple).
    dims = dim if isinstance(dim, list) else [dim]
    for d in sorted({norm_dim(d, x.dim()) for d in dims}, reverse=True):
        x = x.squeeze(d)
    return x


@op("expand", attrs=("shape",), float_compute=False)
def expand(ins, a):
    return ins[0].expand(*a.require("shape"))


@op("repeat_interleave", attrs=("repeats", "dim"), float_compute=False)
def repeat_interleave(ins, a):
    return torch.repeat_interleave(ins[0], a.require("repeats"),
                                   dim=a.require("dim"))


@op("concat", "cat", attrs=("dim",), inputs=(1, None), float_compute=False)
def concat(ins, a):
    return torch.cat(ins, dim=a.get("dim", 0))


@op("split", attrs=("split_size_or_sections", "dim"), float_compute=False,
    multi=True)
def split(ins, a):
    return list(torch.split(ins[0], a.require("split_size_or_sections"),
                            dim=a.get("dim", 0)))


@op("slice", attrs=("dim", "start", "end", "step"), float_compute=False)
def slice_(ins, a):
    x = ins[0]
    dim = norm_dim(a.get("dim", 0), x.dim())
    step = a.get("step", 1)
    if step < 1:
        raise PlanError(f"{a.where}: step must be >= 1")
    index = [slice(None)] * x.dim()
    index[dim] = slice(a.get("start", 0), a.get("end", None), step)
    return x[tuple(index)]


@op("rotary", attrs=("theta", "seq_dim", "position_offset"), inputs=(1, 2))
def rotary(ins, a):
    # Rotary position embedding, rotate_half convention (GPT-NeoX, Hugging
    # Face Llama): x * cos + rotate_half(x) * sin, with the frequencies
    # theta^(-2i/D) of positions position_offset + 0 .. S-1 along seq_dim,
    # or of the positions input: [B] (each row's first position) or
    # x.shape[0 .. seq_dim] (each token's, size-1 dims broadcast).
    x = ins[0]
    rank = x.dim()
    seq_dim = norm_dim(a.get("seq_dim", -3), rank)
    if seq_dim == rank - 1:
        raise PlanError(f"{a.where}: seq_dim must not be the last dim")
    d = x.shape[-1]
    if d % 2:
        raise PlanError(f"{a.where}: the last dim ({d}) must be even")
    theta = float(a.get("theta", 10000.0))
    offset = a.get("position_offset", 0)
    seq = x.shape[seq_dim]
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    if len(ins) > 1:
        if a.has("position_offset"):
            raise PlanError(f"{a.where}: position_offset and a positions input")
        given = ins[1].long()
        steps = torch.arange(seq)
        if seq_dim > 0 and given.dim() == 1:
            # [B]: token s of row b at given[b] + s, as [B, 1, .., S].
            given = given.reshape([-1] + [1] * (seq_dim - 1) + [1]) + steps
        elif given.dim() != seq_dim + 1:
            raise PlanError(f"{a.where}: positions of shape {list(given.shape)}")
        pos = given.reshape(list(given.shape) + [1] * (rank - 2 - seq_dim))
        freqs = pos.float().unsqueeze(-1) * inv_freq
        emb = torch.cat([freqs, freqs], dim=-1)
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        rotated = torch.cat([-x2, x1], dim=-1)
        return x * emb.cos() + rotated * emb.sin()
    pos = torch.arange(offset, offset + seq, dtype=torch.float32)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)  # [S, D]
    view = [1] * rank
    view[seq_dim] = seq
    view[-1] = d
    cos = emb.cos().reshape(view)
    sin = emb.sin().reshape(view)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    rotated = torch.cat([-x2, x1], dim=-1)
    return x * cos + rotated * sin


@op("scaled_dot_product_attention",
    attrs=("is_causal", "scale", "enable_gqa", "query_positions"), inputs=(3, 4))
def scaled_dot_product_attention(ins, a):
    # torch.nn.functional.scaled_dot_product_attention (torch >= 2.0), by
    # its formula: softmax(q @ k^T * scale + mask) @ v. Grouped-query
    # attention (enable_gqa) by PyTorch's own function where it has it
    # (torch >= 2.5), else k and v repeat_interleave'd over the heads.
    # query_positions: the boolean mask key j <= positions[b] + i. A query
    # whose keys are all masked gives zeros (as PyTorch's function).
    q, k, v = ins[:3]
    mask = ins[3] if len(ins) > 3 else None
    is_causal = a.get("is_causal", False)
    if a.get("query_positions", False):
        if not is_causal or mask is None or mask.is_floating_point():
            raise PlanError(f"{a.where}: query_positions needs is_causal and "
                            "integer positions[B] as the fourth input")
        start = mask.long().reshape([-1] + [1] * (q.dim() - 1))
        rows = start + torch.arange(q.shape[-2]).unsqueeze(-1)
        mask = torch.arange(k.shape[-2]) <= rows  # [B, 1.., L, S]
        is_causal = False
    elif is_causal and mask is not None:
        raise PlanError(f"{a.where}: a mask and is_causal together")
    scale = a.get("scale", 1.0 / math.sqrt(q.shape[-1]))
    if a.get("enable_gqa", False):
        if q.dim() < 3 or k.shape[-3] == 0 or q.shape[-3] % k.shape[-3]:
            raise PlanError(f"{a.where}: enable_gqa needs query heads that "
                            "are a multiple of the key/value heads")
        if HAS_GQA_SDPA:
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=is_causal, scale=scale,
                enable_gqa=True)
        groups = q.shape[-3] // k.shape[-3]
        k = k.repeat_interleave(groups, dim=-3)
        v = v.repeat_interleave(groups, dim=-3)
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if is_causal:
        length, source = q.shape[-2], k.shape[-2]
        keep = torch.ones(length, source, dtype=torch.bool).tril(diagonal=0)
        scores = scores.masked_fill(~keep, float("-inf"))
    if mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, float("-inf"))
    elif mask is not None:
        scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    masked = torch.isneginf(scores).all(dim=-1, keepdim=True)
    weights = torch.where(masked, torch.zeros_like(weights), weights)
    return torch.matmul(weights, v)


def reduce_dims(x, a):
    dim = a.get("dim", None)
    if dim is None:
        return list(range(x.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


@op("sum", attrs=("dim", "keepdim"))
def sum_(ins, a):
    x = ins[0]
    dims = reduce_dims(x, a)
    if not dims:
        return x.clone() if x.is_floating_point() else x.long()
    # Integers sum into i64 (torch.sum's dtype for integer inputs).
    return torch.sum(x, dim=dims, keepdim=a.get("keepdim", False))


@op("mean", attrs=("dim", "keepdim"))
def mean(ins, a):
    x = ins[0]
    dims = reduce_dims(x, a)
    if not dims:
        return x.clone()
    return torch.mean(x, dim=dims, keepdim=a.get("keepdim", False))


@op("max", attrs=("dim", "keepdim"))
def max_(ins, a):
    x = ins[0]
    dims = reduce_dims(x, a)
    if not dims:
        return x.clone()
    return torch.amax(x, dim=dims, keepdim=a.get("keepdim", False))


@op("argmax", attrs=("dim", "keepdim"))
def argmax(ins, a):
    # torch.argmax: the first index of the maximum.
    return torch.argmax(ins[0], dim=a.require("dim"),
                        keepdim=a.get("keepdim", False))


@op("cross_entropy", attrs=("reduction", "ignore_index"), inputs=(2, 2))
def cross_entropy(ins, a):
    logits, target = ins
    if target.is_floating_point():
        raise PlanError(f"{a.where}: target must be i32 or i64")
    return F.cross_entropy(logits, target.long(),
                           reduction=a.get("reduction", "mean"),
                           ignore_index=a.get("ignore_index", -100))


# --- the interpreter -----------------------------------------------------------

def load_plan(path):
    with open(path) as f:
        plan = json.load(f)
    if plan.get("format") != "dtensor.model_plan" or plan.get("version") != 1:
        raise PlanError(f"{path}: not a dtensor.model_plan of version 1")
    return plan


def declarations(plan):
    """The model's inputs and parameters: name -> (shape, torch dtype)."""
    model = plan["model"]
    decls = {}
    for t in model["inputs"] + model.get("parameters", []):
        decls[t["name"]] = (list(t["shape"]), DTYPES[t["dtype"]])
    return decls


def run_op(op, values, where):
    """Runs one op on `values` (name -> tensor); returns its results."""
    kind = OPS.get(op["op"])
    if kind is None:
        raise PlanError(f"{where}: unknown op '{op['op']}'")
    attrs = Attrs(op, where, kind.attrs)
    names = op["inputs"]
    low, high = kind.inputs
    if len(names) < low or (high is not None and len(names) > high):
        raise PlanError(f"{where}: '{op['op']}' takes {low}"
                        f"{'' if high == low else ' to ' + str(high or 'any')}"
                        f" inputs, got {len(names)}")
    for name in names:
        if name not in values:
            raise PlanError(f"{where}: unknown tensor '{name}'")
    ins = [values[n] for n in names]
    attrs.dtype = ins[0].dtype if ins else None
    if kind.float_compute and any(t.dtype in HALF for t in ins):
        out_dtype = ins[0].dtype
        result = kind.fn([t.float() if t.dtype in HALF else t for t in ins],
                         attrs)
        if out_dtype in HALF and result.is_floating_point():
            result = result.to(out_dtype)
    else:
        result = kind.fn(ins, attrs)
    outputs = op.get("outputs", [op["output"]] if "output" in op else None)
    if outputs is None:
        raise PlanError(f"{where}: no 'output' or 'outputs'")
    results = result if kind.multi else [result]
    if len(results) != len(outputs):
        raise PlanError(f"{where}: '{op['op']}' gives {len(results)} values, "
                        f"{len(outputs)} outputs listed")
    return dict(zip(outputs, results))


def initial_value(name, init, shape, dtype):
    """A parameter's `init` (docs/model-plan.md). The random kinds are drawn
    by the runtime from its own streams, which this interpreter does not
    reproduce: such parameters must come from a weights file."""
    kind = init.get("kind")
    if kind in ("zeros", "ones", "constant"):
        value = {"zeros": 0, "ones": 1}.get(kind, init.get("value"))
        return torch.full(shape, value, dtype=dtype)
    raise PlanError(f"'{name}': init '{kind}' is random; give its values "
                    f"with --weights (make-test-tensors.py writes them)")


def run_plan(plan, tensors, return_all=False, grad=False):
    """Runs the model of `plan` on `tensors` (every input and parameter, by
    name, as torch tensors of the declared shape and dtype; a parameter with
    a zeros, ones or constant `init` may be left out). Returns the
    outputs as an ordered dict name -> tensor, or with return_all every
    value the model defines. With `grad`, autograd records the ops (the
    gradient checks differentiate the outputs)."""
    values = {}
    inits = {t["name"]: t["init"] for t in plan["model"].get("parameters", [])
             if "init" in t}
    for name, (shape, dtype) in declarations(plan).items():
        if name in tensors:
            t = tensors[name]
        elif name in inits:
            t = initial_value(name, inits[name], shape, dtype)
        else:
            raise PlanError(f"no value given for '{name}'")
        if list(t.shape) != shape or t.dtype != dtype:
            raise PlanError(f"'{name}': expected {shape} {dtype}, got "
                            f"{list(t.shape)} {t.dtype}")
        values[name] = t
    with torch.set_grad_enabled(grad):
        for i, op in enumerate(plan["model"]["ops"]):
            where = f"$.model.ops[{i}] ({op.get('op')})"
            for name, value in run_op(op, values, where).items():
                if name in values:
                    raise PlanError(f"{where}: '{name}' is defined twice")
                values[name] = value
    if return_all:
        return values
    return {name: values[name] for name in plan["model"]["outputs"]}


# --- files ---------------------------------------------------------------------

SAFETENSORS_DTYPES = {"F32": torch.float32, "F16": torch.float16,
                      "BF16": torch.bfloat16, "F64": torch.float64,
                      "I32": torch.int32, "I64": torch.int64,
                      "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool}


def load_safetensors(path):
    """name -> tensor of a .safetensors file: an 8-byte little-endian header
    length, a JSON header, then the raw little-endian data."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise PlanError(f"{path}: too short for a safetensors file")
    (length,) = struct.unpack("<Q", data[:8])
    if 8 + length > len(data):
        raise PlanError(f"{path}: header runs past the end of the file")
    header = json.loads(data[8:8 + length])
    body = memoryview(data)[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise PlanError(f"{path}: '{name}': unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        if end > len(body):
            raise PlanError(f"{path}: '{name}': data past the end of the file")
        shape = info["shape"]
        if begin == end:
            tensors[name] = torch.empty(shape, dtype=dtype)
        else:
            tensors[name] = torch.frombuffer(bytearray(body[begin:end]),
                                             dtype=dtype).reshape(shape)
    return tensors


def load_npy(path, dtype):
    array = np.load(path)
    t = torch.from_numpy(np.ascontiguousarray(array))
    if dtype == torch.bfloat16 and t.dtype == torch.float32:
        t = t.to(torch.bfloat16)
    return t


def save_npy(path, tensor):
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    np.save(path, tensor.contiguous().numpy())


def parse_pairs(pairs, flag):
    result = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise PlanError(f"{flag} {pair}: expected NAME=FILE")
        result[name] = path
    return result


def summary(t):
    if t.numel() == 0:
        return f"{list(t.shape)} {t.dtype}: empty"
    f = t.double()
    return (f"{list(t.shape)} {t.dtype}: min {f.min().item():.6g} "
            f"max {f.max().item():.6g} mean {f.mean().item():.6g}")


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("plan")
    p.add_argument("--input", action="append", default=[],
                   metavar="NAME=FILE.npy")
    p.add_argument("--weights", action="append", default=[],
                   metavar="FILE.safetensors")
    p.add_argument("--output", action="append", default=[],
                   metavar="NAME=FILE.npy")
    p.add_argument("--threads", type=int, help="torch intra-op threads")
    args = p.parse_args(argv)
    try:
        if args.threads:
            torch.set_num_threads(args.threads)
        plan = load_plan(args.plan)
        decls = declarations(plan)
        tensors = {}
        for path in args.weights:
            tensors.update(load_safetensors(path))
        for name, path in parse_pairs(args.input, "--input").items():
            if name not in decls:
                raise PlanError(f"--input {name}: the model has no such input")
            tensors[name] = load_npy(path, decls[name][1])
        outputs = run_plan(plan, tensors)
        files = parse_pairs(args.output, "--output")
        for name in files:
            if name not in outputs:
                raise PlanError(f"--output {name}: the model has no such output")
        for name, value in outputs.items():
            if name in files:
                save_npy(files[name], value)
            else:
                print(f"{name}: {summary(value)}")
    except PlanError as e:
        sys.exit(f"torch_model: {e}")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Values that do not depend on the model's inputs or weights (position
ids, rotary tables from buffers, masks built from shapes) are computed once
at export time; what the model then reads of them becomes the smallest
plan ops that rebuild it (`arange`, `full`, `expand`) or, failing that, a
constant parameter stored with the weights."""

import math

import torch

# Ops that only check metadata and produce nothing the model reads.
_ASSERTS = ("_assert_tensor_metadata", "_assert_scalar", "sym_constrain_range",
            "_assert_async", "sym_constrain_range_for_size")


def is_assert(node):
    name = getattr(node.target, "__name__", "")
    return any(name.startswith(a) for a in _ASSERTS)


def fold(node, env):
    """Computes `node` from the constant values in `env` (node -> value)."""
    def value(arg):
        if isinstance(arg, torch.fx.Node):
            return env[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(value(a) for a in arg)
        return arg

    args = [value(a) for a in node.args]
    kwargs = {k: value(v) for k, v in node.kwargs.items()}
    with torch.no_grad():
        return node.target(*args, **kwargs)


def is_constant_node(node, env):
    """A call whose tensor arguments are all constants (in `env`)."""
    if node.op != "call_function" or is_assert(node):
        return False
    found = True

    def visit(arg):
        nonlocal found
        if isinstance(arg, torch.fx.Node) and arg not in env:
            found = False
        elif isinstance(arg, (list, tuple)):
            for a in arg:
                visit(a)

    for a in list(node.args) + list(node.kwargs.values()):
        visit(a)
    return found


def broadcast_base(tensor):
    """The smallest tensor that expands to `tensor`: size 1 in every dim
    along which all slices are equal."""
    base = tensor
    for dim in range(tensor.dim()):
        if base.shape[dim] > 1:
            first = base.narrow(dim, 0, 1)
            if torch.equal(first.expand_as(base), base):
                base = first
    return base


def arange_of(flat):
    """(start, step) when the 1-D integer tensor `flat` is an arithmetic
    progression with at least two elements, else None."""
    if flat.numel() < 2 or flat.dtype not in (torch.int32, torch.int64):
        return None
    start = int(flat[0])
    step = int(flat[1]) - start
    if step == 0:
        return None
    expected = start + step * torch.arange(flat.numel(), dtype=flat.dtype)
    return (start, step) if torch.equal(expected, flat) else None


def uniform_value(tensor):
    """The value every element has, when finite and the same, else None."""
    if tensor.numel() == 0:
        return None
    first = tensor.reshape(-1)[0]
    if not torch.equal(tensor, first.expand_as(tensor)):
        return None
    value = first.item()
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def is_causal_mask(mask):
    """Whether the bool tensor `mask[..., L, S]` keeps exactly j <= i (the
    top-left aligned causal mask of scaled_dot_product_attention)."""
    if mask.dtype != torch.bool or mask.dim() < 2:
        return False
    rows, cols = mask.shape[-2], mask.shape[-1]
    causal = torch.ones(rows, cols, dtype=torch.bool).tril()
    return torch.equal(mask, causal.expand_as(mask))

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Composites recognised in an exported graph and lowered as one plan op,
where that op compiles to faster code than its parts. Only exact matches
are taken (every intermediate used once, f32 throughout); anything else is
lowered op by op and stays correct.

RMSNorm as Hugging Face writes it (Llama, Qwen2, Mistral, Qwen3):
    weight * (x * rsqrt(mean(x ** 2, -1, keepdim=True) + eps))
with `.to(float32)` casts that change nothing on f32 tensors. As one
`rms_norm` op the mean of squares and the scaling are one pass each instead
of five elementwise ops and a reduction."""

import torch

from .lowering import result_type

aten = torch.ops.aten
_CASTS = (aten.to.dtype, aten.to.dtype_layout, aten._to_copy.default)


def _is_f32(node):
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.float32


def _call(node, target):
    return isinstance(node, torch.fx.Node) and node.op == "call_function" \
        and node.target is target


def _strip_casts(node, chain):
    """`node` without f32 -> f32 casts in front of it; the casts passed are
    appended to `chain`."""
    while isinstance(node, torch.fx.Node) and node.op == "call_function" \
            and node.target in _CASTS and _is_f32(node) \
            and _is_f32(node.args[0]):
        chain.append(node)
        node = node.args[0]
    return node


def _single_use(nodes):
    """Each node read by one op (metadata assertions aside)."""
    from .constants import is_assert

    return all(sum(not is_assert(user) for user in node.users) == 1
               for node in nodes)


def _match_rms_norm(node, is_parameter):
    """(x, weight, eps, removed nodes) when `node` is the final product of
    an RMSNorm, else None."""
    if not _call(node, aten.mul.Tensor) or not _is_f32(node):
        return None
    for weight, scaled in (node.args, reversed(node.args)):
        if not (isinstance(weight, torch.fx.Node) and is_parameter(weight)):
            continue
        chain = []
        product = _strip_casts(scaled, chain)
        if not _call(product, aten.mul.Tensor):
            continue
        for x, root in (product.args, reversed(product.args)):
            if not _call(root, aten.rsqrt.default):
                continue
            shifted = root.args[0]
            if not _call(shifted, aten.add.Tensor) or \
                    not isinstance(shifted.args[1], float):
                continue
            mean = shifted.args[0]
            if not _call(mean, aten.mean.dim) or list(mean.args[1]) != [-1] \
                    or not (len(mean.args) > 2 and mean.args[2]):
                continue
            square = mean.args[0]
            if not _call(square, aten.pow.Tensor_Scalar) or \
                    square.args[1] != 2 or square.args[0] is not x:
                continue
            removed = chain + [product, root, shifted, mean, square]
            dim = x.meta["val"].shape[-1]
            if not _is_f32(x) or list(weight.meta["val"].shape) != [dim] \
                    or not _single_use(removed):
                continue
            return x, weight, shifted.args[1], removed
    return None


def find(graph, is_parameter):
    """{final node: (x, weight, eps)} of each RMSNorm, and the set of nodes
    the composites replace (lowered by none of their own)."""
    found, removed = {}, set()
    for node in graph.nodes:
        match = _match_rms_norm(node, is_parameter)
        if match is not None:
            x, weight, eps, parts = match
            found[node] = (x, weight, eps)
            removed.update(parts)
    return found, removed


def lower(builder, node, match):
    """The `rms_norm` op of a composite `find` returned for `node`."""
    x, weight, eps = match
    shape, dtype = result_type(node)
    return builder.emit("rms_norm", [builder.value(x, node),
                                     builder.value(weight, node)], node,
                        shape, dtype, normalized_shape=[shape[-1]], eps=eps)

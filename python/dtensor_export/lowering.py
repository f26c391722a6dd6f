# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ATen ops of an exported graph as model-plan ops, one function per op
family. Each takes the builder and the node and returns the plan value
(or values) of the node's result; shapes are the export's static ones."""

import operator

import torch

from .builder import describe, plan_dtype
from .errors import ExportError

aten = torch.ops.aten
LOWERINGS = {}


def lowers(*targets):
    def register(fn):
        for target in targets:
            LOWERINGS[target] = fn
        return fn
    return register


def result_type(node):
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor):
        raise ExportError(f"{describe(node)}: its result is not a tensor")
    return list(val.shape), plan_dtype(val.dtype, describe(node))


def arg(node, index, name, default=None):
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def emit_like(b, kind, inputs, node, **attrs):
    shape, dtype = result_type(node)
    return b.emit(kind, inputs, node, shape, dtype, **attrs)


def tensor_in(b, node, value, dtype=None):
    name = b.value(value, node)
    return b.cast(name, dtype, node) if dtype else name


# -- pass-through -----------------------------------------------------------

@lowers(aten.alias.default, aten.clone.default, aten.contiguous.default,
        aten.detach.default, aten.lift_fresh_copy.default,
        aten.dropout.default, aten.lift_fresh.default)
def lower_identity(b, node):
    if node.target is aten.dropout.default and arg(node, 2, "train", False):
        raise ExportError(f"{describe(node)}: dropout in training mode; "
                          "export the module in eval() mode")
    return b.value(node.args[0], node)


@lowers(aten.to.dtype, aten.to.dtype_layout, aten.to.device,
        aten._to_copy.default, aten.type_as.default)
def lower_to(b, node):
    _, dtype = result_type(node)
    return b.cast(b.value(node.args[0], node), dtype, node)


# -- elementwise ------------------------------------------------------------

def scalar_of(b, value):
    """A Python number for a number or a one-element constant, else None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if b.is_constant(value):
        tensor = b.constant(value)
        if isinstance(tensor, torch.Tensor) and tensor.numel() == 1:
            return tensor.item()
    return None


def lower_binary(b, node, kind, lhs, rhs):
    shape, dtype = result_type(node)
    lhs_scalar, rhs_scalar = scalar_of(b, lhs), scalar_of(b, rhs)
    # A one-element operand that does not widen the result is a scalar.
    if rhs_scalar is not None and isinstance(lhs, torch.fx.Node) and \
            list(lhs.meta["val"].shape) == shape:
        x = tensor_in(b, node, lhs, dtype)
        return b.emit(kind, [x], node, shape, dtype, scalar=rhs_scalar)
    if lhs_scalar is not None and isinstance(rhs, torch.fx.Node) and \
            list(rhs.meta["val"].shape) == shape and kind in ("add", "mul"):
        x = tensor_in(b, node, rhs, dtype)
        return b.emit(kind, [x], node, shape, dtype, scalar=lhs_scalar)
    if lhs_scalar is not None and not isinstance(lhs, torch.fx.Node):
        # scalar - x = -(x) + scalar; scalar / x = x^-1 * scalar
        x = tensor_in(b, node, rhs, dtype)
        if kind == "sub":
            neg = b.emit("neg", [x], node, shape, dtype, out_name=f"{node.name}_neg")
            return b.emit("add", [neg], node, shape, dtype, scalar=lhs_scalar)
        recip = b.emit("pow", [x], node, shape, dtype,
                       out_name=f"{node.name}_recip", exponent=-1)
        return b.emit("mul", [recip], node, shape, dtype, scalar=lhs_scalar)
    return b.emit(kind, [tensor_in(b, node, lhs, dtype),
                         tensor_in(b, node, rhs, dtype)], node, shape, dtype)


def _binary(kind):
    def lower(b, node):
        lhs, rhs = node.args[0], node.args[1]
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            if not isinstance(rhs, torch.fx.Node):
                rhs = rhs * alpha
            else:
                raise ExportError(f"{describe(node)}: alpha={alpha} with a "
                                  "tensor operand is not supported")
        return lower_binary(b, node, kind, lhs, rhs)
    return lower


for _kind, _targets in {
        "add": (aten.add.Tensor, aten.add.Scalar),
        "sub": (aten.sub.Tensor, aten.sub.Scalar),
        "mul": (aten.mul.Tensor, aten.mul.Scalar),
        "div": (aten.div.Tensor, aten.div.Scalar)}.items():
    lowers(*_targets)(_binary(_kind))


@lowers(aten.rsub.Scalar, aten.rsub.Tensor)
def lower_rsub(b, node):
    return lower_binary(b, node, "sub", node.args[1], node.args[0])


def _unary(kind, **attrs):
    def lower(b, node):
        _, dtype = result_type(node)
        return emit_like(b, kind, [tensor_in(b, node, node.args[0], dtype)],
                         node, **attrs)
    return lower


for _kind, _target in {
        "neg": aten.neg.default, "exp": aten.exp.default,
        "tanh": aten.tanh.default, "relu": aten.relu.default,
        "silu": aten.silu.default, "sigmoid": aten.sigmoid.default,
        "rsqrt": aten.rsqrt.default, "sqrt": aten.sqrt.default,
        "cos": aten.cos.default, "sin": aten.sin.default}.items():
    lowers(_target)(_unary(_kind))


@lowers(aten.gelu.default)
def lower_gelu(b, node):
    approximate = node.kwargs.get("approximate", "none")
    return _unary("gelu", approximate=approximate)(b, node)


@lowers(aten.pow.Tensor_Scalar)
def lower_pow(b, node):
    return _unary("pow", exponent=node.args[1])(b, node)


@lowers(aten.where.self)
def lower_where(b, node):
    _, dtype = result_type(node)
    cond = b.value(node.args[0], node)
    return emit_like(b, "where", [cond, tensor_in(b, node, node.args[1], dtype),
                                  tensor_in(b, node, node.args[2], dtype)],
                     node)


@lowers(aten.masked_fill.Scalar)
def lower_masked_fill(b, node):
    x = b.value(node.args[0], node)
    mask = b.value(node.args[1], node)
    return emit_like(b, "masked_fill", [x, mask], node, value=node.args[2])


# -- reductions and normalisation -------------------------------------------

def _dims(value):
    if value is None:
        return None
    return list(value) if isinstance(value, (list, tuple)) else value


@lowers(aten.mean.dim, aten.sum.dim_IntList, aten.amax.default)
def lower_reduce(b, node):
    kind = {aten.mean.dim: "mean", aten.sum.dim_IntList: "sum",
            aten.amax.default: "max"}[node.target]
    dims = _dims(arg(node, 1, "dim"))
    keepdim = bool(arg(node, 2, "keepdim", False))
    if node.kwargs.get("dtype") is not None:
        raise ExportError(f"{describe(node)}: a reduction with dtype= is not "
                          "supported")
    return emit_like(b, kind, [b.value(node.args[0], node)], node,
                     dim=dims if dims else None, keepdim=keepdim or None)


@lowers(aten.mean.default, aten.sum.default)
def lower_reduce_all(b, node):
    kind = "mean" if node.target is aten.mean.default else "sum"
    return emit_like(b, kind, [b.value(node.args[0], node)], node)


@lowers(aten.argmax.default)
def lower_argmax(b, node):
    dim = arg(node, 1, "dim")
    if dim is None:
        raise ExportError(f"{describe(node)}: argmax over all dims is not "
                          "supported; give dim")
    return emit_like(b, "argmax", [b.value(node.args[0], node)], node,
                     dim=dim, keepdim=bool(arg(node, 2, "keepdim")) or None)


@lowers(aten.softmax.int, aten._softmax.default, aten.log_softmax.int,
        aten._log_softmax.default)
def lower_softmax(b, node):
    kind = "log_softmax" if node.target in (
        aten.log_softmax.int, aten._log_softmax.default) else "softmax"
    _, dtype = result_type(node)
    return emit_like(b, kind, [tensor_in(b, node, node.args[0], dtype)], node,
                     dim=node.args[1])


@lowers(aten.layer_norm.default)
def lower_layer_norm(b, node):
    x = b.value(node.args[0], node)
    shape = list(arg(node, 1, "normalized_shape"))
    weight, bias = arg(node, 2, "weight"), arg(node, 3, "bias")
    eps = arg(node, 4, "eps", 1e-5)
    inputs = [x]
    if weight is not None or bias is not None:
        if weight is None:
            weight_name = b.emit("ones", [], node, shape, b.dtype(x),
                                 out_name=f"{node.name}_weight", shape=shape,
                                 dtype=b.dtype(x))
        else:
            weight_name = b.value(weight, node)
        inputs.append(weight_name)
    if bias is not None:
        inputs.append(b.value(bias, node))
    return emit_like(b, "layer_norm", inputs, node, normalized_shape=shape,
                     eps=eps)


@lowers(aten.rms_norm.default)
def lower_rms_norm(b, node):
    x = b.value(node.args[0], node)
    shape = list(arg(node, 1, "normalized_shape"))
    weight = arg(node, 2, "weight")
    eps = arg(node, 3, "eps")
    inputs = [x] + ([b.value(weight, node)] if weight is not None else [])
    return emit_like(b, "rms_norm", inputs, node, normalized_shape=shape,
                     eps=eps)


# -- matrix products --------------------------------------------------------

@lowers(aten.linear.default)
def lower_linear(b, node):
    inputs = [b.value(node.args[0], node), b.value(node.args[1], node)]
    bias = arg(node, 2, "bias")
    if bias is not None:
        inputs.append(b.value(bias, node))
    return emit_like(b, "linear", inputs, node)


@lowers(aten.matmul.default, aten.mm.default)
def lower_matmul(b, node):
    return emit_like(b, "matmul", [b.value(node.args[0], node),
                                   b.value(node.args[1], node)], node)


@lowers(aten.bmm.default)
def lower_bmm(b, node):
    return emit_like(b, "bmm", [b.value(node.args[0], node),
                                b.value(node.args[1], node)], node)


@lowers(aten.addmm.default)
def lower_addmm(b, node):
    # bias + m1 @ m2 (Hugging Face's Conv1D): a product, then the add.
    if node.kwargs.get("beta", 1) != 1 or node.kwargs.get("alpha", 1) != 1:
        raise ExportError(f"{describe(node)}: addmm with beta or alpha is "
                          "not supported")
    shape, dtype = result_type(node)
    product = b.emit("matmul", [b.value(node.args[1], node),
                                b.value(node.args[2], node)], node, shape,
                     dtype, out_name=f"{node.name}_mm")
    return b.emit("add", [product, b.value(node.args[0], node)], node, shape,
                  dtype)


@lowers(aten.scaled_dot_product_attention.default)
def lower_sdpa(b, node):
    from . import constants
    q, k, v = (b.value(node.args[i], node) for i in range(3))
    mask = arg(node, 3, "attn_mask")
    dropout = arg(node, 4, "dropout_p", 0.0)
    is_causal = bool(arg(node, 5, "is_causal", False))
    scale = node.kwargs.get("scale")
    gqa = bool(node.kwargs.get("enable_gqa", False))
    if dropout:
        raise ExportError(f"{describe(node)}: attention dropout "
                          f"{dropout}; export in eval() mode")
    inputs = [q, k, v]
    if mask is not None and b.is_constant(mask):
        value = b.constant(mask)
        if value.dtype == torch.bool and bool(value.all()):
            mask = None
        elif constants.is_causal_mask(value) and not is_causal:
            mask, is_causal = None, True
        elif value.dtype == torch.bool:
            # An additive mask: 0 where kept, -inf where masked.
            additive = torch.zeros(value.shape, dtype=node.meta["val"].dtype)
            additive.masked_fill_(~value, float("-inf"))
            b.constants[mask] = additive
    if mask is not None:
        if not b.is_constant(mask) and \
                mask.meta["val"].dtype == torch.bool:
            raise ExportError(f"{describe(node)}: a boolean attention mask "
                              "computed from the inputs is not supported "
                              "(the plan has no bool dtype)")
        inputs.append(b.value(mask, node))
    return emit_like(b, "scaled_dot_product_attention", inputs, node,
                     is_causal=is_causal or None, scale=scale,
                     enable_gqa=gqa or None)


# -- lookups ----------------------------------------------------------------

@lowers(aten.embedding.default)
def lower_embedding(b, node):
    # padding_idx, scale_grad_by_freq and sparse only change gradients.
    return emit_like(b, "embedding", [b.value(node.args[1], node),
                                      b.value(node.args[0], node)], node)


@lowers(aten.index_select.default)
def lower_index_select(b, node):
    return emit_like(b, "index_select", [b.value(node.args[0], node),
                                         b.value(node.args[2], node)], node,
                     dim=node.args[1])


# -- shapes -----------------------------------------------------------------

def _to_result_shape(kind):
    """`kind` (reshape, expand) to the node's static result shape; nothing
    when the input has it already."""
    def lower(b, node):
        shape, _ = result_type(node)
        x = b.value(node.args[0], node)
        if b.shape(x) == shape:
            return x
        return emit_like(b, kind, [x], node, shape=shape)
    return lower


lowers(aten.view.default, aten.reshape.default, aten._unsafe_view.default,
       aten.flatten.using_ints)(_to_result_shape("reshape"))
lowers(aten.expand.default)(_to_result_shape("expand"))


@lowers(aten.unsqueeze.default)
def lower_unsqueeze(b, node):
    return emit_like(b, "unsqueeze", [b.value(node.args[0], node)], node,
                     dim=node.args[1])


@lowers(aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
def lower_squeeze(b, node):
    dims = _dims(arg(node, 1, "dim"))
    return emit_like(b, "squeeze", [b.value(node.args[0], node)], node,
                     dim=dims)




@lowers(aten.transpose.int)
def lower_transpose(b, node):
    return emit_like(b, "transpose", [b.value(node.args[0], node)], node,
                     dim0=node.args[1], dim1=node.args[2])


@lowers(aten.t.default)
def lower_t(b, node):
    return emit_like(b, "transpose", [b.value(node.args[0], node)], node,
                     dim0=0, dim1=1)


@lowers(aten.permute.default)
def lower_permute(b, node):
    return emit_like(b, "permute", [b.value(node.args[0], node)], node,
                     dims=list(node.args[1]))


@lowers(aten.cat.default)
def lower_cat(b, node):
    _, dtype = result_type(node)
    inputs = [tensor_in(b, node, t, dtype) for t in node.args[0]
              if t.meta["val"].numel() > 0 or len(node.args[0]) == 1]
    return emit_like(b, "concat", inputs, node, dim=arg(node, 1, "dim", 0))


@lowers(aten.slice.Tensor)
def lower_slice(b, node):
    x = b.value(node.args[0], node)
    dim = arg(node, 1, "dim", 0)
    start = arg(node, 2, "start")
    end = arg(node, 3, "end")
    step = arg(node, 4, "step", 1)
    size = b.shape(x)[dim]
    if end is not None and end >= size:
        end = None
    if start in (None, 0) and end is None and step == 1:
        return x
    return emit_like(b, "slice", [x], node, dim=dim, start=start or None,
                     end=end, step=step if step != 1 else None)


@lowers(aten.select.int)
def lower_select(b, node):
    x = b.value(node.args[0], node)
    dim, index = node.args[1], node.args[2]
    size = b.shape(x)[dim]
    index = index + size if index < 0 else index
    shape = list(b.shape(x))
    shape[dim] = 1
    piece = b.emit("slice", [x], node, shape, b.dtype(x),
                   out_name=f"{node.name}_slice", dim=dim, start=index,
                   end=index + 1)
    return emit_like(b, "squeeze", [piece], node, dim=dim)


@lowers(aten.split.Tensor, aten.split_with_sizes.default)
def lower_split(b, node):
    x = b.value(node.args[0], node)
    sizes = node.args[1]
    dim = arg(node, 2, "dim", 0)
    outputs = []
    getitems = {user.args[1]: user for user in node.users
                if user.target is operator.getitem}
    for i, val in enumerate(node.meta["val"]):
        name = getitems[i].name if i in getitems else f"{node.name}_{i}"
        outputs.append((name, list(val.shape),
                        plan_dtype(val.dtype, describe(node))))
    return b.emit_split("split", [x], node, outputs,
                        split_size_or_sections=sizes if isinstance(sizes, int)
                        else list(sizes), dim=dim)


@lowers(operator.getitem)
def lower_getitem(b, node):
    source = node.args[0]
    if source not in b.names or not isinstance(b.names[source], list):
        raise ExportError(f"{describe(node)}: getitem of '{source.name}', "
                          "which is not a split")
    return b.names[source][node.args[1]]


@lowers(aten.repeat_interleave.self_int)
def lower_repeat_interleave(b, node):
    dim = arg(node, 2, "dim")
    if dim is None:
        raise ExportError(f"{describe(node)}: repeat_interleave without dim "
                          "(flattening) is not supported")
    return emit_like(b, "repeat_interleave", [b.value(node.args[0], node)],
                     node, repeats=node.args[1], dim=dim)

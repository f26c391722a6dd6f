# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The model plan under construction: values, ops, parameters, and the
constants folded at export time (constants.py) rebuilt where ops read them."""

import os
import traceback

import torch

from . import constants
from .errors import ExportError

DTYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int32: "i32",
    torch.int64: "i64",
}

_TORCH_DIR = os.path.dirname(torch.__file__)


def plan_dtype(dtype, where):
    if dtype not in DTYPES:
        raise ExportError(f"{where}: dtype {dtype} has no model-plan dtype "
                          "(f32, f16, bf16, i32, i64)")
    return DTYPES[dtype]


def source_line(node):
    """`file:line` of the innermost frame of the export's recorded stack
    that is not PyTorch's own code, or None."""
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    frames = [line.strip() for line in trace.splitlines()
              if line.strip().startswith("File ")]
    chosen = None
    for frame in frames:
        # File "path", line N, in fn
        try:
            path = frame.split('"')[1]
            line = frame.split(", line ")[1].split(",")[0]
        except IndexError:
            continue
        if not path.startswith(_TORCH_DIR):
            chosen = f"{path}:{line}"
    return chosen


def module_path(node):
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    return path or ""


def describe(node):
    """`aten.op in module 'm' (file:line)` for messages."""
    target = node.target
    name = getattr(target, "_schema", None)
    name = f"aten.{name.name.split('::')[-1]}" if name else getattr(
        target, "__name__", str(target))
    overload = getattr(target, "_overloadname", "")
    if overload and overload != "default":
        name += f".{overload}"
    text = f"{name} (node '{node.name}') in module '{module_path(node)}'"
    line = source_line(node)
    if line:
        text += f" at {line}"
    return text


class Builder:
    """Collects the plan. Values are named by the exported graph's nodes;
    parameters by the module's own parameter names."""

    def __init__(self):
        self.ops = []
        self.inputs = []
        self.parameters = []
        self.weights = {}
        self.names = {}       # fx node -> plan value name
        self.types = {}       # plan value name -> (shape, dtype)
        self.constants = {}   # fx node -> torch value (folded)
        self.param_nodes = {}  # placeholder node -> (fqn, tensor)
        self.materialized = {}  # fx node -> plan value name of the constant
        self.constant_parameters = {}  # (dtype, shape, bytes) -> name
        self.used = set()

    # -- values ---------------------------------------------------------
    def fresh(self, stem):
        name, i = stem, 1
        while name in self.used:
            name = f"{stem}_{i}"
            i += 1
        self.used.add(name)
        return name

    def define(self, name, shape, dtype):
        self.used.add(name)
        self.types[name] = (list(shape), dtype)

    def shape(self, name):
        return self.types[name][0]

    def dtype(self, name):
        return self.types[name][1]

    def is_constant(self, arg):
        return isinstance(arg, torch.fx.Node) and arg in self.constants

    def constant(self, arg):
        return self.constants[arg]

    def value(self, arg, reader):
        """The plan value of tensor argument `arg` of node `reader`."""
        if not isinstance(arg, torch.fx.Node):
            raise ExportError(f"{describe(reader)}: expected a tensor "
                              f"argument, got {arg!r}")
        if arg in self.names:
            return self.names[arg]
        if arg in self.param_nodes:
            return self._parameter(arg)
        if arg in self.constants:
            return self._materialize(arg, reader)
        raise ExportError(f"{describe(reader)}: reads '{arg.name}', which "
                          "the exporter did not translate")

    def _parameter(self, node):
        fqn, tensor = self.param_nodes[node]
        dtype = plan_dtype(tensor.dtype, f"parameter '{fqn}'")
        self.parameters.append({"name": fqn, "shape": list(tensor.shape),
                                "dtype": dtype})
        self.weights[fqn] = tensor.detach().contiguous()
        self.define(fqn, tensor.shape, dtype)
        self.names[node] = fqn
        return fqn

    # -- ops ------------------------------------------------------------
    def _append(self, op, node, attrs):
        """Adds `op` with `node`'s module and the attributes that are set."""
        module = module_path(node)
        if module:
            op["module"] = module
        op.update({k: v for k, v in attrs.items() if v is not None})
        self.ops.append(op)

    def emit(self, kind, inputs, node, shape, dtype, /, out_name=None,
             **attrs):
        """Appends op `kind`; returns its output's name."""
        output = self.fresh(out_name or node.name)
        self.define(output, shape, dtype)
        self._append({"op": kind, "inputs": list(inputs), "output": output},
                     node, attrs)
        return output

    def emit_split(self, kind, inputs, node, outputs, **attrs):
        """An op with several outputs: `outputs` is [(name, shape, dtype)]."""
        names = []
        for name, shape, dtype in outputs:
            names.append(self.fresh(name))
            self.define(names[-1], shape, dtype)
        self._append({"op": kind, "inputs": list(inputs), "outputs": names},
                     node, attrs)
        return names

    def cast(self, name, dtype, node):
        """`name` as `dtype` (a `cast` op unless it already is)."""
        if self.dtype(name) == dtype:
            return name
        return self.emit("cast", [name], node, self.shape(name), dtype,
                         out_name=f"{name}_{dtype}", dtype=dtype)

    # -- constants ------------------------------------------------------
    def _materialize(self, node, reader):
        """Plan ops (or a constant parameter) that give folded `node`."""
        if node in self.materialized:
            return self.materialized[node]
        tensor = self.constants[node]
        if not isinstance(tensor, torch.Tensor):
            raise ExportError(f"{describe(reader)}: reads the constant "
                              f"{tensor!r} where a tensor is needed")
        if tensor.dtype == torch.bool:
            # There is no bool dtype in the plan: a mask is an integer
            # tensor whose nonzero elements are true (where, masked_fill).
            tensor = tensor.to(torch.int32)
        dtype = plan_dtype(tensor.dtype, f"constant '{node.name}'")
        shape = list(tensor.shape)
        base = constants.broadcast_base(tensor)
        name = self._materialize_base(node, reader, base, dtype)
        if list(base.shape) != shape:
            name = self.emit("expand", [name], reader, shape, dtype,
                             out_name=f"{node.name}_expanded", shape=shape)
        self.materialized[node] = name
        return name

    def _materialize_base(self, node, reader, base, dtype):
        shape = list(base.shape)
        value = constants.uniform_value(base)
        if value is not None:
            return self.emit("full", [], reader, shape, dtype,
                             out_name=node.name, shape=shape, value=value,
                             dtype=dtype)
        progression = constants.arange_of(base.reshape(-1))
        if progression is not None:
            start, step = progression
            count = base.numel()
            name = self.emit("arange", [], reader, [count], dtype,
                             out_name=node.name, start=start,
                             end=start + step * count, step=step,
                             dtype=dtype)
            if shape != [count]:
                name = self.emit("reshape", [name], reader, shape, dtype,
                                 out_name=f"{node.name}_shaped", shape=shape)
            return name
        # Equal tables (each layer's copy of the rotary cos, say) are one
        # parameter; a buffer keeps its module's name, a computed table
        # gets one.
        key = (str(base.dtype), tuple(shape),
               base.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        if key in self.constant_parameters:
            return self.constant_parameters[key]
        stem = getattr(node, "_dtensor_fqn", None) or f"_constants.{node.name}"
        fqn = self.fresh(stem)
        self.parameters.append({"name": fqn, "shape": shape, "dtype": dtype})
        self.weights[fqn] = base.detach().contiguous()
        self.define(fqn, shape, dtype)
        self.constant_parameters[key] = fqn
        return fqn

    def attach_traceback(self, node, error):
        """An ExportError for an unexpected failure while lowering `node`."""
        detail = "".join(traceback.format_exception_only(type(error), error))
        return ExportError(f"{describe(node)}: {detail.strip()}")

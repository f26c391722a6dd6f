#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the Python places that know the model plan's ops against the
importer's op table (`dtensor-translate --print-plan-ops=json`):

- every plan op the exporter (python/dtensor_export) can emit is an op kind
  or alias of the table, and the attributes it sets are ones the op reads;
- dtensor_testing.torch_model has a PyTorch reference for every op kind and
  alias of the table (but those listed in MISSING_REFERENCES), and none for
  an op the table lacks; each takes the table's input counts, accepts every
  attribute of the table (and others only as listed in EXTRA_ATTRIBUTES),
  and has several outputs exactly when the op does.

Both are read from their source (the `kind` arguments of the builder's
emit calls; the @op registrations), so no PyTorch is needed.

  check_plan_ops.py TABLE.json PYTHON_DIR

Prints a summary line per check; exits 1 after printing every mismatch."""

import ast
import json
import os
import sys

# Op kinds of the table torch_model has no reference for (none today).
MISSING_REFERENCES = set()
# Attributes a reference accepts that the op kind does not read: torch_model
# registers full, zeros and ones as one function, which rejects `value` for
# zeros and ones itself.
EXTRA_ATTRIBUTES = {"zeros": {"value"}, "ones": {"value"}}

# Calls whose argument at the index is a plan op kind.
KIND_ARGUMENT = {"emit": 0, "emit_split": 0, "emit_like": 1, "_unary": 0,
                 "_binary": 0, "_to_result_shape": 0, "lower_binary": 2}
# Keyword arguments of those calls that are not op attributes.
NOT_ATTRIBUTES = {"out_name"}


def call_name(call):
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def strings(node):
    return [n.value for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def is_parameter(scope, name):
    return isinstance(scope, ast.FunctionDef) and name in \
        [a.arg for a in scope.args.posonlyargs + scope.args.args]


def kinds_of_name(scope, name):
    """The op kinds a variable `name` of `scope` (a function or module) is
    given: by `name = {...: "kind"}[...]`, `name = "a" if ... else "b"`, or
    `for name, ... in {"kind": ...}.items()`."""
    kinds = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name
                for t in node.targets):
            value = node.value
            if isinstance(value, ast.Subscript) and \
                    isinstance(value.value, ast.Dict):
                kinds += [v.value for v in value.value.values
                          if isinstance(v, ast.Constant)]
            elif isinstance(value, ast.IfExp):
                kinds += [v.value for v in (value.body, value.orelse)
                          if isinstance(v, ast.Constant)]
            elif isinstance(value, ast.Constant):
                kinds.append(value.value)
        if isinstance(node, ast.For) and isinstance(node.target, ast.Tuple) \
                and isinstance(node.target.elts[0], ast.Name) and \
                node.target.elts[0].id == name and \
                isinstance(node.iter, ast.Call) and \
                isinstance(node.iter.func, ast.Attribute) and \
                isinstance(node.iter.func.value, ast.Dict):
            kinds += [k.value for k in node.iter.func.value.keys
                      if isinstance(k, ast.Constant)]
    return kinds


def resolve(chain, name):
    """The op kinds of variable `name` seen from the innermost scope of
    `chain` (functions, innermost last, after the module): those of the
    nearest scope that sets it; None when a function takes it as a
    parameter (its callers pass the kind)."""
    for scope in reversed(chain):
        if is_parameter(scope, name):
            return None
        kinds = kinds_of_name(scope, name)
        if kinds:
            return kinds
    return []


def scopes(tree):
    """(chain, node) for every node: the module and the functions enclosing
    the node, innermost last."""
    def visit(node, chain):
        for child in ast.iter_child_nodes(node):
            inner = chain + [child] if isinstance(child, ast.FunctionDef) \
                else chain
            yield inner, child
            yield from visit(child, inner)
    yield from visit(tree, [tree])


def exported_ops(package):
    """{kind: {attributes set}} of every plan op the exporter can emit, and
    the places whose op kind cannot be read."""
    ops, unreadable = {}, []
    for file in sorted(os.listdir(package)):
        if not file.endswith(".py"):
            continue
        path = os.path.join(package, file)
        tree = ast.parse(open(path).read(), path)
        for chain, node in scopes(tree):
            if not isinstance(node, ast.Call):
                continue
            index = KIND_ARGUMENT.get(call_name(node))
            if index is None or len(node.args) <= index:
                continue
            argument = node.args[index]
            where = f"{file}:{node.lineno}"
            if isinstance(argument, ast.Constant) and \
                    isinstance(argument.value, str):
                kinds = [argument.value]
            elif isinstance(argument, ast.Name):
                kinds = resolve(chain, argument.id)
                if kinds is None:
                    continue  # a parameter: its callers pass the kind
            else:
                kinds = []
            if not kinds:
                unreadable.append(where)
            attrs = {k.arg for k in node.keywords
                     if k.arg and k.arg not in NOT_ATTRIBUTES}
            for kind in kinds:
                ops.setdefault(kind, {})
                for attr in attrs:
                    ops[kind].setdefault(attr, where)
    return ops, unreadable


def literal(node, default):
    return default if node is None else ast.literal_eval(node)


def reference_ops(path):
    """{kind: (attrs, (min, max), multi)} of torch_model's @op
    registrations."""
    tree = ast.parse(open(path).read(), path)
    ops = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and
                    call_name(decorator) == "op"):
                continue
            keywords = {k.arg: k.value for k in decorator.keywords}
            entry = (set(literal(keywords.get("attrs"), ())),
                     tuple(literal(keywords.get("inputs"), (1, 1))),
                     literal(keywords.get("multi"), False))
            for kind in decorator.args:
                ops[ast.literal_eval(kind)] = entry
    return ops


def main(table_path, python_dir):
    table = json.load(open(table_path))
    errors = []
    names = {}
    for op in table["ops"]:
        names[op["name"]] = op
        for alias in op["aliases"]:
            names[alias] = op

    exported, unreadable = exported_ops(
        os.path.join(python_dir, "dtensor_export"))
    for where in unreadable:
        errors.append(f"dtensor_export/{where}: the op kind it emits cannot "
                      "be read (give it as a string or a variable set from "
                      "strings)")
    for kind, attrs in sorted(exported.items()):
        op = names.get(kind)
        if op is None:
            errors.append(f"dtensor_export emits '{kind}', which is not in "
                          "the op table")
            continue
        known = {a["name"] for a in op["attributes"]}
        for attr, where in sorted(attrs.items()):
            if attr not in known:
                errors.append(f"dtensor_export/{where}: sets '{attr}' of "
                              f"'{kind}', which the op does not read")
    print(f"dtensor_export: {len(exported)} plan ops emitted")

    references = reference_ops(
        os.path.join(python_dir, "dtensor_testing", "torch_model.py"))
    for kind in sorted(set(names) - set(references) - MISSING_REFERENCES):
        errors.append(f"torch_model: no reference for '{kind}'")
    for kind in sorted(MISSING_REFERENCES & set(references)):
        errors.append(f"torch_model: '{kind}' has a reference now; remove it "
                      "from MISSING_REFERENCES")
    for kind in sorted(set(references) - set(names)):
        errors.append(f"torch_model: '{kind}' is not in the op table")
    for kind in sorted(set(references) & set(names)):
        attrs, inputs, multi = references[kind]
        op = names[kind]
        if inputs != (op["minInputs"], op["maxInputs"]):
            errors.append(f"torch_model: '{kind}' takes inputs {inputs}, the "
                          f"table ({op['minInputs']}, {op['maxInputs']})")
        if multi != (op["outputs"] is None):
            errors.append(f"torch_model: '{kind}' multi={multi}, the table "
                          f"outputs {op['outputs']}")
        known = {a["name"] for a in op["attributes"]}
        for attr in sorted(known - attrs):
            errors.append(f"torch_model: '{kind}' does not accept '{attr}'")
        for attr in sorted(attrs - known - EXTRA_ATTRIBUTES.get(kind, set())):
            errors.append(f"torch_model: '{kind}' accepts '{attr}', which "
                          "the op does not read")
    print(f"torch_model: {len(references)} references")

    for error in errors:
        print("MISMATCH:", error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks docs/model-plan.schema.json against the importer's op table
(`dtensor-translate --print-plan-ops=json`): the op names of `$defs/op`,
one `$defs/op_<name>` per op kind and alias with an `if/then` selecting
it, and in each the input and output counts and the attributes (names,
JSON kinds, which are required, defaults).

  check_op_table.py TABLE.json SCHEMA.json

Prints `checked N op kinds, M aliases`; exits 1 after printing every
mismatch."""

import json
import sys

# Members every op object has; not attributes.
COMMON = {"op", "inputs", "output", "outputs", "module"}
DTYPES = {"f32", "f16", "bf16", "i32", "i64"}


def schema_kind(prop):
    """The table's kind name of a schema property."""
    if prop.get("$ref") == "#/$defs/dtype":
        return "dtype"
    if "enum" in prop:
        return "dtype" if set(prop["enum"]) <= DTYPES else "string"
    if "oneOf" in prop:
        types = sorted(schema_kind(p) for p in prop["oneOf"])
        if types == ["integer", "integer[]"]:
            return "integer|integer[]"
    if prop.get("type") == "array":
        items = prop.get("items", {})
        if items.get("type") == "integer":
            return "integer[]"
        # Sizes that may name a dim of model.dims.
        refs = [items.get("$ref")] + [p.get("$ref")
                                      for p in items.get("anyOf", [])]
        if "#/$defs/size" in refs or "#/$defs/dim" in refs:
            return "shape"
    return prop.get("type", json.dumps(prop))


def main(table_path, schema_path):
    table = json.load(open(table_path))
    schema = json.load(open(schema_path))
    defs = schema["$defs"]
    errors = []

    kinds = {op["name"]: op for op in table["ops"]}
    names = dict(kinds)
    aliases = 0
    for op in table["ops"]:
        for alias in op["aliases"]:
            names[alias] = op
            aliases += 1

    # The names `op` may take: every kind and alias, and `custom` (calls of
    # model.custom_ops, which the table does not hold).
    listed = defs["op"]["properties"]["op"]["enum"]
    if len(listed) != len(set(listed)):
        errors.append("$defs/op lists an op name twice")
    for name in sorted(set(names) - set(listed)):
        errors.append(f"$defs/op: '{name}' of the op table is not listed")
    for name in sorted(set(listed) - set(names) - {"custom"}):
        errors.append(f"$defs/op: '{name}' is not in the op table")

    selected = {}
    for rule in defs["op"]["allOf"]:
        name = rule["if"]["properties"]["op"]["const"]
        selected[name] = rule["then"]["$ref"]
    for name in sorted(set(names) | {"custom"}):
        if selected.get(name) != f"#/$defs/op_{name}":
            errors.append(f"$defs/op: no if/then selecting $defs/op_{name}")
    for key in sorted(defs):
        if key.startswith("op_") and key[3:] not in names and \
                key != "op_custom":
            errors.append(f"$defs/{key}: not an op of the op table")

    for name, op in sorted(names.items()):
        where = f"$defs/op_{name}"
        definition = defs.get(f"op_{name}")
        if definition is None:
            errors.append(f"{where}: missing")
            continue
        props = definition["properties"]
        if props.get("op") != {"const": name}:
            errors.append(f"{where}: op is not const '{name}'")
        inputs = props.get("inputs", {})
        if inputs.get("minItems", 0) != op["minInputs"]:
            errors.append(f"{where}: inputs minItems "
                          f"{inputs.get('minItems', 0)}, the table "
                          f"{op['minInputs']}")
        if inputs.get("maxItems") != op["maxInputs"]:
            errors.append(f"{where}: inputs maxItems "
                          f"{inputs.get('maxItems')}, the table "
                          f"{op['maxInputs']}")
        outputs = props.get("outputs", {})
        if outputs.get("maxItems") != op["outputs"]:
            errors.append(f"{where}: outputs maxItems "
                          f"{outputs.get('maxItems')}, the table "
                          f"{op['outputs']}")
        attrs = {a["name"]: a for a in op["attributes"]}
        schema_attrs = {k: v for k, v in props.items() if k not in COMMON}
        for key in sorted(set(attrs) - set(schema_attrs)):
            errors.append(f"{where}: lacks attribute '{key}'")
        for key in sorted(set(schema_attrs) - set(attrs)):
            errors.append(f"{where}: attribute '{key}' is not in the table")
        required = set(definition.get("required", [])) - COMMON
        for key in sorted(set(attrs) & set(schema_attrs)):
            attr, prop = attrs[key], schema_attrs[key]
            if schema_kind(prop) != attr["kind"]:
                errors.append(f"{where}: '{key}' is {schema_kind(prop)}, "
                              f"the table says {attr['kind']}")
            if (key in required) != attr["required"]:
                errors.append(f"{where}: '{key}' required: "
                              f"{key in required}, the table "
                              f"{attr['required']}")
            if prop.get("default") != attr.get("default"):
                errors.append(f"{where}: '{key}' default "
                              f"{prop.get('default')!r}, the table "
                              f"{attr.get('default')!r}")

    for error in errors:
        print("MISMATCH:", error)
    print(f"checked {len(kinds)} op kinds, {aliases} aliases")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

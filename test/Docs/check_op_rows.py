#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks that every op kind and alias of the importer's op table
(`dtensor-translate --print-plan-ops=json`) names a row of the op tables of
the given Markdown files: a table row whose first cell holds `name`.

  check_op_rows.py TABLE.json DOC.md ...

Prints `DOC: N op names` per file and `MISSING: DOC: name` per op without
a row; exits 1 when one is missing."""

import json
import os
import re
import sys


def main(table_path, *docs):
    table = json.load(open(table_path))
    names = set()
    for op in table["ops"]:
        names.add(op["name"])
        names.update(op["aliases"])
    missing = False
    for doc in docs:
        first_cells = set()
        for line in open(doc):
            if line.startswith("|"):
                cell = line.split("|")[1]
                first_cells.update(re.findall(r"`([a-z_0-9]+)`", cell))
        base = os.path.basename(doc)
        for name in sorted(names - first_cells):
            print(f"MISSING: {base}: '{name}' has no row")
            missing = True
        print(f"{base}: {len(names & first_cells)} op names")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

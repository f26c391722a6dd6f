#!/usr/bin/env python3
"""Copies a model plan with context_parallel.rotate_method set.

  with-rotate-method.py METHOD IN.json OUT.json"""

import json
import sys

method, source, target = sys.argv[1:4]
with open(source) as f:
    plan = json.load(f)
plan["plan"]["context_parallel"]["rotate_method"] = method
with open(target, "w") as f:
    json.dump(plan, f, indent=1)

"""Rewrites a compiled artifact's manifest as a program of target "cuda"
(with gpu_arch and reference_target "cpu") and reseals its content hash the
way docs/artifact.md defines it: for the runtime's load-time tests of GPU
programs, which fail before any code runs."""

import hashlib
import json
import os
import sys

directory = sys.argv[1]
path = os.path.join(directory, "manifest.json")
with open(path) as f:
    manifest = json.load(f)
manifest.pop("content_hash", None)
manifest["target"] = "cuda"
manifest["gpu_arch"] = "sm_90"
manifest["reference_target"] = "cpu"
sha = hashlib.sha256()
sha.update(json.dumps(manifest, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode())
sha.update(b"\0")
for key in ("library", "reference_library"):
    if key in manifest:
        with open(os.path.join(directory, manifest[key]), "rb") as f:
            sha.update(f.read())
manifest["content_hash"] = "sha256:" + sha.hexdigest()
with open(path, "w") as f:
    json.dump(manifest, f, indent=2)

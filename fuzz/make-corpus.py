#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes the seed corpora and dictionaries of the fuzz targets (fuzz/).

    fuzz/make-corpus.py OUT --dictionary-tool build-fuzz/fuzz/bin/dtensor-fuzz-dictionary

OUT/seeds/<target>/ gets one file per seed (named by its SHA-1, so a seed
found twice is kept once) and OUT/<target>.dict the target's libFuzzer
dictionary. Everything comes from the source tree, so neither can fall
behind it:

  plan            the model plans of examples/ and test/ (whole .json files
                  and the `#--- name.json` parts of lit tests, errors
                  included) up to 8 KiB (the larger ones are whole models,
                  seconds each to propagate under the sanitizers); dictionary: JSON syntax, the keys and enum
                  values of docs/model-plan.schema.json, the op kinds of the
                  importer's op table (dtensor-fuzz-dictionary plan).
  mlir            the global programs of examples/ and of the dtensor-opt
                  tests of test/Dialect, test/Propagation, test/Partition
                  (split at `// -----`, comments dropped, at most 4 KiB);
                  dictionary: the operation names of the registered dialects
                  (dtensor-fuzz-dictionary mlir) and the dtensor dialect's
                  attribute and type mnemonics (from its ODS files).
  safetensors     small files of every dtype written here; dictionary: the
                  header's keys and dtype names.
  npy             small files of every supported descr, format versions 1.0,
                  2.0 and 3.0, written here; dictionary: the header's keys
                  and descrs.
  manifest        fuzz/seeds/manifest/ (manifests of compiled examples);
                  dictionary: every key and string of those seeds.
  server-request  bodies of the three endpoints, each after the byte that
                  picks the endpoint and limits (ServerRequestFuzzer.cpp);
                  dictionary: the fields of the requests.
"""

import argparse
import hashlib
import json
import os
import re
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ("plan", "mlir", "safetensors", "npy", "manifest", "server-request")
JSON_SYNTAX = ['"{"', '"}"', '"["', '"]"', '":"', '","', '"true"', '"false"',
               '"null"', '"-1"', '"0"', '"1e999"', '"9223372036854775808"',
               '"\\""']
MLIR_SIZE_LIMIT = 4096
PLAN_SIZE_LIMIT = 8192


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def tracked_files(*folders):
    """The files of the source tree under `folders` (git's list when this is
    a checkout, else a walk), sorted."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "--", *folders],
                             check=True, capture_output=True, text=True).stdout
        files = [os.path.join(ROOT, line) for line in out.splitlines()]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder in folders:
            for top, dirs, names in os.walk(os.path.join(ROOT, folder)):
                files += [os.path.join(top, name) for name in names]
    return sorted(f for f in files if os.path.isfile(f))


def split_file_parts(text):
    """The `#--- name` (or `//--- name`) parts of a lit test, as split-file
    cuts them: {name: text}."""
    parts, name, lines = {}, None, []
    for line in text.splitlines(keepends=True):
        match = re.match(r"^(?:#|//)--- (\S+)\s*$", line)
        if match:
            if name:
                parts[name] = "".join(lines)
            name, lines = match.group(1), []
        elif name:
            lines.append(line)
    if name:
        parts[name] = "".join(lines)
    return parts


def plan_seeds():
    seeds = []
    for path in tracked_files("examples", "test"):
        if path.endswith(".json"):
            text = read(path)
            if '"dtensor.model_plan"' in text:
                seeds.append(text)
        elif path.endswith((".test", ".mlir")):
            for name, text in split_file_parts(read(path)).items():
                if name.endswith(".json") and "model_plan" in text:
                    seeds.append(text)
    return [s for s in seeds if len(s.encode()) <= PLAN_SIZE_LIMIT]


def mlir_seeds():
    seeds = []
    paths = [p for p in tracked_files("examples", "test/Dialect",
                                      "test/Propagation", "test/Partition")
             if p.endswith(".mlir")]
    for path in paths:
        for chunk in read(path).split("// -----"):
            lines = [l for l in chunk.splitlines(keepends=True)
                     if not l.lstrip().startswith("//")]
            text = "".join(lines).strip() + "\n"
            if len(text) > 1 and len(text.encode()) <= MLIR_SIZE_LIMIT:
                seeds.append(text)
    return seeds


def safetensors_file(tensors, metadata=None):
    """A safetensors file of (name, dtype, shape, element size) tensors,
    data counting up byte by byte."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, size in tensors:
        count = 1
        for dim in shape:
            count *= dim
        payload = bytes(i % 251 for i in range(count * size))
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    sizes = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2, "I32": 4, "I64": 8,
             "I8": 1, "BOOL": 1}
    seeds = [safetensors_file([("t", dtype, [2, 3], size)])
             for dtype, size in sizes.items()]
    seeds.append(safetensors_file(
        [("scalar", "F32", [], 4), ("empty", "F32", [0, 4], 4),
         ("w", "F16", [3, 2, 2], 2)], {"format": "pt"}))
    seeds.append(safetensors_file([], {}))
    return seeds


def npy_file(descr, shape, size, version):
    dims = f"({shape[0]},)" if len(shape) == 1 else \
        "(" + ", ".join(str(d) for d in shape) + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}"
    length_size = 2 if version == 1 else 4
    prefix = 6 + 2 + length_size
    header += " " * (-(prefix + len(header) + 1) % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return (b"\x93NUMPY" + bytes([version, 0]) + length +
            header.encode("latin-1") + bytes(i % 251 for i in range(count * size)))


def npy_seeds():
    descrs = {"<f4": 4, "<f8": 8, "<f2": 2, "<i4": 4, "<i8": 8, "|i1": 1,
              "|b1": 1}
    seeds = [npy_file(descr, [2, 3], size, 1) for descr, size in descrs.items()]
    seeds += [npy_file("<f4", [], 4, 1), npy_file("<f4", [0], 4, 1),
              npy_file("<i8", [5], 8, 2), npy_file("<f4", [2, 1, 2], 4, 3)]
    return seeds


def manifest_seeds():
    return [read(p) for p in tracked_files("fuzz/seeds/manifest")
            if p.endswith(".json")]


def server_request_seeds():
    # The first byte: endpoint = byte % 3 (0 next_token, 1 generate,
    # 2 completions); 0x08 sequence length 8 (else 64); 0x10 vocabulary 50
    # (else 32000); 0x20 the model has logits; 0x40 a KV cache.
    bodies = [
        (0x00, {"tokens": [1, 2, 3]}),
        (0x20, {"tokens": [5], "logits": True}),
        (0x01, {"tokens": [1, 2], "max_new_tokens": 4}),
        (0x49, {"tokens": [1, 2, 3, 4, 5], "max_new_tokens": 3}),
        (0x02, {"model": "llama", "prompt": [1, 2, 3], "max_tokens": 4}),
        (0x42, {"prompt": [[7, 8]], "max_tokens": 2, "stream": True,
                "stop": [2], "temperature": 0, "n": 1, "user": "u"}),
        (0x12, {"prompt": [1], "stop": 3, "max_tokens": 1}),
    ]
    return [bytes([b]) + json.dumps(body).encode() for b, body in bodies]


def json_strings(value, out):
    """Every key and string of a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(key)
            json_strings(item, out)
    elif isinstance(value, list):
        for item in value:
            json_strings(item, out)
    elif isinstance(value, str):
        out.add(value)


def quoted_entries(words, json_quotes):
    """libFuzzer dictionary lines for `words`, each as a JSON string (with
    its quotes) when `json_quotes`."""
    lines = []
    for word in sorted(words):
        if not word or len(word) > 64 or not word.isprintable():
            continue
        text = json.dumps(word) if json_quotes else word
        lines.append('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return lines


def tool_words(tool, kind):
    out = subprocess.run([tool, kind], check=True, capture_output=True,
                         text=True).stdout
    lines = [l for l in out.splitlines() if l.strip()]
    if not lines:
        sys.exit(f"make-corpus: {tool} {kind} printed no entries")
    return lines


def schema_words():
    schema = json.loads(read(os.path.join(ROOT, "docs/model-plan.schema.json")))
    words = set()

    def walk(node):
        if isinstance(node, dict):
            for key, item in node.items():
                if key == "properties" and isinstance(item, dict):
                    words.update(item.keys())
                if key in ("enum", "const"):
                    for value in item if isinstance(item, list) else [item]:
                        if isinstance(value, str):
                            words.add(value)
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(schema)
    return words


def dtensor_mnemonics():
    words = set()
    for path in tracked_files("dialects/DTensor/include"):
        if path.endswith(".td"):
            words.update(re.findall(r'let mnemonic = "([^"]+)"', read(path)))
    return {"#dtensor." + w for w in words} | {"!dtensor." + w for w in words}


def dictionaries(tool, seeds):
    result = {}
    result["plan"] = (JSON_SYNTAX + quoted_entries(schema_words(), True) +
                      tool_words(tool, "plan"))
    result["mlir"] = (tool_words(tool, "mlir") +
                      quoted_entries(dtensor_mnemonics(), False) +
                      ['"func.func"', '"tensor<"', '"x"', '"->"', '"%"',
                       '"@"', '"{"', '"}"', '"("', '")"', '":"', '"f32"',
                       '"i64"', '"#dtensor.layout<"', '"placements"',
                       '"S("', '"P("', '"R"'])
    result["safetensors"] = JSON_SYNTAX + quoted_entries(
        {"dtype", "shape", "data_offsets", "__metadata__", "F32", "F64",
         "F16", "BF16", "I32", "I64", "I8", "BOOL", "U8", "F8_E4M3"}, True)
    result["npy"] = ['"\\x93NUMPY"', '"\\x01\\x00"', '"\\x02\\x00"',
                     '"\\x03\\x00"', "\"'descr'\"", "\"'fortran_order'\"",
                     "\"'shape'\"", '"True"', '"False"', "\"'<f4'\"",
                     "\"'<f8'\"", "\"'<f2'\"", "\"'<i4'\"", "\"'<i8'\"",
                     "\"'|i1'\"", "\"'|b1'\"", "\"'>f4'\"", '"L"']
    for target in ("manifest", "server-request"):
        words = set()
        for seed in seeds[target]:
            text = seed if isinstance(seed, str) else seed[1:].decode()
            json_strings(json.loads(text), words)
        result[target] = JSON_SYNTAX + quoted_entries(words, True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder for seeds/<target>/ and "
                        "<target>.dict")
    parser.add_argument("--dictionary-tool", required=True,
                        help="the dtensor-fuzz-dictionary of the fuzz build")
    args = parser.parse_args()

    seeds = {"plan": plan_seeds(), "mlir": mlir_seeds(),
             "safetensors": safetensors_seeds(), "npy": npy_seeds(),
             "manifest": manifest_seeds(),
             "server-request": server_request_seeds()}
    dicts = dictionaries(args.dictionary_tool, seeds)
    for target in TARGETS:
        if not seeds[target]:
            sys.exit(f"make-corpus: no seed for {target}")
        folder = os.path.join(args.out, "seeds", target)
        os.makedirs(folder, exist_ok=True)
        for old in os.listdir(folder):
            os.remove(os.path.join(folder, old))
        for seed in seeds[target]:
            data = seed.encode() if isinstance(seed, str) else seed
            name = hashlib.sha1(data).hexdigest()
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        with open(os.path.join(args.out, target + ".dict"), "w") as f:
            f.write("".join(line + "\n" for line in dicts[target]))
        print(f"{target}: {len(os.listdir(folder))} seeds, "
              f"{len(dicts[target])} dictionary entries")


if __name__ == "__main__":
    main()

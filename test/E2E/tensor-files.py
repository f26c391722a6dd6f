#!/usr/bin/env python3
"""Writes small .npy and .safetensors files for the end-to-end tests, with
the standard library only (no NumPy on the test machine).

  tensor-files.py npy OUT DTYPE SHAPE [VALUE]
  tensor-files.py safetensors OUT NAME:DTYPE:SHAPE[:VALUE] ...
  tensor-files.py truncate FILE BYTES

DTYPE is f32, f64 or i32; SHAPE is like 2x3 (or "" for a scalar); elements
are VALUE (default: 0, 1, 2, ...).
"""

import json
import struct
import sys

FORMATS = {"f32": ("<f", "<f4", "F32"), "f64": ("<d", "<f8", "F64"),
           "i32": ("<i", "<i4", "I32")}


def payload(dtype, shape, value):
    count = 1
    for size in shape:
        count *= size
    fmt = FORMATS[dtype][0]
    cast = int if dtype == "i32" else float
    values = [cast(value) if value is not None else cast(i)
              for i in range(count)]
    return b"".join(struct.pack(fmt, v) for v in values)


def parse_shape(text):
    return [int(s) for s in text.split("x")] if text else []


def write_npy(out, dtype, shape, value):
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    header = (f"{{'descr': '{FORMATS[dtype][1]}', 'fortran_order': False, "
              f"'shape': ({dims}), }}")
    header += " " * (-(len(header) + 11) % 64) + "\n"
    with open(out, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode() + payload(dtype, shape, value))


def write_safetensors(out, specs):
    header, blobs, offset = {}, [], 0
    for spec in specs:
        name, dtype, shape, *value = spec.split(":")
        data = payload(dtype, parse_shape(shape),
                       float(value[0]) if value else None)
        header[name] = {"dtype": FORMATS[dtype][2], "shape": parse_shape(shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main(argv):
    if len(argv) >= 4 and argv[0] == "npy":
        write_npy(argv[1], argv[2], parse_shape(argv[3]),
                  float(argv[4]) if len(argv) > 4 else None)
    elif len(argv) >= 2 and argv[0] == "safetensors":
        write_safetensors(argv[1], argv[2:])
    elif len(argv) == 3 and argv[0] == "truncate":
        with open(argv[1], "r+b") as f:
            f.truncate(int(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Compares .npy files pairwise: ACTUAL EXPECTED [ACTUAL EXPECTED ...].

Shapes and dtypes must match. Floating tensors pass when the largest
absolute error is at most RTOL times the largest magnitude of EXPECTED
(as dtensor-run --check measures); integer tensors must be equal. Prints
one line per pair; exits 1 on any mismatch."""

import argparse
import sys

import numpy as np


def compare(actual_path, expected_path, rtol):
    a = np.load(actual_path)
    e = np.load(expected_path)
    label = f"{actual_path} vs {expected_path}"
    if a.shape != e.shape:
        return False, f"{label}: shape {a.shape} != {e.shape}"
    if a.dtype != e.dtype:
        return False, f"{label}: dtype {a.dtype} != {e.dtype}"
    if a.size == 0:
        return True, f"{label}: empty"
    if not np.issubdtype(e.dtype, np.floating):
        wrong = int(np.count_nonzero(a != e))
        return wrong == 0, f"{label}: {wrong} of {e.size} elements differ"
    if not (np.isfinite(a).all() and np.isfinite(e).all()):
        same = np.array_equal(a, e, equal_nan=True)
        return same, f"{label}: non-finite values {'equal' if same else 'differ'}"
    err = float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64))))
    scale = float(np.max(np.abs(e.astype(np.float64))))
    rel = err / scale if scale > 0 else err
    return rel <= rtol, f"{label}: max abs error {err:.3g}, relative {rel:.3g}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("files", nargs="+")
    a = p.parse_args(argv)
    if len(a.files) % 2:
        p.error("expected ACTUAL EXPECTED pairs")
    ok = True
    for actual, expected in zip(a.files[::2], a.files[1::2]):
        good, message = compare(actual, expected, a.rtol)
        ok &= good
        print(("ok: " if good else "MISMATCH: ") + message)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

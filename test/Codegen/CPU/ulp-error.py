"""Accuracy of a compiled f32 math function against numpy in f64.

  ulp-error.py inputs X.npy N     writes N f32 arguments: half spread evenly
                                  over [-10, 10], the rest log-spaced
                                  magnitudes from 1e-30 to 1e4 of both
                                  signs, then 0, -0, +-inf and NaN
  ulp-error.py tanh X.npy Y.npy   prints the largest error of Y against
                                  numpy's tanh of X, in f32 ulps of the
                                  exact value and relative, and whether
                                  infinities and NaN map as tanh does
"""

import sys

import numpy as np

EXACT = {"tanh": np.tanh}


def make_inputs(path, count):
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    even = np.linspace(-10, 10, count // 2, dtype=np.float32)
    rest = count - even.size - specials.size
    magnitudes = np.logspace(-30, 4, rest - rest // 2, dtype=np.float32)
    negative = -np.logspace(-30, 4, rest // 2, dtype=np.float32)
    np.save(path, np.concatenate([even, magnitudes, negative, specials]))


def check(name, x_path, y_path):
    x = np.load(x_path).astype(np.float64).ravel()
    y = np.load(y_path).astype(np.float64).ravel()
    exact = EXACT[name](x)
    finite = np.isfinite(x)
    # One ulp: the spacing of f32 numbers at the exact result.
    ulp = np.spacing(np.abs(exact[finite]).astype(np.float32)).astype(np.float64)
    error = np.abs(y[finite] - exact[finite])
    ulps = error / ulp
    nonzero = exact[finite] != 0
    relative = error[nonzero] / np.abs(exact[finite][nonzero])
    worst = np.argmax(ulps)
    print(f"max error {int(np.ceil(ulps.max()))} ulp "
          f"(at x = {x[finite][worst]!r}), relative {relative.max():.2e}")
    same = np.array_equal(y[~finite], exact[~finite], equal_nan=True)
    print("non-finite arguments", "ok" if same else
          f"wrong: {y[~finite]} for {x[~finite]}")


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        make_inputs(sys.argv[2], int(sys.argv[3]))
    else:
        check(sys.argv[1], sys.argv[2], sys.argv[3])

"""Values of a compiled f32 exp with --dtensor-cpu-clamp-exp's ranges.

  exp-values.py inputs X.npy      writes f32 arguments: [-87, 89] evenly,
                                  below -87 (down to -1e30 and -inf), above
                                  89 (up to 1e30 and +inf), and NaN,
                                  interleaved so that every vector of eight
                                  mixes the ranges
  exp-values.py check X.npy Y.npy prints, per range, how Y compares with
                                  numpy's exp of X in f64
"""

import sys

import numpy as np


def make_inputs(path):
    inside = np.linspace(-87, 89, 32768, dtype=np.float32)
    below = -np.logspace(np.log10(87.01), 30, 16384, dtype=np.float32)
    below[::97] = -np.inf
    above = np.logspace(np.log10(89.01), 30, 16383, dtype=np.float32)
    above[::97] = np.inf
    x = np.concatenate([inside, below, above, [np.nan]]).astype(np.float32)
    np.random.default_rng(0).shuffle(x)
    np.save(path, x)


def check(x_path, y_path):
    x = np.load(x_path).astype(np.float64).ravel()
    y = np.load(y_path).astype(np.float64).ravel()
    inside = (x >= -87) & (x <= 89)
    exact = np.exp(x[inside])
    # Up to 89, exp overflows f32 above ln(FLT_MAX) = 88.72.
    finite = exact <= np.finfo(np.float32).max
    relative = np.abs(y[inside][finite] - exact[finite]) / exact[finite]
    print(f"in range: max relative error {relative.max():.2e}")
    overflow = y[inside][~finite]
    print("in range, overflowing:", "all +inf" if np.all(overflow == np.inf) else "WRONG")
    below, above, nan = x < -87, x > 89, np.isnan(x)
    print("below -87:", "all 0" if np.all(y[below] == 0) else "WRONG")
    print("above 89:", "all +inf" if np.all(y[above] == np.inf) else "WRONG")
    print("nan:", "all nan" if np.all(np.isnan(y[nan])) else "WRONG")


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        make_inputs(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])

#!/usr/bin/env python3
"""The random ops end to end (random-ops.test).

  random-ops.py plan MESH OUT.json   the plan for MESH (4 or 2x2): rand, randn
                                     (f32, f16), rand_like, dropout, bernoulli
                                     and a dropout mask, sharded and replicated
  random-ops.py inputs DIR           DIR/x.npy
  random-ops.py same A B             every output of run A equals run B's, bit
                                     for bit
  random-ops.py differ A B NAME...   each NAME differs between runs A and B in
                                     all but a few elements
  random-ops.py distinct DIR A B     outputs A and B of one run differ
  random-ops.py values DIR           ranges, the dropout masks' means and the
                                     moments of randn, within stated bounds
  random-ops.py locals DIR RANKS NAME...
                                     each rank's local copy of replicated
                                     output NAME (DIR/NAME.RANK.npy) equals
                                     the gathered one (DIR/NAME.npy)

Run directories hold NAME.npy per output. Exits 1 on a failed check."""

import json
import math
import sys

import numpy as np

OUTPUTS = ["u", "u2", "z", "zb", "r", "d", "b", "m"]
X_SHAPE = [10, 7]
MASK_SHAPE = [96, 85]   # 8160 elements: uneven on 3, 4 (and 2x2) ranks
MASK_P = 0.3


def placements(mesh):
    """Claims on the op outputs, one placement per mesh dim."""
    if len(mesh) == 1:
        return {"x": "S(0)", "u": "S(0)", "u2": "S(1)", "z": "S(1)", "zb": "R",
                "r": "S(1)", "d": "S(0)", "b": "S(1)", "m": "S(0)"}
    return {"x": ["S(0)", "S(1)"], "u": ["S(0)", "S(1)"], "u2": ["S(1)", "S(0)"],
            "z": ["R", "S(1)"], "zb": ["R", "R"], "r": ["S(1)", "R"],
            "d": ["S(0)", "S(1)"], "b": ["S(1)", "S(0)"], "m": ["S(0)", "S(0)"]}


def plan(mesh):
    op = lambda **kw: kw
    return {
        "format": "dtensor.model_plan",
        "version": 1,
        "mesh": {"shape": mesh},
        "model": {
            "name": "random_ops",
            "inputs": [{"name": "x", "shape": X_SHAPE, "dtype": "f32"}],
            "ops": [
                op(op="rand", module="draws", inputs=[], output="u", shape=[9, 13]),
                op(op="rand", module="draws", inputs=[], output="u2", shape=[9, 13]),
                op(op="randn", module="draws", inputs=[], output="z", shape=[5, 11]),
                op(op="randn", module="replicated", inputs=[], output="zb",
                   shape=[3, 7], dtype="f16"),
                op(op="rand_like", module="draws", inputs=["x"], output="r"),
                op(op="dropout", module="drop", inputs=["x"], output="d", p=0.25),
                op(op="bernoulli", module="draws", inputs=["u"], output="b"),
                op(op="ones", inputs=[], output="o", shape=MASK_SHAPE),
                op(op="dropout", module="drop", inputs=["o"], output="m", p=MASK_P),
            ],
            "outputs": OUTPUTS,
        },
        "plan": {"placements": placements(mesh)},
    }


def load(run, name):
    return np.load(f"{run}/{name}.npy")


def main(argv):
    command = argv[0]
    ok = True

    def check(good, message):
        nonlocal ok
        ok &= bool(good)
        print(("ok: " if good else "FAILED: ") + message)

    if command == "plan":
        mesh = [int(n) for n in argv[1].split("x")]
        with open(argv[2], "w") as f:
            json.dump(plan(mesh), f, indent=1)
        return 0
    if command == "inputs":
        x = (np.arange(70, dtype=np.float32).reshape(X_SHAPE) - 30) / 8
        np.save(f"{argv[1]}/x.npy", x)
        return 0
    if command == "same":
        a, b = argv[1], argv[2]
        for name in OUTPUTS:
            x, y = load(a, name), load(b, name)
            same = x.dtype == y.dtype and x.shape == y.shape and \
                x.tobytes() == y.tobytes()
            check(same, f"{name} of {b} equals {a} bit for bit")
        return 0 if ok else 1
    if command == "differ":
        a, b = argv[1], argv[2]
        for name in argv[3:]:
            x, y = load(a, name), load(b, name)
            equal = int(np.count_nonzero(x == y))
            # Drawn values coincide rarely (at most 2 allowed). Masks agree
            # by chance with probability q per element: independent
            # bernoulli(u) of uniform u, 1/2; dropout, p^2 + (1-p)^2. Those
            # may agree on at most n q + 5 sqrt(n q (1 - q)) elements.
            q = {"b": 0.5, "d": 0.25 ** 2 + 0.75 ** 2,
                 "m": MASK_P ** 2 + (1 - MASK_P) ** 2}.get(name)
            n = x.size
            limit = 2 if q is None else n * q + 5 * math.sqrt(n * q * (1 - q))
            check(equal <= limit, f"{name} differs between {a} and {b} "
                  f"({equal} of {n} equal, at most {limit:.0f})")
        return 0 if ok else 1
    if command == "distinct":
        run, a, b = argv[1], argv[2], argv[3]
        x, y = load(run, a), load(run, b)
        equal = int(np.count_nonzero(x == y))
        check(equal <= 2, f"{a} and {b} differ ({equal} of {x.size} equal)")
        return 0 if ok else 1
    if command == "values":
        run = argv[1]
        u, z, b, d, m = (load(run, n) for n in ("u", "z", "b", "d", "m"))
        x = (np.arange(70, dtype=np.float32).reshape(X_SHAPE) - 30) / 8
        check(((u >= 0) & (u < 1)).all(), "rand in [0, 1)")
        check(set(np.unique(b)) <= {0.0, 1.0}, "bernoulli gives 0 or 1")
        scale = np.float32(1 / 0.75)
        check(((d == 0) | (d == x * scale)).all(), "dropout is x / (1 - p) or 0")
        # The mask: kept elements are 1 / (1 - p), each kept with probability
        # 1 - p independently. Bound: 5 standard deviations of the mean,
        # 5 * sqrt(p (1 - p) / n) (about 0.025 for n = 8160), never crossed
        # by chance in practice (probability below 6e-7).
        kept = float(np.mean(m != 0))
        n = m.size
        bound = 5 * math.sqrt(MASK_P * (1 - MASK_P) / n)
        check(abs(kept - (1 - MASK_P)) <= bound,
              f"dropout mask mean {kept:.4f} within {bound:.4f} of {1 - MASK_P}")
        check(np.allclose(m[m != 0], np.float32(1 / (1 - MASK_P))),
              "kept mask elements are 1 / (1 - p)")
        # randn on 55 elements: a mean within 5 / sqrt(55), a standard
        # deviation within 0.5 of 1.
        check(abs(float(z.mean())) <= 5 / math.sqrt(z.size) and
              abs(float(z.std()) - 1) <= 0.5, "randn's moments")
        return 0 if ok else 1
    if command == "locals":
        run, ranks = argv[1], int(argv[2])
        for name in argv[3:]:
            whole = load(run, name)
            for rank in range(ranks):
                local = np.load(f"{run}/{name}.{rank}.npy")
                check(local.shape == whole.shape and
                      local.tobytes() == whole.tobytes(),
                      f"rank {rank}'s {name} is the whole replicated tensor")
        return 0 if ok else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

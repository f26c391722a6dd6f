#!/usr/bin/env python3
"""Prints a global program that redistributes one tensor per (source,
destination) layout pair on a mesh: argument i has the source layout, result
i asks for the destination layout, so propagation inserts exactly one
redistribute per pair. Run with dtensor-run --check, every result must equal
its argument (the single-device program is the identity).

  redistribute-matrix.py --mesh 2x2 --shape 10x7 [--partials sum,max]
"""

import argparse
import itertools


def placements(rank, partials):
    options = [f"shard<{d}>" for d in range(rank)] + ["replicate"]
    return options + [f"partial<{kind}>" for kind in partials]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", required=True, help="mesh shape, e.g. 2x2")
    parser.add_argument("--shape", required=True, help="tensor shape, e.g. 10x7")
    parser.add_argument("--partials", default="sum,avg,max,min",
                        help="Partial reductions to include")
    args = parser.parse_args()

    mesh = [int(s) for s in args.mesh.split("x")]
    shape = [int(s) for s in args.shape.split("x")]
    per_dim = placements(len(shape), args.partials.split(","))
    layouts = list(itertools.product(per_dim, repeat=len(mesh)))
    tensor = f"tensor<{'x'.join(map(str, shape))}xf32>"

    def layout(ps):
        return f"#dtensor.layout<@mesh, [{', '.join(ps)}]>"

    def name(ps):
        return "_".join(p.replace("shard<", "s").replace("partial<", "p")
                        .replace("replicate", "r").rstrip(">") for p in ps)

    pairs = list(itertools.product(layouts, layouts))
    print(f"// {len(pairs)} redistributions on mesh {args.mesh}, {tensor}")
    print(f"dtensor.mesh @mesh shape [{', '.join(map(str, mesh))}]")
    print("func.func @main(")
    print(",\n".join(
        f"    %a{i}: {tensor} {{dtensor.layout = {layout(src)}, "
        f"dtensor.name = \"in_{name(src)}__{name(dst)}\"}}"
        for i, (src, dst) in enumerate(pairs)))
    print("  ) -> (")
    print(",\n".join(
        f"    {tensor} {{dtensor.layout = {layout(dst)}, "
        f"dtensor.name = \"out_{name(src)}__{name(dst)}\"}}"
        for src, dst in pairs))
    print("  ) {")
    print(f"  return {', '.join(f'%a{i}' for i in range(len(pairs)))} : "
          f"{', '.join([tensor] * len(pairs))}")
    print("}")


if __name__ == "__main__":
    main()

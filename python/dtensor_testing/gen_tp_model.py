#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes a global-view MLIR model of N transformer-like blocks (attention +
MLP, Megatron TP layouts on a 1-D mesh) for compile-time measurements of
the propagation pass. Usage: python3 -m dtensor_testing.gen_tp_model LAYERS TP [SEQ HIDDEN FFN HEADS]"""
import sys


def main():
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    tp = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    seq, hidden, ffn, heads = (int(v) for v in (sys.argv[3:7] or
                                                 (512, 4096, 11008, 32)))
    head_dim = hidden // heads
    lines = []
    emit = lines.append

    def t(*shape):
        return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"

    def layout(p):
        return "{dtensor.layout = #dtensor.layout<@tp, [%s]>}" % p

    def matmul(name, a, b, m, n, k, batch=None):
        shape = (batch, m, n) if batch else (m, n)
        ashape = (batch, m, k) if batch else (m, k)
        bshape = (batch, k, n) if batch else (k, n)
        op = "linalg.batch_matmul" if batch else "linalg.matmul"
        emit(f"  %e_{name} = tensor.empty() : {t(*shape)}")
        emit(f"  %f_{name} = linalg.fill ins(%zero : f32) outs(%e_{name} : "
             f"{t(*shape)}) -> {t(*shape)}")
        emit(f"  %{name} = {op} ins({a}, {b} : {t(*ashape)}, {t(*bshape)}) "
             f"outs(%f_{name} : {t(*shape)}) -> {t(*shape)}")

    def transpose(name, src, shape, perm):
        out = [shape[p] for p in perm]
        emit(f"  %e_{name} = tensor.empty() : {t(*out)}")
        emit(f"  %{name} = linalg.transpose ins({src} : {t(*shape)}) "
             f"outs(%e_{name} : {t(*out)}) permutation = "
             f"[{', '.join(str(p) for p in perm)}]")

    args = [f"%x: {t(seq, hidden)} {layout('replicate')}"]
    weights = [("wq", (hidden, hidden), 1), ("wk", (hidden, hidden), 1),
               ("wv", (hidden, hidden), 1), ("wo", (hidden, hidden), 0),
               ("w1", (hidden, ffn), 1), ("w2", (ffn, hidden), 0)]
    for layer in range(layers):
        for name, shape, dim in weights:
            args.append(f"%{name}_{layer}: {t(*shape)} "
                        f"{layout('shard<%d>' % dim)}")
    emit(f"dtensor.mesh @tp shape [{tp}]")
    emit(f"func.func @model({', '.join(args)}) -> "
         f"({t(seq, hidden)} {layout('replicate')}) {{")
    emit("  %zero = arith.constant 0.0 : f32")
    x = "%x"
    for l in range(layers):
        emit(f"  %n_{l} = arith.mulf {x}, {x} : {t(seq, hidden)}")
        for w in "qkv":
            matmul(f"{w}_{l}", f"%n_{l}", f"%w{w}_{l}", seq, hidden, hidden)
            emit(f"  %{w}3_{l} = tensor.expand_shape %{w}_{l} [[0], [1, 2]] "
                 f"output_shape [{seq}, {heads}, {head_dim}] : "
                 f"{t(seq, hidden)} into {t(seq, heads, head_dim)}")
            transpose(f"{w}h_{l}", f"%{w}3_{l}", (seq, heads, head_dim),
                      (1, 0, 2))
        transpose(f"kt_{l}", f"%kh_{l}", (heads, seq, head_dim), (0, 2, 1))
        matmul(f"s_{l}", f"%qh_{l}", f"%kt_{l}", seq, seq, head_dim, heads)
        emit(f"  %p_{l} = linalg.softmax dimension(2) ins(%s_{l} : "
             f"{t(heads, seq, seq)}) outs(%e_s_{l} : {t(heads, seq, seq)}) "
             f"-> {t(heads, seq, seq)}")
        matmul(f"o_{l}", f"%p_{l}", f"%vh_{l}", seq, head_dim, seq, heads)
        transpose(f"ot_{l}", f"%o_{l}", (heads, seq, head_dim), (1, 0, 2))
        emit(f"  %o2_{l} = tensor.collapse_shape %ot_{l} [[0], [1, 2]] : "
             f"{t(seq, heads, head_dim)} into {t(seq, hidden)}")
        matmul(f"att_{l}", f"%o2_{l}", f"%wo_{l}", seq, hidden, hidden)
        emit(f"  %r1_{l} = arith.addf {x}, %att_{l} : {t(seq, hidden)}")
        matmul(f"h_{l}", f"%r1_{l}", f"%w1_{l}", seq, ffn, hidden)
        emit(f"  %a_{l} = math.tanh %h_{l} : {t(seq, ffn)}")
        matmul(f"y_{l}", f"%a_{l}", f"%w2_{l}", seq, hidden, ffn)
        emit(f"  %r2_{l} = arith.addf %r1_{l}, %y_{l} : {t(seq, hidden)}")
        x = f"%r2_{l}"
    emit(f"  return {x} : {t(seq, hidden)}")
    emit("}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

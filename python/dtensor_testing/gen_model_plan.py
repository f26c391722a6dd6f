#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes a Llama-style JSON model plan (docs/model-plan.md) with a
torchtitan-like tensor-parallel plan.

  python3 -m dtensor_testing.gen_model_plan [--preset tiny|7b] [--layers N] [--dim D] [--heads H]
      [--kv-heads N] [--ffn F] [--vocab V] [--batch B] [--seq S] [--dtype f32|f16|bf16]
      [--plan none|tp|tp-sp|dp-tp|dp-tp-sp|cp|cp-tp] [--mesh 2 | 2x2] [--rotate-method allgather|alltoall]
      [--model llama|block|mlp] [--no-causal] [--loss] [--kv-cache [--slots N] [--max-seq M] [--prefill L,L,...]
      [--decode-rows N,N,...]]
      [--name NAME] [-o FILE]

--model llama: tok_embeddings -> N decoder blocks -> norm -> output (the LM
head) -> argmax over the vocabulary (the next token at every position);
with --loss also a `targets` input and the mean cross-entropy `loss`.
--model block: N decoder blocks from an input `x[B, S, D]` to the output
`y`, no embedding or head; under tp-sp `x` and `y` are Shard(1), as the
residual stream between blocks is.
--model mlp: the Megatron MLP of examples/mlp.json, from `x[B * S, D]`:
fc1 (linear with bias, D -> ffn) -> act (gelu, tanh approximation) -> fc2
(linear with bias, ffn -> D) -> `y`; --layers and --heads are not used.

--kv-cache (with --model llama): a KV cache per layer as state
(`layers.<i>.attention.cache_k` and `cache_v`, [--slots, --max-seq,
kv_heads, head_dim]), written at each step and read for attention, and the
dims B (rows) and T (tokens per row) with the entries `decode` (B = --slots,
T = 1), `decode_<N>` (B = N, T = 1) for each --decode-rows N, and
`prefill_<N>` (B = 1, T = N) for each --prefill length. Inputs
`tokens[B, T]`, `slots[B]` (each row's cache slot) and `start[B]` (the
position of each row's first token); output `next_token[B, T]`, and with
--logits-output also `logits[B, T, V]` (what dtensor-server samples from:
it fetches them only for steps with a sampling request, the last prefill
chunk's [1, T, V] and a decode step's [B, 1, V]; each entry keeps a buffer
of B * T * V values for them).

--kv-heads N (default: --heads): grouped-query attention with N key/value
heads, a divisor of --heads: wk and wv project to N * head_dim features,
k and v are viewed as N heads, and scaled_dot_product_attention gets
enable_gqa when N < heads.

A decoder block (module `layers.<i>`, Meta/torchtitan names):
  attention_norm (rms_norm) -> attention.wq/wk/wv (linear) -> view to heads
  -> rotary -> transpose -> causal scaled_dot_product_attention -> transpose
  back -> view -> attention.wo (linear) -> residual add -> ffn_norm
  (rms_norm) -> feed_forward: w2(silu(w1(x)) * w3(x)) -> residual add.

Plans (mesh dim `tp`; with dp-tp and dp-tp-sp a 2-D mesh `dp` x `tp`):
  none   no plan: everything replicated
  tp     tok_embeddings rowwise (vocab parallel), wq/wk/wv/w1/w3 colwise,
         wo/w2 rowwise, output colwise with output Shard(-1) and
         use_local_output false (loss parallelism: argmax and cross_entropy
         on vocab-sharded logits)
  tp-sp  tp plus sequence parallelism: norms sequence_parallel, the
         embedding's and wo/w2's outputs Shard(1), attention and
         feed_forward take their input as Shard(1) and gather it
         (prepare_module_input), output's input Shard(1)
  dp-tp  the tp plan on mesh dim `tp` plus `data_parallel: "dp"` (the batch
         sharded over `dp`)
  dp-tp-sp  the tp-sp plan on mesh dim `tp` plus `data_parallel: "dp"`
  cp     context parallelism on a 1-D mesh `cp`: `context_parallel: {}`,
         every activation sharded over its sequence (dim 1), each attention
         gathering its keys and values; weights replicated
  cp-tp  the tp plan on mesh dim `tp` plus context parallelism over `cp`
         (a 2-D mesh `cp` x `tp`)
--rotate-method sets context_parallel.rotate_method of cp and cp-tp.
--load-balance (cp, cp-tp) adds `load_balance: true`: the sequence sharded
head-tail (rank r of n holds pieces r and 2n-1-r of 2n).
--no-causal makes the attention non-causal (is_causal false).
With --model mlp, tp is fc1 colwise and fc2 rowwise (tp-sp is not offered).

Defaults (--preset tiny): 2 layers, dim 64, 4 heads, ffn 128, vocab 256,
batch 2, seq 16. --preset 7b: 32 layers, dim 4096, 32 heads, ffn 11008,
vocab 32000 (batch 1, seq 2048 unless given).
"""

import argparse
import json
import sys

PRESETS = {
    "tiny": dict(layers=2, dim=64, heads=4, ffn=128, vocab=256, batch=2,
                 seq=16),
    "7b": dict(layers=32, dim=4096, heads=32, ffn=11008, vocab=32000,
               batch=1, seq=2048),
}


class Builder:
    """Collects the declarations and ops of one model."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.inputs = []
        self.state_decls = []
        self.updates = {}
        self.parameters = []
        self.ops = []

    def state(self, name, shape):
        self.state_decls.append({"name": name, "shape": list(shape),
                                 "dtype": self.dtype})
        return name

    def input(self, name, shape, dtype=None):
        self.inputs.append({"name": name, "shape": list(shape),
                            "dtype": dtype or self.dtype})
        return name

    def param(self, name, shape):
        self.parameters.append({"name": name, "shape": list(shape),
                                "dtype": self.dtype})
        return name

    def op(self, kind, module, inputs, output, **attrs):
        entry = {"op": kind}
        if module:
            entry["module"] = module
        entry["inputs"] = list(inputs)
        entry["output"] = output
        entry.update(attrs)
        self.ops.append(entry)
        return output


def decoder_block(b, a, i, h, out):
    """Appends decoder block `i` reading the residual stream `h`; its output
    is named `out`."""
    dim, heads = a.dim, a.heads
    head_dim = dim // heads
    kv_dim = a.kv_heads * head_dim
    m = f"layers.{i}"
    v = f"l{i}."  # value-name prefix
    eps = a.eps

    xn = b.op("rms_norm", f"{m}.attention_norm",
              [h, b.param(f"{m}.attention_norm.weight", [dim])],
              v + "xn", eps=eps)
    att = f"{m}.attention"
    proj = {}
    for w in ("wq", "wk", "wv"):
        features = dim if w == "wq" else kv_dim
        proj[w] = b.op("linear", f"{att}.{w}",
                       [xn, b.param(f"{att}.{w}.weight", [features, dim])],
                       v + w[1])
    batch, seq = ("B", "T") if a.kv_cache else (a.batch, a.seq)
    heads_of = {}
    for w, name in proj.items():
        heads_of[w] = b.op("view", att, [name], name + "4",
                           shape=[batch, seq, -1, head_dim])
    positions = ["start"] if a.kv_cache else []
    for w in ("wq", "wk"):
        heads_of[w] = b.op("rotary", att, [heads_of[w]] + positions,
                           proj[w] + "r", theta=a.theta)
    gqa = {"enable_gqa": True} if a.kv_heads < heads else {}
    if a.kv_cache:
        # Write this step's keys and values into the layer's caches, then
        # attend over the rows of the batch's slots.
        for w, c in (("wk", "k"), ("wv", "v")):
            cache = b.state(f"{att}.cache_{c}",
                            [a.slots, a.max_seq, a.kv_heads, head_dim])
            new = b.op("cache_write", att,
                       [cache, heads_of[w], "slots", "start"],
                       v + f"cache_{c}")
            b.updates[cache] = new
            heads_of[w] = b.op("index_select", att, [new, "slots"],
                               v + f"{c}_rows", dim=0)
    t = {w: b.op("transpose", att, [heads_of[w]], proj[w] + "t",
                 dim0=1, dim1=2)
         for w in ("wq", "wk", "wv")}
    attention_inputs = [t["wq"], t["wk"], t["wv"]] + positions
    extra = {"query_positions": True} if a.kv_cache else {}
    o = b.op("scaled_dot_product_attention", att, attention_inputs,
             v + "attn", is_causal=a.causal, **gqa, **extra)
    o = b.op("transpose", att, [o], v + "attn_t", dim0=1, dim1=2)
    o = b.op("view", att, [o], v + "attn_flat", shape=[batch, seq, -1])
    o = b.op("linear", f"{att}.wo",
             [o, b.param(f"{att}.wo.weight", [dim, dim])], v + "attn_out")
    h = b.op("add", m, [h, o], v + "h")

    hn = b.op("rms_norm", f"{m}.ffn_norm",
              [h, b.param(f"{m}.ffn_norm.weight", [dim])], v + "hn", eps=eps)
    ff = f"{m}.feed_forward"
    gate = b.op("linear", f"{ff}.w1",
                [hn, b.param(f"{ff}.w1.weight", [a.ffn, dim])], v + "gate")
    gate = b.op("silu", ff, [gate], v + "gate_act")
    up = b.op("linear", f"{ff}.w3",
              [hn, b.param(f"{ff}.w3.weight", [a.ffn, dim])], v + "up")
    g = b.op("mul", ff, [gate, up], v + "gated")
    o = b.op("linear", f"{ff}.w2",
             [g, b.param(f"{ff}.w2.weight", [dim, a.ffn])], v + "ffn_out")
    return b.op("add", m, [h, o], out)


def build_mlp(a):
    """The Megatron MLP: fc1 -> gelu (tanh) -> fc2, both with biases."""
    b = Builder(a.dtype)
    x = b.input("x", [a.batch * a.seq, a.dim])
    h = b.op("linear", "fc1", [x, b.param("fc1.weight", [a.ffn, a.dim]),
                               b.param("fc1.bias", [a.ffn])], "h")
    g = b.op("gelu", "act", [h], "a", approximate="tanh")
    y = b.op("linear", "fc2", [g, b.param("fc2.weight", [a.dim, a.ffn]),
                               b.param("fc2.bias", [a.dim])], "y")
    return {"name": a.name or "mlp", "inputs": b.inputs,
            "parameters": b.parameters, "ops": b.ops, "outputs": [y]}


def build_model(a):
    if a.model == "mlp":
        return build_mlp(a)
    b = Builder(a.dtype)
    if a.model == "llama" and a.kv_cache:
        tokens = b.input("tokens", ["B", "T"], "i64")
        b.input("slots", ["B"], "i64")
        b.input("start", ["B"], "i64")
        h = b.op("embedding", "tok_embeddings",
                 [tokens, b.param("tok_embeddings.weight", [a.vocab, a.dim])],
                 "h")
    elif a.model == "llama":
        tokens = b.input("tokens", [a.batch, a.seq], "i64")
        h = b.op("embedding", "tok_embeddings",
                 [tokens, b.param("tok_embeddings.weight", [a.vocab, a.dim])],
                 "h")
    else:
        h = b.input("x", [a.batch, a.seq, a.dim])
    for i in range(a.layers):
        last = i == a.layers - 1 and a.model == "block"
        h = decoder_block(b, a, i, h, "y" if last else f"l{i}.out")
    outputs = [h]
    if a.model == "llama":
        hn = b.op("rms_norm", "norm", [h, b.param("norm.weight", [a.dim])],
                  "hn", eps=a.eps)
        logits = b.op("linear", "output",
                      [hn, b.param("output.weight", [a.vocab, a.dim])],
                      "logits")
        outputs = [b.op("argmax", "", [logits], "next_token", dim=-1)]
        if a.logits_output:
            outputs.append(logits)
        if a.loss:
            targets = b.input("targets", [a.batch, a.seq], "i64")
            flat = b.op("view", "", [logits], "logits_flat",
                        shape=[a.batch * a.seq, a.vocab])
            tflat = b.op("view", "", [targets], "targets_flat",
                         shape=[a.batch * a.seq])
            outputs.append(b.op("cross_entropy", "", [flat, tflat], "loss"))
    model = {"name": a.name or ("llama" if a.model == "llama" else "block"),
             "inputs": b.inputs, "parameters": b.parameters, "ops": b.ops,
             "outputs": outputs}
    if a.kv_cache:
        entries = [{"name": "decode", "dims": {"B": a.slots, "T": 1}}]
        entries += [{"name": f"decode_{n}", "dims": {"B": n, "T": 1}}
                    for n in a.decode_rows]
        entries += [{"name": f"prefill_{n}", "dims": {"B": 1, "T": n}}
                    for n in a.prefill]
        model = {"name": model["name"], "dims": ["B", "T"],
                 "inputs": b.inputs, "state": b.state_decls,
                 "parameters": b.parameters, "ops": b.ops,
                 "outputs": outputs, "updates": b.updates,
                 "entries": entries}
    return model


def cp_setting(a):
    """The context_parallel members --rotate-method and --load-balance set."""
    setting = {"rotate_method": a.rotate_method} if a.rotate_method else {}
    if a.load_balance:
        setting["load_balance"] = True
    return setting


def build_plan(a):
    if a.plan == "none":
        return None
    if a.plan == "cp":
        return {"context_parallel": cp_setting(a)}
    if a.model == "mlp":
        plan = {"data_parallel": "dp"} if a.plan == "dp-tp" else {}
        plan["styles"] = {"fc1": "colwise", "fc2": "rowwise"}
        return plan
    sp = a.plan in ("tp-sp", "dp-tp-sp")
    styles = {}
    if a.model == "llama":
        styles["tok_embeddings"] = (
            {"style": "rowwise", "input_layouts": "R", "output_layouts": "S(1)"}
            if sp else {"style": "rowwise", "input_layouts": "R"})
    pre = "layers.*."
    if sp:
        styles[pre + "attention_norm"] = "sequence_parallel"
        styles[pre + "attention"] = {
            "style": "prepare_module_input", "input_layouts": ["S(1)"],
            "desired_input_layouts": ["R"]}
    for w in ("wq", "wk", "wv"):
        styles[pre + "attention." + w] = "colwise"
    styles[pre + "attention.wo"] = (
        {"style": "rowwise", "output_layouts": "S(1)"} if sp else "rowwise")
    if sp:
        styles[pre + "ffn_norm"] = "sequence_parallel"
        styles[pre + "feed_forward"] = {
            "style": "prepare_module_input", "input_layouts": ["S(1)"],
            "desired_input_layouts": ["R"]}
    styles[pre + "feed_forward.w1"] = "colwise"
    styles[pre + "feed_forward.w2"] = (
        {"style": "rowwise", "output_layouts": "S(1)"} if sp else "rowwise")
    styles[pre + "feed_forward.w3"] = "colwise"
    if a.model == "llama":
        if sp:
            styles["norm"] = "sequence_parallel"
        head = {"style": "colwise", "output_layouts": "S(-1)",
                "use_local_output": False}
        if sp:
            head = {"style": "colwise", "input_layouts": "S(1)",
                    "output_layouts": "S(-1)", "use_local_output": False}
        styles["output"] = head
    plan = {}
    if a.plan in ("dp-tp", "dp-tp-sp"):
        plan["data_parallel"] = "dp"
    if a.plan == "cp-tp":
        plan["context_parallel"] = {"mesh_dim": "cp", **cp_setting(a)}
    plan["styles"] = styles
    if a.model == "block" and sp:
        # The block's input and output are the residual stream between
        # blocks: sharded over the sequence.
        plan["placements"] = {"x": "S(1)", "y": "S(1)"}
    return plan


def parse_mesh(text, plan):
    try:
        shape = [int(s) for s in text.split("x")]
    except ValueError:
        sys.exit(f"gen-model-plan: --mesh {text}: expected sizes like 2 or 2x2")
    two = {"dp-tp": ["dp", "tp"], "dp-tp-sp": ["dp", "tp"],
           "cp-tp": ["cp", "tp"]}
    if plan in two and len(shape) != 2:
        sys.exit(f"gen-model-plan: --plan {plan} needs a 2-D --mesh "
                 f"({'x'.join(two[plan]).upper()})")
    if plan not in two and len(shape) != 1:
        sys.exit(f"gen-model-plan: --plan {plan} needs a 1-D --mesh")
    names = two.get(plan, ["cp"] if plan == "cp" else ["tp"])
    return {"shape": shape, "names": names}


def check_shapes(a):
    errors = []
    if a.model == "mlp":
        if a.plan in ("tp-sp", "dp-tp-sp", "cp", "cp-tp"):
            errors.append(f"--model mlp has no {a.plan} plan")
    elif a.dim % a.heads:
        errors.append(f"--dim {a.dim} is not a multiple of --heads {a.heads}")
    elif (a.dim // a.heads) % 2:
        errors.append("the head dim (dim / heads) must be even (rotary)")
    elif a.kv_heads < 1 or a.heads % a.kv_heads:
        errors.append(f"--kv-heads {a.kv_heads} must be a positive divisor "
                      f"of --heads {a.heads}")
    for key in ("layers", "dim", "heads", "ffn", "vocab", "batch", "seq"):
        if getattr(a, key) < (0 if key == "layers" else 1):
            errors.append(f"--{key} must be positive")
    if a.model == "block" and a.layers < 1:
        errors.append("--model block needs at least one layer")
    if a.loss and a.model != "llama":
        errors.append("--loss needs --model llama")
    if a.kv_cache:
        if a.model != "llama" or a.loss:
            errors.append("--kv-cache needs --model llama without --loss")
        if a.plan not in ("none", "tp"):
            errors.append("--kv-cache takes --plan none or tp")
        if a.slots < 1 or a.max_seq < 1:
            errors.append("--slots and --max-seq must be positive")
        if not a.prefill or any(n < 1 or n > a.max_seq for n in a.prefill):
            errors.append(f"--prefill lengths must be in [1, {a.max_seq}]")
        if any(n < 1 or n >= a.slots for n in a.decode_rows) or \
                len(set(a.decode_rows)) != len(a.decode_rows):
            errors.append(f"--decode-rows must be distinct, in [1, "
                          f"{a.slots - 1}]")
    if errors:
        sys.exit("gen-model-plan: " + "; ".join(errors))


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    for key in ("layers", "dim", "heads", "ffn", "vocab", "batch", "seq"):
        p.add_argument("--" + key, type=int)
    p.add_argument("--kv-heads", type=int,
                   help="key/value heads, a divisor of --heads (default: "
                   "--heads; fewer: grouped-query attention)")
    p.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
    p.add_argument("--plan",
                   choices=["none", "tp", "tp-sp", "dp-tp", "dp-tp-sp", "cp",
                            "cp-tp"],
                   default="tp")
    p.add_argument("--mesh", help="mesh shape, e.g. 2 or 2x2 (default: 2, "
                   "or 2x2 with dp-tp, dp-tp-sp and cp-tp)")
    p.add_argument("--rotate-method", choices=["allgather", "alltoall"],
                   help="with cp and cp-tp: context_parallel.rotate_method "
                   "(default: none, the compiler's cost model chooses)")
    p.add_argument("--load-balance", action="store_true",
                   help="with --plan cp or cp-tp: load_balance true (the "
                   "sequence sharded head-tail)")
    p.add_argument("--no-causal", dest="causal", action="store_false",
                   help="non-causal attention (default: causal)")
    p.add_argument("--model", choices=["llama", "block", "mlp"],
                   default="llama")
    p.add_argument("--logits-output", action="store_true",
                   help="llama: also return the logits [B, S, V] (with "
                   "--kv-cache [B, T, V] of each entry; what dtensor-server "
                   "samples from)")
    p.add_argument("--loss", action="store_true",
                   help="also a targets input and the cross-entropy loss")
    p.add_argument("--kv-cache", action="store_true",
                   help="a KV cache per layer as state, and the entries "
                   "decode and prefill_<N> (--model llama)")
    p.add_argument("--slots", type=int, default=4,
                   help="--kv-cache: sequences the cache holds (decode's "
                   "batch; default 4)")
    p.add_argument("--max-seq", type=int, default=256,
                   help="--kv-cache: positions per slot (default 256)")
    p.add_argument("--prefill", default="16,64,256",
                   help="--kv-cache: the prefill lengths, comma-separated "
                   "(default 16,64,256)")
    p.add_argument("--decode-rows", default="",
                   help="--kv-cache: narrower decode entries decode_<N>, "
                   "comma-separated N < --slots (a step of few active "
                   "sequences then costs N rows, not --slots)")
    p.add_argument("--theta", type=float, default=10000.0)
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--name", help="the model's name (entry function)")
    p.add_argument("-o", "--output", help="file to write (default stdout)")
    a = p.parse_args(argv)
    for key, value in PRESETS[a.preset].items():
        if getattr(a, key) is None:
            setattr(a, key, value)
    if a.kv_heads is None:
        a.kv_heads = a.heads
    try:
        a.prefill = [int(n) for n in a.prefill.split(",")]
        a.decode_rows = [int(n) for n in a.decode_rows.split(",") if n]
    except ValueError:
        sys.exit(f"gen-model-plan: --prefill {a.prefill} or --decode-rows "
                 f"{a.decode_rows}: expected numbers like 16,64,256")
    if a.load_balance and a.plan not in ("cp", "cp-tp"):
        sys.exit("gen-model-plan: --load-balance needs --plan cp or cp-tp")
    check_shapes(a)
    mesh = parse_mesh(
        a.mesh or ("2x2" if a.plan in ("dp-tp", "dp-tp-sp", "cp-tp") else "2"),
        a.plan)

    doc = {"format": "dtensor.model_plan", "version": 1, "mesh": mesh,
           "model": build_model(a)}
    plan = build_plan(a)
    if plan is not None:
        doc["plan"] = plan
    text = dump(doc) + "\n"
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def dump(value, indent=0):
    """JSON with one op, declaration or style per line."""
    flat = json.dumps(value)
    if not isinstance(value, (dict, list)) or not value or (
            indent >= 4 and len(flat) + indent <= 150) or len(flat) + indent <= 60:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, list):
        items = [pad + dump(v, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    items = [pad + json.dumps(k) + ": " + dump(v, indent + 2)
             for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"


if __name__ == "__main__":
    main()

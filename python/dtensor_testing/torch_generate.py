#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Greedy generation with a KV cache in PyTorch eager: a hand-written Llama
for the model plans of `gen-model-plan.py --model llama` (docs/model-plan.md),
the oracle of the generation tests and the benchmarks' baseline "PyTorch
eager generating with a KV cache (hand-written, same threads)". Needs
PyTorch 2 and the safetensors package (scripts/torch-env.sh --python).

  python3 -m dtensor_testing.torch_generate PLAN --weights W.safetensors --prompt ids.npy
      [--prompt ids2.npy ...] --tokens N [--recompute] [--threads T]
      [--max-positions M]
  python3 -m dtensor_testing.torch_generate PLAN [--weights W.safetensors] --time C[,C...]
      [--recompute] [--threads T] [--warmup W] [--iters I] [--seed S]

The model's sizes come from the plan: layers (the `layers.N.attention.wq`
parameters), dim, ffn and vocab (parameter shapes), head dim (the `view`
to heads), query and key/value heads (wq's and wk's rows over the head
dim), rms_norm eps, rotary theta and the attention scale (op attributes),
the dtype (the parameters'; f32, f16 or bf16). The plan's batch and
sequence length are not used, nor its `plan` member. The weights are read
from the safetensors file under the plan's parameter names; a missing
weight is an error naming it.

The math is the plan's as dtensor_testing.torch_model runs it: rms_norm as
x * rsqrt(mean(x^2) + eps) * weight, rotary in the rotate_half convention
at each token's position, causal attention softmax(q k^T * scale) v (here
by F.scaled_dot_product_attention) with the key/value heads
repeat_interleave'd for grouped-query attention, SwiGLU w2(silu(w1 x) *
w3 x), the final norm, the LM head and the argmax (the first largest
logit) as the next token. f16/bf16 plans compute each op in f32 and round
its result to the dtype, as torch_model.py does.

Generation (greedy): with the cache, one prefill per prompt (its whole
length, written to the prompt's slot of a per-layer cache
[slots, max_positions, kv_heads, head_dim] preallocated for all prompts),
then decode steps of one token per active sequence, batched over the
sequences, each writing its key and value at its own position and
attending over its own slot's positions 0 .. p. With --recompute, each new
token by running the whole sequence so far (the LM head on its last
position only). Prints each prompt's generated ids, one line per prompt.
A prompt file is a 1-D (or [1, L]) integer .npy array of ids in [0, vocab).

--time: for each context C, the time to compute the next token of a C-token
sequence (random ids): a decode step with the cache (the token at position
C - 1 over C cached positions, after a prefill of C - 1 tokens; the step
rewrites the same position each time) and, with --recompute, the full
recomputation of the C tokens. After W warm-up steps, the median of I
steps; one JSON line per context:

  {"context": C, "decode_ms": ..., "recompute_ms": ... (null without
   --recompute), "decode_min_ms": ..., "recompute_min_ms": ...,
   "threads": T, "dtype": ..., "iters": I}

(the *_min_ms: the fastest step, steadier than the median on a busy machine).

Without --weights, --time uses random weights (seeded; values do not change
the time). --threads sets torch's intra-op threads (and OpenBLAS's, where
torch's BLAS is OpenBLAS) and one inter-op thread.

As a library:

  import torch_generate as tg
  model = tg.load_model("plan.json", "weights.safetensors")
  ids = tg.generate(model, [[1, 2, 3], [4, 5]], 8)             # cached
  ids = tg.generate(model, [[1, 2, 3], [4, 5]], 8, use_cache=False)
  logits = model.forward(torch.tensor([[1, 2, 3]]))            # [1, 3, V]
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

# The op kinds of one decoder block of gen-model-plan.py, in order.
BLOCK_OPS = ["rms_norm", "linear", "linear", "linear", "view", "view", "view",
             "rotary", "rotary", "transpose", "transpose", "transpose",
             "scaled_dot_product_attention", "transpose", "view", "linear",
             "add", "rms_norm", "linear", "silu", "linear", "mul", "linear",
             "add"]
LAYER_WEIGHTS = ["attention_norm.weight", "attention.wq.weight",
                 "attention.wk.weight", "attention.wv.weight",
                 "attention.wo.weight", "ffn_norm.weight",
                 "feed_forward.w1.weight", "feed_forward.w2.weight",
                 "feed_forward.w3.weight"]


class GenerateError(Exception):
    """A plan, weights file or request this script cannot run."""


# --- the model's configuration, from the plan ---------------------------------

class Config:
    """The sizes and constants of a gen-model-plan.py Llama."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in
                                     sorted(self.__dict__.items())) + ")"

    def gen_model_plan_args(self):
        """gen-model-plan.py flags for a plan of this configuration (the
        batch, sequence length and plan are the caller's)."""
        return ["--model", "llama", "--layers", str(self.layers),
                "--dim", str(self.dim), "--heads", str(self.heads),
                "--kv-heads", str(self.kv_heads), "--ffn", str(self.ffn),
                "--vocab", str(self.vocab), "--dtype", self.dtype_name,
                "--theta", repr(self.theta), "--eps", repr(self.eps)]


def _single(values, what):
    values = set(values)
    if len(values) != 1:
        raise GenerateError(f"the plan's {what} differ between ops "
                            f"({sorted(values, key=repr)}); one value is "
                            f"supported")
    return values.pop()


def config_from_plan(plan):
    """The Config of a plan written by `gen-model-plan.py --model llama`;
    GenerateError when the plan is not such a model."""
    if plan.get("format") != "dtensor.model_plan" or plan.get("version") != 1:
        raise GenerateError("not a dtensor.model_plan of version 1")
    model = plan["model"]
    params = {p["name"]: p for p in model.get("parameters", [])}
    ops = model["ops"]
    inputs = {t["name"] for t in model["inputs"]}
    if "tokens" not in inputs or "tok_embeddings.weight" not in params:
        raise GenerateError("not a Llama plan of gen-model-plan.py --model "
                            "llama (no tokens input or tok_embeddings)")
    layers = 0
    while f"layers.{layers}.attention.wq.weight" in params:
        layers += 1
    kinds = [op["op"] for op in ops]
    expected = (["embedding"] + BLOCK_OPS * layers +
                ["rms_norm", "linear", "argmax"])
    if kinds[:len(expected)] != expected or any(
            k not in ("view", "cross_entropy") for k in kinds[len(expected):]):
        raise GenerateError(
            f"the ops are not those of a {layers}-layer Llama of "
            f"gen-model-plan.py --model llama")
    dtypes = {p["dtype"] for p in params.values()}
    if len(dtypes) != 1 or next(iter(dtypes)) not in DTYPES:
        raise GenerateError(f"parameters of dtype(s) {sorted(dtypes)}; one of "
                            f"{', '.join(DTYPES)} is supported")
    dtype_name = dtypes.pop()
    dtype = DTYPES[dtype_name]

    def shape(name):
        return list(params[name]["shape"])

    vocab, dim = shape("tok_embeddings.weight")
    q_features = shape("layers.0.attention.wq.weight")[0] if layers else dim
    kv_features = shape("layers.0.attention.wk.weight")[0] if layers else dim
    ffn = shape("layers.0.feed_forward.w1.weight")[0] if layers else 0
    views = [op for op in ops if op["op"] == "view"
             and op.get("module", "").endswith(".attention")]
    head_dim = views[0]["shape"][-1] if views else dim
    if head_dim <= 0 or q_features % head_dim or kv_features % head_dim:
        raise GenerateError(f"head dim {head_dim} does not divide wq's "
                            f"{q_features} or wk's {kv_features} features")
    heads, kv_heads = q_features // head_dim, kv_features // head_dim
    if heads % kv_heads:
        raise GenerateError(f"{heads} query heads are not a multiple of "
                            f"{kv_heads} key/value heads")
    norms = [op for op in ops if op["op"] == "rms_norm"]
    eps = _single((op.get("eps", torch.finfo(dtype).eps) for op in norms),
                  "rms_norm eps")
    rotaries = [op for op in ops if op["op"] == "rotary"]
    for op in rotaries:
        if op.get("seq_dim", -3) not in (-3, 1) or "position_offset" in op \
                or len(op["inputs"]) != 1:
            raise GenerateError("rotary with seq_dim, position_offset or a "
                                "positions input is not supported")
    theta = float(_single((op.get("theta", 10000.0) for op in rotaries),
                          "rotary theta")) if rotaries else 10000.0
    sdpas = [op for op in ops if op["op"] == "scaled_dot_product_attention"]
    for op in sdpas:
        if not op.get("is_causal", False) or op.get("query_positions") or \
                len(op["inputs"]) != 3:
            raise GenerateError("attention must be causal without a mask")
    scale = _single((op.get("scale") for op in sdpas),
                    "attention scales") if sdpas else None
    if scale is None:
        scale = 1.0 / head_dim ** 0.5
    argmax = next(op for op in ops if op["op"] == "argmax")
    if argmax.get("dim") not in (-1, 2) or argmax.get("keepdim", False):
        raise GenerateError("the argmax must be over the vocabulary (dim -1)")
    return Config(layers=layers, dim=dim, heads=heads, kv_heads=kv_heads,
                  head_dim=head_dim, ffn=ffn, vocab=vocab, eps=float(eps),
                  theta=theta, scale=float(scale), dtype=dtype,
                  dtype_name=dtype_name)


def weight_shapes(cfg):
    """Parameter name -> shape, as the plan declares them."""
    shapes = {"tok_embeddings.weight": [cfg.vocab, cfg.dim]}
    q, kv = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
    layer = {"attention_norm.weight": [cfg.dim],
             "attention.wq.weight": [q, cfg.dim],
             "attention.wk.weight": [kv, cfg.dim],
             "attention.wv.weight": [kv, cfg.dim],
             "attention.wo.weight": [cfg.dim, q],
             "ffn_norm.weight": [cfg.dim],
             "feed_forward.w1.weight": [cfg.ffn, cfg.dim],
             "feed_forward.w2.weight": [cfg.dim, cfg.ffn],
             "feed_forward.w3.weight": [cfg.ffn, cfg.dim]}
    for i in range(cfg.layers):
        for name in LAYER_WEIGHTS:
            shapes[f"layers.{i}.{name}"] = layer[name]
    shapes["norm.weight"] = [cfg.dim]
    shapes["output.weight"] = [cfg.vocab, cfg.dim]
    return shapes


def load_weights(cfg, path):
    """The plan's parameters from a safetensors file."""
    from safetensors import safe_open
    shapes = weight_shapes(cfg)
    try:
        f = safe_open(path, framework="pt")
    except Exception as e:  # safetensors' own error type, or OSError
        raise GenerateError(f"{path}: {e}") from None
    with f:
        present = set(f.keys())
        missing = [n for n in shapes if n not in present]
        if missing:
            raise GenerateError(f"{path}: missing weight(s) "
                                f"{', '.join(missing)}")
        return {name: f.get_tensor(name) for name in shapes}


def random_weights(cfg, seed=0):
    """Seeded weights of the plan's shapes (for timing): linear weights
    N(0, 1/in), norm weights 1 + 0.1 N(0, 1), the embedding N(0, 1)."""
    g = torch.Generator().manual_seed(seed)
    weights = {}
    for name, shape in weight_shapes(cfg).items():
        w = torch.randn(shape, generator=g)
        if len(shape) == 1:
            w = 1 + 0.1 * w
        elif name != "tok_embeddings.weight":
            w = w / shape[1] ** 0.5
        weights[name] = w.to(cfg.dtype)
    return weights


# --- the model -------------------------------------------------------------------

class KVCache:
    """Per layer, keys and values [slots, max_positions, kv_heads, head_dim]
    in the model's dtype, allocated once."""

    def __init__(self, cfg, slots, max_positions):
        shape = (slots, max_positions, cfg.kv_heads, cfg.head_dim)
        self.slots, self.max_positions = slots, max_positions
        self.k = [torch.zeros(shape, dtype=cfg.dtype) for _ in range(cfg.layers)]
        self.v = [torch.zeros(shape, dtype=cfg.dtype) for _ in range(cfg.layers)]


class Llama:
    """The plan's Llama on one device. Weights are kept in f32 (f16/bf16
    values exactly); with an f16/bf16 plan every op's result is rounded to
    the dtype, as torch_model.py's ops compute."""

    def __init__(self, cfg, weights):
        self.cfg = cfg
        shapes = weight_shapes(cfg)
        missing = [n for n in shapes if n not in weights]
        if missing:
            raise GenerateError(f"missing weight(s) {', '.join(missing)}")
        for name, shape in shapes.items():
            t = weights[name]
            if list(t.shape) != shape or t.dtype != cfg.dtype:
                raise GenerateError(f"'{name}': expected {shape} "
                                    f"{cfg.dtype_name}, got {list(t.shape)} "
                                    f"{t.dtype}")
        self.half = cfg.dtype != torch.float32
        w = {n: weights[n].to(torch.float32).contiguous() for n in shapes}
        self.embedding = w["tok_embeddings.weight"]
        self.layers = [{n: w[f"layers.{i}.{n}"] for n in LAYER_WEIGHTS}
                       for i in range(cfg.layers)]
        self.norm = w["norm.weight"]
        self.output = w["output.weight"]
        self.groups = cfg.heads // cfg.kv_heads
        # rotary: theta^(-2i/D) and cos/sin of position * frequency, as
        # torch_model.py computes them (f32), for positions 0 .. n-1.
        d = cfg.head_dim
        self.inv_freq = 1.0 / (cfg.theta ** (
            torch.arange(0, d, 2, dtype=torch.float32) / d))
        self.cos = self.sin = torch.empty(0, d)

    # The plan's ops, each rounded to the dtype for f16/bf16 plans.
    def _round(self, x):
        return x.to(self.cfg.dtype).float() if self.half else x

    def _rms_norm(self, x, weight):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.cfg.eps)
        return self._round(self._round(y) * weight)

    def _linear(self, x, weight):
        return self._round(F.linear(x, weight))

    def _rope_table(self, n):
        if self.cos.shape[0] < n:
            n = max(n, 2 * self.cos.shape[0])
            pos = torch.arange(n, dtype=torch.float32)
            freqs = torch.outer(pos, self.inv_freq)
            emb = torch.cat([freqs, freqs], dim=-1)
            self.cos, self.sin = emb.cos(), emb.sin()

    def _rotary(self, x, cos, sin):
        # x [B, S, H, D], cos/sin [B, S, 1, D]: x cos + rotate_half(x) sin.
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return self._round(x * cos + rotated * sin)

    def _attend(self, q, k, v, mask=None, causal=False):
        # q [B, H, L, D]; k, v [B, KV, S, D], repeated to H heads.
        if self.groups > 1:
            k = k.repeat_interleave(self.groups, dim=1)
            v = v.repeat_interleave(self.groups, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           is_causal=causal,
                                           scale=self.cfg.scale)
        return self._round(o)

    def _block(self, i, h, cos, sin, attention):
        """Decoder block i on h [B, S, dim]; attention(i, q, k, v) gets the
        rotated q [B, S, H, D], k and v [B, S, KV, D] and returns
        [B, H, S, D]."""
        w, cfg = self.layers[i], self.cfg
        b, s, _ = h.shape
        xn = self._rms_norm(h, w["attention_norm.weight"])
        q = self._linear(xn, w["attention.wq.weight"]).view(b, s, -1, cfg.head_dim)
        k = self._linear(xn, w["attention.wk.weight"]).view(b, s, -1, cfg.head_dim)
        v = self._linear(xn, w["attention.wv.weight"]).view(b, s, -1, cfg.head_dim)
        q = self._rotary(q, cos, sin)
        k = self._rotary(k, cos, sin)
        o = attention(i, q, k, v).transpose(1, 2).reshape(b, s, -1)
        h = self._round(h + self._linear(o, w["attention.wo.weight"]))
        hn = self._rms_norm(h, w["ffn_norm.weight"])
        gate = self._round(F.silu(self._linear(hn, w["feed_forward.w1.weight"])))
        up = self._linear(hn, w["feed_forward.w3.weight"])
        ffn = self._linear(self._round(gate * up), w["feed_forward.w2.weight"])
        return self._round(h + ffn)

    def _embed(self, tokens):
        if tokens.numel() and (int(tokens.min()) < 0 or
                               int(tokens.max()) >= self.cfg.vocab):
            raise GenerateError(f"token ids must be in [0, {self.cfg.vocab})")
        return F.embedding(tokens.long(), self.embedding)

    def _head(self, h):
        return self._linear(self._rms_norm(h, self.norm), self.output)

    def _run(self, tokens, positions, attention, last_only):
        """The whole model on tokens [B, S] at positions [B, S]."""
        self._rope_table(int(positions.max()) + 1)
        cos = self.cos[positions].unsqueeze(2)  # [B, S, 1, D]
        sin = self.sin[positions].unsqueeze(2)
        h = self._embed(tokens)
        for i in range(self.cfg.layers):
            h = self._block(i, h, cos, sin, attention)
        return self._head(h[:, -1] if last_only else h)

    def _causal(self, i, q, k, v):
        return self._attend(q.transpose(1, 2), k.transpose(1, 2),
                            v.transpose(1, 2), causal=True)

    @torch.inference_mode()
    def forward(self, tokens, last_only=False):
        """Stateless: logits [B, S, vocab] of tokens [B, S] (positions
        0 .. S-1, causal), or [B, vocab] of the last position."""
        tokens = torch.as_tensor(tokens)
        b, s = tokens.shape
        positions = torch.arange(s).expand(b, s)
        return self._run(tokens, positions, self._causal, last_only)

    def new_cache(self, slots, max_positions):
        return KVCache(self.cfg, slots, max_positions)

    @torch.inference_mode()
    def prefill(self, cache, slot, tokens):
        """A prompt's tokens [S] at positions 0 .. S-1 into cache slot
        `slot`; returns the logits [vocab] of its last position."""
        tokens = torch.as_tensor(tokens).reshape(1, -1)
        s = tokens.shape[1]
        if s > cache.max_positions:
            raise GenerateError(f"a prompt of {s} tokens does not fit "
                                f"{cache.max_positions} cache positions")

        def attention(i, q, k, v):
            cache.k[i][slot, :s] = k[0]
            cache.v[i][slot, :s] = v[0]
            return self._causal(i, q, k, v)

        positions = torch.arange(s).unsqueeze(0)
        return self._run(tokens, positions, attention, last_only=True)[0]

    @torch.inference_mode()
    def decode(self, cache, slots, tokens, positions):
        """One token per sequence: tokens[b] at positions[b] of cache slot
        slots[b], attending over that slot's positions 0 .. positions[b];
        returns the logits [B, vocab]."""
        slots = torch.as_tensor(slots, dtype=torch.long)
        positions = torch.as_tensor(positions, dtype=torch.long)
        tokens = torch.as_tensor(tokens, dtype=torch.long).reshape(-1, 1)
        b = tokens.shape[0]
        length = int(positions.max()) + 1
        if length > cache.max_positions:
            raise GenerateError(f"position {length - 1} is past the cache's "
                                f"{cache.max_positions} positions")
        # The slots as a slice where they are 0 .. B-1 (no gather).
        in_order = bool((slots == torch.arange(b)).all())
        if bool((positions == length - 1).all()):
            mask = None
        else:  # key j of sequence b is visible when j <= positions[b]
            mask = (torch.arange(length) <= positions.unsqueeze(1)).reshape(
                b, 1, 1, length)

        def attention(i, q, k, v):
            cache.k[i][slots, positions] = k[:, 0].to(cache.k[i].dtype)
            cache.v[i][slots, positions] = v[:, 0].to(cache.v[i].dtype)
            if in_order:
                keys, values = cache.k[i][:b, :length], cache.v[i][:b, :length]
            else:
                keys, values = cache.k[i][slots, :length], cache.v[i][slots, :length]
            if self.half:
                keys, values = keys.float(), values.float()
            return self._attend(q.transpose(1, 2), keys.transpose(1, 2),
                                values.transpose(1, 2), mask=mask)

        return self._run(tokens, positions.unsqueeze(1), attention,
                         last_only=True)


def load_model(plan, weights=None, seed=0):
    """The Llama of `plan` (a path or the parsed JSON) with the weights of
    a safetensors file (or a name -> tensor dict); without, random ones."""
    if isinstance(plan, str):
        with open(plan) as f:
            plan = json.load(f)
    cfg = config_from_plan(plan)
    if weights is None:
        weights = random_weights(cfg, seed)
    elif isinstance(weights, str):
        weights = load_weights(cfg, weights)
    return Llama(cfg, weights)


# --- generation ------------------------------------------------------------------

def generate(model, prompts, max_new_tokens, use_cache=True,
             max_positions=None):
    """Greedy decoding: the `max_new_tokens` (an int, or one per prompt)
    next tokens of each prompt (a list of ids). With the cache: a prefill
    per prompt into its own slot, then decode steps batched over the
    sequences still generating; without: each token by recomputing the whole
    sequence so far. Returns the generated ids, a list per prompt."""
    prompts = [[int(t) for t in p] for p in prompts]
    if isinstance(max_new_tokens, int):
        counts = [max_new_tokens] * len(prompts)
    else:
        counts = [int(n) for n in max_new_tokens]
        if len(counts) != len(prompts):
            raise GenerateError("one max_new_tokens per prompt")
    if any(not p for p in prompts):
        raise GenerateError("a prompt is empty")
    if any(n < 0 for n in counts):
        raise GenerateError("max_new_tokens must not be negative")
    out = [[] for _ in prompts]
    if not use_cache:
        for s, prompt in enumerate(prompts):
            sequence = list(prompt)
            for _ in range(counts[s]):
                logits = model.forward(torch.tensor([sequence]), last_only=True)
                sequence.append(int(torch.argmax(logits[0])))
            out[s] = sequence[len(prompt):]
        return out
    # Positions written: a prompt's 0 .. L-1, then L .. L + n - 2 (the last
    # new token is never fed back).
    needed = max([len(p) + n - 1 for p, n in zip(prompts, counts) if n] or [0])
    if max_positions is None:
        max_positions = needed
    elif max_positions < needed:
        raise GenerateError(f"--max-positions {max_positions}: {needed} needed")
    cache = model.new_cache(len(prompts), max(max_positions, 1))
    for s, prompt in enumerate(prompts):
        if counts[s]:
            logits = model.prefill(cache, s, prompt)
            out[s].append(int(torch.argmax(logits)))
    while True:
        active = [s for s in range(len(prompts)) if len(out[s]) < counts[s]]
        if not active:
            return out
        tokens = [out[s][-1] for s in active]
        positions = [len(prompts[s]) + len(out[s]) - 1 for s in active]
        logits = model.decode(cache, active, tokens, positions)
        for s, t in zip(active, torch.argmax(logits, dim=-1).tolist()):
            out[s].append(t)


# --- timing ----------------------------------------------------------------------

def set_threads(threads):
    """Intra-op threads for torch and, where torch's BLAS is OpenBLAS (which
    torch does not configure itself; Debian's torch), for OpenBLAS; one
    inter-op thread (as dtensor_bench.peers.torch_tp). A torch on MKL (PyPI's)
    does not load the system's OpenBLAS and its idle thread pool."""
    import ctypes
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process
    if "BLAS_INFO=open" not in torch.__config__.show():
        return
    try:
        ctypes.CDLL("libopenblas.so.0").openblas_set_num_threads(threads)
    except (OSError, AttributeError):
        pass


def step_ms(step, warmup, iters):
    """The median and the minimum time of `step` in ms."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def time_context(model, context, recompute, warmup, iters, seed=0,
                 max_positions=None):
    """The decode step's (and the recomputation's) median and minimum time
    in ms for the next token of a `context`-token sequence."""
    if context < 1:
        raise GenerateError("a context must be at least 1 token")
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, model.cfg.vocab, (context,), generator=g)
    cache = model.new_cache(1, max(max_positions or 0, context))
    if context > 1:
        model.prefill(cache, 0, tokens[:-1])
    last, position = [int(tokens[-1])], [context - 1]
    decode = step_ms(lambda: model.decode(cache, [0], last, position),
                     warmup, iters)
    recomputed = (None, None)
    if recompute:
        batch = tokens.unsqueeze(0)
        recomputed = step_ms(lambda: model.forward(batch, last_only=True),
                             warmup, iters)
    return {"context": context, "decode_ms": decode[0],
            "recompute_ms": recomputed[0], "decode_min_ms": decode[1],
            "recompute_min_ms": recomputed[1]}


# --- command line ----------------------------------------------------------------

def read_prompt(path):
    ids = np.load(path)
    if ids.ndim == 2 and ids.shape[0] == 1:
        ids = ids[0]
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise GenerateError(f"{path}: expected a 1-D (or [1, L]) integer "
                            f"array, got {ids.dtype} {list(ids.shape)}")
    return ids.tolist()


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("plan")
    p.add_argument("--weights", metavar="FILE.safetensors")
    p.add_argument("--prompt", action="append", default=[], metavar="IDS.npy")
    p.add_argument("--tokens", type=int, help="new tokens per prompt")
    p.add_argument("--recompute", action="store_true",
                   help="without the cache (with --time: also time it)")
    p.add_argument("--threads", type=int, help="torch intra-op threads")
    p.add_argument("--max-positions", type=int,
                   help="cache positions per slot (default: what is needed)")
    p.add_argument("--time", metavar="C[,C...]",
                   help="time the decode step at these contexts")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    try:
        if a.threads:
            set_threads(a.threads)
        if a.time:
            contexts = [int(c) for c in a.time.split(",")]
            if a.iters < 1 or a.warmup < 0:
                raise GenerateError("--iters must be positive, --warmup not "
                                    "negative")
            model = load_model(a.plan, a.weights, a.seed)
            for context in contexts:
                result = time_context(model, context, a.recompute, a.warmup,
                                      a.iters, a.seed, a.max_positions)
                result.update(threads=torch.get_num_threads(),
                              dtype=model.cfg.dtype_name, iters=a.iters)
                print(json.dumps(result), flush=True)
            return
        if not a.weights or not a.prompt or a.tokens is None:
            p.error("--weights, --prompt and --tokens are needed (or --time)")
        model = load_model(a.plan, a.weights)
        prompts = [read_prompt(path) for path in a.prompt]
        for ids in generate(model, prompts, a.tokens, not a.recompute,
                            a.max_positions):
            print(" ".join(str(t) for t in ids))
    except (GenerateError, OSError, ValueError) as e:
        sys.exit(f"torch_generate: {e}")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The Llama of gen_model_plan's plans in PyTorch as nn.Modules (and the
MLP), with what builds and feeds it: the kind and sizes of a plan's model
(model_config), seeded global inputs and weights (random_tensors), those
make_test_tensors wrote (file_tensors).

The module-based Llama (build_model) is the one the PyTorch 2 peers of the
benchmarks parallelize (dtensor_bench.peers.torch_dtensor with DTensor's
parallelize_module, dtensor_bench.peers.torch_cp with context_parallel).
Two other PyTorch Llamas stay separate on purpose, each with numerics of
its own that its tests' tolerances were set for:
dtensor_bench.peers.torch_tp writes the tensor-parallel forward by hand
(per-rank shards, explicit all-reduces, attention as matmul-softmax-matmul
with a mask), and dtensor_testing.torch_generate's Llama rounds every op to
the plan's f16/bf16 dtype as torch_model does and decodes with a KV cache.

Stdlib only at import: torch is imported inside the functions, so the
benchmark's driver can read plans without it."""

import math
import os


# --- the model's sizes, from the plan ------------------------------------------

def model_config(plan):
    """The kind and sizes of a gen-model-plan.py model, read from its
    declarations and ops."""
    model = plan["model"]
    params = {p["name"]: p["shape"] for p in model.get("parameters", [])}
    inputs = {t["name"]: t for t in model["inputs"]}
    ops = model["ops"]
    for t in list(inputs.values()) + model.get("parameters", []):
        if t["dtype"] not in ("f32", "i64"):
            raise SystemExit(f"bench_torch: only f32 plans are supported, "
                             f"'{t['name']}' is {t['dtype']}")
    cfg = {}
    if "fc1.weight" in params:
        cfg["kind"] = "mlp"
        cfg["tokens"], cfg["dim"] = inputs["x"]["shape"]
        cfg["ffn"] = params["fc1.weight"][0]
        gelu = [op for op in ops if op["op"] == "gelu"]
        cfg["approximate"] = gelu[0].get("approximate", "none")
        return cfg
    cfg["kind"] = "llama" if "tokens" in inputs else "block"
    shape = inputs["tokens" if cfg["kind"] == "llama" else "x"]["shape"]
    cfg["batch"], cfg["seq"] = shape[0], shape[1]
    cfg["layers"] = len([n for n in params if n.endswith(".attention.wq.weight")])
    cfg["dim"] = params["layers.0.attention.wq.weight"][1]
    cfg["ffn"] = params["layers.0.feed_forward.w1.weight"][0]
    view = next(op for op in ops if op["op"] == "view")
    cfg["head_dim"] = view["shape"][-1]
    cfg["heads"] = cfg["dim"] // cfg["head_dim"]
    norm = next(op for op in ops if op["op"] == "rms_norm")
    cfg["eps"] = norm.get("eps")
    rotary = next(op for op in ops if op["op"] == "rotary")
    cfg["theta"] = rotary.get("theta", 10000.0)
    attention = next(op for op in ops
                     if op["op"] == "scaled_dot_product_attention")
    cfg["causal"] = attention.get("is_causal", False)
    if cfg["kind"] == "llama":
        cfg["vocab"] = params["tok_embeddings.weight"][0]
    return cfg


# --- tensors ---------------------------------------------------------------------

def random_tensors(plan, seed):
    """Global inputs and weights of the plan's shapes: linear weights
    N(0, 1/in) (activations keep unit scale), norm weights 1 + 0.1 N(0, 1),
    biases 0.1 N(0, 1), float inputs and embedding tables N(0, 1), token
    ids uniform over the vocabulary."""
    import torch
    gen = torch.Generator().manual_seed(seed)
    model = plan["model"]
    vocab = {p["name"]: p["shape"][0] for p in model.get("parameters", [])
             if p["name"].endswith("tok_embeddings.weight")}
    tensors = {}
    for t in model["inputs"]:
        if t["dtype"] == "i64":
            high = next(iter(vocab.values()), 16)
            tensors[t["name"]] = torch.randint(0, high, t["shape"],
                                               generator=gen)
        else:
            tensors[t["name"]] = torch.randn(t["shape"], generator=gen)
    for p in model.get("parameters", []):
        name, shape = p["name"], p["shape"]
        w = torch.randn(shape, generator=gen)
        if name.endswith("norm.weight"):
            w = 1 + 0.1 * w
        elif len(shape) == 1:
            w = 0.1 * w
        elif "embeddings" not in name:
            w = w / math.sqrt(shape[1])
        tensors[name] = w
    return tensors


def file_tensors(plan, directory):
    """The inputs and weights make-test-tensors.py wrote to `directory`."""
    from dtensor_testing import torch_model
    tensors = torch_model.load_safetensors(
        os.path.join(directory, "weights.safetensors"))
    decls = torch_model.declarations(plan)
    for t in plan["model"]["inputs"]:
        tensors[t["name"]] = torch_model.load_npy(
            os.path.join(directory, t["name"] + ".npy"), decls[t["name"]][1])
    return tensors


# --- the models -------------------------------------------------------------------

def build_model(cfg):
    """The plan's model as an nn.Module (whole, not yet parallelized)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(cfg["dim"], cfg["ffn"])
            self.fc2 = nn.Linear(cfg["ffn"], cfg["dim"])

        def forward(self, x):
            return self.fc2(F.gelu(self.fc1(x), approximate=cfg["approximate"]))

    def rotary(x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            d = cfg["dim"]
            self.wq = nn.Linear(d, d, bias=False)
            self.wk = nn.Linear(d, d, bias=False)
            self.wv = nn.Linear(d, d, bias=False)
            self.wo = nn.Linear(d, d, bias=False)

        def forward(self, x, cos, sin):
            b, s, hd = x.shape[0], x.shape[1], cfg["head_dim"]
            # -1: the heads of this rank (colwise outputs are local).
            q = rotary(self.wq(x).view(b, s, -1, hd), cos, sin).transpose(1, 2)
            k = rotary(self.wk(x).view(b, s, -1, hd), cos, sin).transpose(1, 2)
            v = self.wv(x).view(b, s, -1, hd).transpose(1, 2)
            out = F.scaled_dot_product_attention(q, k, v,
                                                 is_causal=cfg["causal"])
            return self.wo(out.transpose(1, 2).reshape(b, s, -1))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            d, f = cfg["dim"], cfg["ffn"]
            self.w1 = nn.Linear(d, f, bias=False)
            self.w2 = nn.Linear(f, d, bias=False)
            self.w3 = nn.Linear(d, f, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm = nn.RMSNorm(cfg["dim"], eps=cfg["eps"])
            self.attention = Attention()
            self.ffn_norm = nn.RMSNorm(cfg["dim"], eps=cfg["eps"])
            self.feed_forward = FeedForward()

        def forward(self, x, cos, sin):
            h = x + self.attention(self.attention_norm(x), cos, sin)
            return h + self.feed_forward(self.ffn_norm(h))

    class Llama(nn.Module):
        def __init__(self, embed):
            super().__init__()
            if embed:
                self.tok_embeddings = nn.Embedding(cfg["vocab"], cfg["dim"])
            self.layers = nn.ModuleList(Block() for _ in range(cfg["layers"]))
            if embed:
                self.norm = nn.RMSNorm(cfg["dim"], eps=cfg["eps"])
                self.output = nn.Linear(cfg["dim"], cfg["vocab"], bias=False)
            # The RoPE tables (rotate_half form), computed once.
            d, seq = cfg["head_dim"], cfg["seq"]
            inv_freq = 1.0 / (cfg["theta"] ** (
                torch.arange(0, d, 2, dtype=torch.float32) / d))
            freqs = torch.outer(torch.arange(seq, dtype=torch.float32),
                                inv_freq)
            emb = torch.cat([freqs, freqs], dim=-1)
            self.cos = emb.cos().view(1, seq, 1, d)
            self.sin = emb.sin().view(1, seq, 1, d)

        def forward(self, x):
            h = self.tok_embeddings(x) if hasattr(self, "tok_embeddings") else x
            for layer in self.layers:
                h = layer(h, self.cos, self.sin)
            if not hasattr(self, "output"):
                return h
            return torch.argmax(self.output(self.norm(h)), dim=-1)

    if cfg["kind"] == "mlp":
        return Mlp()
    return Llama(embed=cfg["kind"] == "llama")

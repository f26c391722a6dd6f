#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The outputs of kv-decode.json computed with PyTorch, independently of
the compiler and of dtensor_testing.torch_model:
- index_select: torch.index_select; an index outside the dim (which
  PyTorch rejects) gives zeros, the model plan's rule, written as a select
  of a clamped index_select;
- rotary: Hugging Face Llama's LlamaRotaryEmbedding and
  apply_rotary_pos_emb (rotate_half) at the given position_ids;
- attention with query positions: F.scaled_dot_product_attention with
  enable_gqa and the boolean mask key j <= start[b] + i, which PyTorch
  turns into zeros for a query with no allowed key.

  kv-reference.py kv-decode.json DIR OUT   (inputs DIR/<name>.npy, writes
                                            OUT/<output>.npy)"""

import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def index_select(x, dim, index):
    size = x.shape[dim]
    valid = (index >= 0) & (index < size)
    picked = torch.index_select(x, dim, index.clamp(0, size - 1))
    shape = [1] * x.dim()
    shape[dim] = -1
    return torch.where(valid.view(shape), picked, torch.zeros_like(picked))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def hf_rope(x, position_ids, theta, unsqueeze_dim):
    """transformers' LlamaRotaryEmbedding.forward and apply_rotary_pos_emb:
    x [B, S, H, D] (unsqueeze_dim 2) or [B, H, S, D] (1), position_ids
    [B, S]."""
    dim = x.shape[-1]
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64)
                                .float() / dim))
    inv_freq_expanded = inv_freq[None, :, None].float().expand(
        position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()
             ).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(x.dtype).unsqueeze(unsqueeze_dim)
    sin = emb.sin().to(x.dtype).unsqueeze(unsqueeze_dim)
    return (x * cos) + (rotate_half(x) * sin)


def main():
    plan_path, data, out = sys.argv[1:4]
    model = json.load(open(plan_path))["model"]
    t = {i["name"]: torch.from_numpy(np.load(os.path.join(data, i["name"] + ".npy")))
         for i in model["inputs"]}
    B, L = t["q"].shape[:2]
    steps = torch.arange(L)

    y = {}
    y["k_rows"] = index_select(t["cache_k"], 0, t["slots"])
    v_rows = index_select(t["cache_v"], 0, t["slots"])
    y["k_times"] = index_select(t["cache_k"], 1, t["times"].long())
    # [B] positions: row b's tokens at start[b] + 0 .. L-1.
    row_positions = t["start"][:, None] + steps[None, :]
    y["q_rot"] = hf_rope(t["q"], row_positions, 500.0, 2)
    y["k_new_rot"] = hf_rope(t["k_new"], t["token_pos"].long(), 500.0, 2)
    y["q_bhsd_rot"] = hf_rope(t["q"].transpose(1, 2), t["token_pos"].long(),
                              10000.0, 1)
    q = y["q_rot"].transpose(1, 2)
    k = y["k_rows"].transpose(1, 2)
    v = v_rows.transpose(1, 2)
    keys = torch.arange(k.shape[-2])
    allowed = keys[None, None, :] <= row_positions[:, :, None]  # [B, L, T]
    y["attn"] = F.scaled_dot_product_attention(
        q, k, v, attn_mask=allowed[:, None], enable_gqa=True)
    tokens = y["attn"].transpose(1, 2).reshape(B * L, -1)
    y["last_token"] = index_select(tokens, 0, t["last"])

    os.makedirs(out, exist_ok=True)
    for name in model["outputs"]:
        np.save(os.path.join(out, name + ".npy"), y[name].numpy())


if __name__ == "__main__":
    main()

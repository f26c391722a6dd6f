# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The runtime's CPU attention kernels (forward with the log-sum-exp, then
the backward) against PyTorch's scaled_dot_product_attention and its
autograd in f64, through the ctypes harness of test/Kernels/Inputs.

Usage: attention_backward_check.py LIBRARY
Prints one line per case and "ok" at the end; exits non-zero on a mismatch.
"""

import ctypes
import sys

import torch
import torch.nn.functional as F


def pointer(tensor):
    return ctypes.c_void_p(tensor.data_ptr()) if tensor is not None else None


def positions_mask(positions, queries, keys):
    """Causal with per-row start positions: query i of row b sees key j iff
    j <= positions[b] + i (a [B, 1, L, S] boolean mask)."""
    i = torch.arange(queries).view(1, 1, queries, 1)
    j = torch.arange(keys).view(1, 1, 1, keys)
    return j <= positions.view(-1, 1, 1, 1) + i


def run_case(lib, name, batch, heads, kv_heads, queries, keys, features,
             value_features, causal=False, mask=False, positions=False,
             dtype=torch.float64, seed=0):
    generator = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.rand(*shape, generator=generator, dtype=torch.float64) * 4 - 2

    q = rand(batch, heads, queries, features)
    k = rand(batch, kv_heads, keys, features)
    v = rand(batch, kv_heads, keys, value_features)
    d_out = rand(batch, heads, queries, value_features)
    scale = 1.0 / (features ** 0.5)
    additive = None
    allowed = None
    if mask:
        additive = rand(batch, heads, queries, keys)
        dropped = torch.rand(batch, heads, queries, keys, generator=generator) < 0.25
        additive = additive.masked_fill(dropped, float("-inf"))
        additive[0, 0, -1, :] = float("-inf")  # a query that sees no key
    starts = None
    if positions:
        starts = torch.randint(-1, keys, (batch,), generator=generator, dtype=torch.int64)
        allowed = positions_mask(starts, queries, keys)
    elif causal:
        allowed = positions_mask(torch.zeros(batch, dtype=torch.int64), queries, keys)

    # PyTorch in f64: the reference, its gradients by autograd. Queries that
    # see no key are 0 in the kernel (and their gradients); PyTorch gives
    # NaN there, so the reference zeroes them out of the loss.
    bias = torch.zeros(batch, heads, queries, keys, dtype=torch.float64)
    if additive is not None:
        bias = bias + additive
    if allowed is not None:
        bias = bias.masked_fill(~allowed, float("-inf"))
    sees = (bias > float("-inf")).any(dim=-1, keepdim=True)
    safe_bias = torch.where(sees, bias, torch.zeros_like(bias))
    tq, tk, tv = (t.clone().requires_grad_() for t in (q, k, v))
    ref = F.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=safe_bias, scale=scale,
        enable_gqa=heads != kv_heads)
    ref = torch.where(sees, ref, torch.zeros_like(ref))
    (ref * d_out).sum().backward()

    # The kernels, in `dtype`, on contiguous copies.
    is_double = 1 if dtype == torch.float64 else 0
    shape = (ctypes.c_int64 * 7)(batch, heads, kv_heads, queries, keys,
                                 features, value_features)
    qc, kc, vc, dc = (t.to(dtype).contiguous() for t in (q, k, v, d_out))
    mc = additive.to(dtype).contiguous() if additive is not None else None
    pc = starts.contiguous() if starts is not None else None
    out = torch.empty(batch, heads, queries, value_features, dtype=dtype)
    lse = torch.empty(batch, heads, queries, dtype=dtype)
    lib.dtensor_test_attention_forward(
        is_double, shape, int(causal or positions), pointer(mc), pointer(pc),
        ctypes.c_double(scale), pointer(qc), pointer(kc), pointer(vc),
        pointer(out), pointer(lse))
    grads = [torch.full_like(t, float("nan")) for t in (qc, kc, vc)]
    lib.dtensor_test_attention_backward(
        is_double, shape, int(causal or positions), pointer(mc), pointer(pc),
        ctypes.c_double(scale), pointer(qc), pointer(kc), pointer(vc),
        pointer(out), pointer(dc), pointer(lse), *(pointer(g) for g in grads))

    tolerance = 1e-10 if dtype == torch.float64 else 2e-4
    worst = 0.0
    for label, got, want in (("out", out, ref.detach()),
                             ("d_query", grads[0], tq.grad),
                             ("d_key", grads[1], tk.grad),
                             ("d_value", grads[2], tv.grad)):
        error = ((got.double() - want).abs() / (1 + want.abs())).max().item()
        if not error <= tolerance:
            print(f"FAIL {name}: {label} differs from PyTorch by {error:.3g} "
                  f"(tolerance {tolerance:g})")
            return False
        worst = max(worst, error)
    print(f"{name}: max relative error {worst:.2g}")
    return True


def main():
    lib = ctypes.CDLL(sys.argv[1])
    torch.set_num_threads(1)
    cases = [
        ("plain f64", dict(batch=2, heads=3, kv_heads=3, queries=37, keys=131,
                           features=16, value_features=16)),
        ("causal f64 E=64", dict(batch=1, heads=2, kv_heads=2, queries=70,
                                 keys=70, features=64, value_features=64,
                                 causal=True)),
        ("causal GQA f64 E=128 Ev=32", dict(batch=1, heads=4, kv_heads=2,
                                            queries=33, keys=65, features=128,
                                            value_features=32, causal=True)),
        ("mask MQA f64 E=7 Ev=5", dict(batch=2, heads=4, kv_heads=1,
                                       queries=19, keys=45, features=7,
                                       value_features=5, mask=True)),
        ("positions f64 E=8", dict(batch=3, heads=2, kv_heads=1, queries=6,
                                   keys=150, features=8, value_features=8,
                                   positions=True)),
        ("causal mask f32 E=32", dict(batch=2, heads=2, kv_heads=2,
                                      queries=40, keys=100, features=32,
                                      value_features=32, causal=True,
                                      mask=True, dtype=torch.float32)),
    ]
    ok = all([run_case(lib, name, seed=seed, **case)
              for seed, (name, case) in enumerate(cases)])
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

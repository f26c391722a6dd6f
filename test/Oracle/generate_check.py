# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks dtensor_testing.torch_generate, the hand-written PyTorch Llama with a
KV cache, on one plan of gen-model-plan.py --model llama and its weights
(dtensor_testing.make_test_tensors). Run with the python of scripts/torch-env.sh.

  generate_check.py PLAN --weights W.safetensors --work DIR
      [--prompts 7,1,13,4] [--tokens 8] [--seqs 1,5,16] [--seed S]

Prints one line per check and exits 1 when one failed:

  config <plan>: <the sizes read from the plan>
  ok <plan> generate: ...       greedy generation with the cache, the
      prompts decoded together (batched over the cache slots), equals
      full recomputation and each prompt generated alone (slot isolation),
      token for token; also with a different token count per prompt (the
      batch shrinks as sequences finish)
  ok <plan> logits <B>x<S>: max rel <e>, next_token exact
      the stateless forward's logits against dtensor_testing.torch_model's
      run_plan (its `logits` value; the plan's output is the argmax) on the
      plan itself and on plans gen-model-plan.py writes with the same
      sizes and --batch 1 --seq S, with the recompute path's last-position
      logits too. Largest error relative to the largest logit: <= 1e-5
      (f32), <= 1e-2 (f16, bf16); the argmax exactly.
"""

import argparse
import os
import subprocess
import sys

import torch

from dtensor_testing import torch_generate as tg
from dtensor_testing import torch_model as tm

failed = []


def report(ok, line, detail=""):
    print(("ok " if ok else "MISMATCH ") + line + (detail if not ok else ""))
    if not ok:
        failed.append(line)


def check_generate(name, model, prompts, tokens):
    cached = tg.generate(model, prompts, tokens)
    recomputed = tg.generate(model, prompts, tokens, use_cache=False)
    alone = [tg.generate(model, [p], tokens)[0] for p in prompts]
    lengths = " ".join(str(len(p)) for p in prompts)
    ok = cached == recomputed == alone and all(len(c) == tokens for c in cached)
    report(ok, f"{name} generate: cache (batched) == recompute == cache (each "
               f"alone): {len(prompts)} prompts of {lengths} tokens, {tokens} "
               f"new tokens each",
           f"\n  cached     {cached}\n  recomputed {recomputed}\n"
           f"  alone      {alone}")
    # Uneven counts: sequences leave the decode batch as they finish; the
    # slots that stay are no longer 0 .. B-1.
    counts = [max(tokens - 3 * i, 1) for i in range(len(prompts))][::-1]
    uneven = tg.generate(model, prompts, counts)
    ok = all(u == r[:n] for u, r, n in zip(uneven, recomputed, counts))
    report(ok, f"{name} generate uneven: {' '.join(map(str, counts))} new "
               f"tokens, prefixes of the recomputed ones",
           f"\n  cached     {uneven}\n  recomputed {recomputed}")


def check_logits(name, model, plan, weights, tokens, tolerance):
    ref = tm.run_plan(plan, dict(weights, tokens=tokens), return_all=True)
    expected = ref["logits"].float()
    got = model.forward(tokens)
    last = model.forward(tokens, last_only=True)
    scale = float(expected.abs().max()) or 1.0
    err = float((got - expected).abs().max()) / scale
    err_last = float((last - expected[:, -1]).abs().max()) / scale
    differ = int((got.argmax(-1) != ref["next_token"]).sum())
    b, s = tokens.shape
    ok = err <= tolerance and err_last <= tolerance and differ == 0
    print(f"{'ok' if ok else 'MISMATCH'} {name} logits {b}x{s}: max rel "
          f"{max(err, err_last):.3g}, next_token "
          f"{'exact' if differ == 0 else f'{differ} of {b * s} differ'}")
    if not ok:
        failed.append(f"{name} logits {b}x{s}")


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("plan")
    p.add_argument("--weights", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--prompts", default="7,1,13,4")
    p.add_argument("--tokens", type=int, default=8)
    p.add_argument("--seqs", default="1,5,16")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    torch.set_num_threads(1)
    name = os.path.basename(a.plan)
    plan = tm.load_plan(a.plan)
    model = tg.load_model(plan, a.weights)
    c = model.cfg
    print(f"config {name}: layers {c.layers} dim {c.dim} heads {c.heads} "
          f"kv_heads {c.kv_heads} head_dim {c.head_dim} ffn {c.ffn} vocab "
          f"{c.vocab} eps {c.eps:g} theta {c.theta:g} {c.dtype_name}")
    g = torch.Generator().manual_seed(a.seed)
    prompts = [torch.randint(0, c.vocab, (int(n),), generator=g).tolist()
               for n in a.prompts.split(",")]
    check_generate(name, model, prompts, a.tokens)

    weights = tm.load_safetensors(a.weights)
    tolerance = 1e-5 if c.dtype_name == "f32" else 1e-2
    tokens = next(t for t in plan["model"]["inputs"] if t["name"] == "tokens")
    check_logits(name, model, plan, weights,
                 torch.randint(0, c.vocab, tokens["shape"], generator=g),
                 tolerance)
    for seq in [int(s) for s in a.seqs.split(",")]:
        path = os.path.join(a.work, f"seq{seq}.json")
        subprocess.run([sys.executable, "-m", "dtensor_testing.gen_model_plan",
                        "--plan", "none", "--batch", "1", "--seq", str(seq),
                        "-o", path] + c.gen_model_plan_args(), check=True)
        check_logits(f"gen-model-plan {name}", model, tm.load_plan(path),
                     weights, torch.randint(0, c.vocab, (1, seq), generator=g),
                     tolerance)
    if failed:
        sys.exit(f"generate_check: {len(failed)} check(s) failed")


if __name__ == "__main__":
    main()

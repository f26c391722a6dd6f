# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dtensor-sample (runtime/tooling's Sampling.h) against Hugging Face
transformers' logits processors in float64: for random logits and each
setting (temperature, top-k, top-p, min-p, repetition penalty, their mix,
logit_bias, presence and frequency penalties as OpenAI defines them), the
filtered, renormalised probabilities are equal within 1e-6; 20000 seeded
draws pass a chi-square test (p > 1e-4) against those probabilities; the
seeded token is the same when asked again."""

import argparse
import json
import subprocess
import sys

import numpy as np
import torch
from transformers.generation.logits_process import (
    LogitsProcessorList, MinPLogitsWarper, RepetitionPenaltyLogitsProcessor,
    SequenceBiasLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper,
    TopPLogitsWarper)

VOCAB = 64
DRAWS = 20000
SETTINGS = [
    {"temperature": 1.0},
    {"temperature": 0.7},
    {"temperature": 1.3, "top_k": 8},
    {"temperature": 0.9, "top_p": 0.8},
    {"temperature": 1.0, "min_p": 0.05},
    {"temperature": 1.0, "repetition_penalty": 1.3},
    {"temperature": 0.8, "top_k": 20, "top_p": 0.9, "min_p": 0.02,
     "repetition_penalty": 1.2},
    {"temperature": 1.0, "logit_bias": {"3": 5.0, "7": -100.0}},
    {"temperature": 1.0, "presence_penalty": 0.5, "frequency_penalty": 0.7},
]


def chi2_survival(statistic, degrees):
    """P(X >= statistic) for X chi-square with `degrees` degrees of freedom:
    the regularised upper incomplete gamma function Q(k/2, x/2)."""
    return float(torch.special.gammaincc(
        torch.tensor(degrees / 2, dtype=torch.float64),
        torch.tensor(statistic / 2, dtype=torch.float64)))


def reference(logits, prompt, generated, params):
    """The probabilities transformers' processors leave, in float64."""
    ids = torch.tensor([prompt + generated])
    scores = torch.tensor([logits], dtype=torch.float64)
    processors = LogitsProcessorList()
    if params.get("logit_bias"):
        processors.append(SequenceBiasLogitsProcessor(
            {(int(k),): v for k, v in params["logit_bias"].items()}))
    if params.get("repetition_penalty", 1.0) != 1.0:
        processors.append(
            RepetitionPenaltyLogitsProcessor(params["repetition_penalty"]))
    scores = processors(ids, scores)
    # OpenAI's presence and frequency penalties (no transformers processor):
    # over the generated tokens.
    counts = np.bincount(generated, minlength=VOCAB)
    scores = scores - torch.tensor(
        params.get("frequency_penalty", 0.0) * counts +
        params.get("presence_penalty", 0.0) * (counts > 0))
    warpers = LogitsProcessorList()
    if params.get("temperature", 1.0) != 1.0:
        warpers.append(TemperatureLogitsWarper(params["temperature"]))
    if params.get("top_k"):
        warpers.append(TopKLogitsWarper(params["top_k"]))
    if params.get("top_p", 1.0) < 1.0:
        warpers.append(TopPLogitsWarper(params["top_p"]))
    if params.get("min_p"):
        warpers.append(MinPLogitsWarper(params["min_p"]))
    scores = warpers(ids, scores)
    return torch.softmax(scores, dim=-1)[0].numpy()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(3)
    requests, expected = [], []
    for index, params in enumerate(SETTINGS):
        logits = (rng.standard_normal(VOCAB) * 2).astype(np.float32)
        prompt = [int(t) for t in rng.integers(0, VOCAB, 6)]
        generated = [int(t) for t in rng.integers(0, VOCAB, 5)]
        request = {"logits": logits.tolist(), "prompt": prompt,
                   "generated": generated, "draws": DRAWS,
                   "params": dict(params, seed=1000 * index)}
        for choice in (0, 0, 1):
            requests.append(dict(request, choice=choice))
        expected.append(reference(logits.astype(np.float64).tolist(), prompt,
                                  generated, params))
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([args.tool], input=lines.encode(),
                          stdout=subprocess.PIPE, check=True)
    answers = [json.loads(l) for l in done.stdout.decode().splitlines()]
    failures = 0
    for index, params in enumerate(SETTINGS):
        first, again, other = answers[3 * index:3 * index + 3]
        probs = np.array(first["probs"])
        error = float(np.abs(probs - expected[index]).max())
        kept = expected[index] > 0
        counts = np.array(first["counts"])
        # Chi-square over the tokens the reference keeps; none drawn
        # elsewhere.
        want = expected[index][kept] * DRAWS
        statistic = float(((counts[kept] - want) ** 2 / want).sum())
        p_value = chi2_survival(statistic, int(kept.sum()) - 1)
        ok = (error <= 1e-6 and counts[~kept].sum() == 0 and p_value > 1e-4
              and first["token"] == again["token"])
        failures += not ok
        print(f"{'ok' if ok else 'FAIL'}: {json.dumps(params)}: "
              f"{int(kept.sum())} tokens kept, max |p - HF| "
              f"{'<= 1e-6' if error <= 1e-6 else f'= {error:.3g}'}, "
              f"chi-square p {'> 1e-4' if p_value > 1e-4 else p_value}, "
              f"seeded token repeatable")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

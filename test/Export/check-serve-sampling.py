#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Seeded sampling and logprobs of dtensor-server on an exported Hugging
Face model (--config: the recompute server), or on a KV-cache artifact of
dtensor_testing.gen_model_plan --kv-cache --logits-output (its logits
computed by dtensor_testing.torch_generate's PyTorch Llama of --torch-plan,
the stateless plan of the same sizes, with the same weights), on the
artifacts of each mesh given (1 and 2 ranks):

- a seeded request (temperature, top-k, top-p, min-p, repetition and
  frequency penalties, logit_bias, n = 2, logprobs = 3) gives the same
  tokens on every mesh, alone and batched with other requests;
- those tokens are the draws of a re-implementation here: transformers'
  logits processors on the Hugging Face model's logits (float64), then the
  server's documented counter-based uniform number (splitmix64 of seed,
  choice, token index) through the cumulative distribution;
- the logprobs are log_softmax of the model's logits (within 1e-4), the
  top ones its largest;
- bad parameters get 400 with a message;
- with --tokenizer DIR (a folder with a chat template), on the last
  artifact: the openai client streams a seeded sampled chat whose token
  ids are the reference draws after apply_chat_template's ids, up to the
  tokenizer's end of sequence.

  check-serve-sampling.py (--config cfg.json | --torch-plan llama.json)
      --mpirun CMD
      --server BIN --weights W --work DIR --artifact 1:a1.dtc
      --artifact 2:a2.dtc [--tokenizer DIR]
"""

import argparse
import json
import threading

import torch
from transformers.generation.logits_process import (
    LogitsProcessorList, MinPLogitsWarper, RepetitionPenaltyLogitsProcessor,
    SequenceBiasLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper,
    TopPLogitsWarper)

from dtensor_export import hf
from server_harness import ServerProcess, fail

MASK = (1 << 64) - 1
PROMPT = [5, 17, 3, 250, 9]
PARAMS = {"temperature": 0.9, "top_k": 40, "top_p": 0.95, "min_p": 0.01,
          "repetition_penalty": 1.1, "frequency_penalty": 0.3,
          "logit_bias": {"7": 2.0}, "seed": 1234}
COUNT = 6
CHAT = [{"role": "system", "content": "Brief."},
        {"role": "user", "content": "Sample something."}]
CHAT_PARAMS = {"temperature": 0.8, "top_p": 0.9, "seed": 77}
CHAT_COUNT = 8


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def uniform(seed, choice, index):
    bits = splitmix64(seed ^ splitmix64(choice ^ splitmix64(index)))
    return (bits >> 11) * 2.0 ** -53


def reference(logits_of, choice, prompt=PROMPT, params=PARAMS, count=COUNT,
              eos=()):
    """The tokens and logprobs the server's sampling must give after
    `prompt` with `params`; `logits_of(ids)` is the model's float64 logits
    after the ids. Generation ends before a token of `eos`."""
    tokens, logprobs = list(prompt), []
    processors = LogitsProcessorList(
        [SequenceBiasLogitsProcessor({(int(k),): v for k, v in
                                      params.get("logit_bias", {}).items()})]
        if "logit_bias" in params else [])
    if "repetition_penalty" in params:
        processors.append(RepetitionPenaltyLogitsProcessor(
            params["repetition_penalty"]))
    warpers = LogitsProcessorList(
        [TemperatureLogitsWarper(params["temperature"])] +
        ([TopKLogitsWarper(params["top_k"])] if "top_k" in params else []) +
        ([TopPLogitsWarper(params["top_p"])] if "top_p" in params else []) +
        ([MinPLogitsWarper(params["min_p"])] if "min_p" in params else []))
    with torch.no_grad():
        for index in range(count):
            logits = logits_of(tokens)
            generated = tokens[len(prompt):]
            scores = processors(torch.tensor([tokens]), logits[None].clone())
            counts = torch.bincount(torch.tensor(generated, dtype=torch.long),
                                    minlength=logits.numel()).double()
            scores = scores - params.get("frequency_penalty", 0) * counts
            probs = torch.softmax(warpers(torch.tensor([tokens]), scores),
                                  -1)[0]
            u = uniform(params["seed"], choice, index)
            token = int(torch.searchsorted(torch.cumsum(probs, 0),
                                           torch.tensor(u, dtype=torch.float64),
                                           right=True))
            if token in eos:
                break
            logprobs.append(torch.log_softmax(logits, -1))
            tokens.append(token)
    return tokens[len(prompt):], logprobs


def logits_function(args):
    """The model's float64 logits after a list of ids: the Hugging Face
    model of --config, or --torch-plan's Llama in PyTorch with
    --weights."""
    if args.config:
        model = hf.model_from_config(args.config)
        return lambda ids: model(input_ids=torch.tensor([ids]),
                                 use_cache=False).logits[0, -1].double()
    from dtensor_testing import torch_generate
    model = torch_generate.load_model(args.torch_plan, args.weights)
    return lambda ids: model.forward(torch.tensor([ids]),
                                     last_only=True)[0].double()


def check_chat(server, ranks, logits_of, tokenizer_dir):
    """The openai client streams a seeded sampled chat: its token ids are
    the reference draws after the chat template's ids."""
    import openai
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    ids = tokenizer.apply_chat_template(CHAT, add_generation_prompt=True,
                                        tokenize=True)
    if hasattr(ids, "keys"):
        ids = ids["input_ids"]
    want, _ = reference(logits_of, 0, list(ids), CHAT_PARAMS, CHAT_COUNT,
                        eos={tokenizer.eos_token_id})
    client = openai.OpenAI(base_url=server.url("/v1"), api_key="none")
    got, text = [], ""
    for chunk in client.chat.completions.create(
            model="m", messages=CHAT, max_tokens=CHAT_COUNT, stream=True,
            **CHAT_PARAMS):
        if chunk.choices:
            got += (chunk.choices[0].model_extra or {}).get("token_ids") or []
            text += chunk.choices[0].delta.content or ""
    if got != want or not want:
        fail(f"{ranks} ranks, openai chat stream: {got}, the reference "
             f"draws {want}")
    if text != tokenizer.decode(want, skip_special_tokens=True):
        fail(f"{ranks} ranks, openai chat stream text {text!r}")
    print(f"{ranks} rank(s): openai chat stream, seeded sampling: "
          f"{len(want)} token ids equal the reference draws, text equal "
          "their decode")


def main():
    parser = argparse.ArgumentParser()
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config")
    source.add_argument("--torch-plan")
    parser.add_argument("--tokenizer")
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--artifact", action="append", required=True,
                        metavar="RANKS:PATH")
    args = parser.parse_args()
    logits_of = logits_function(args)
    body = dict(PARAMS, prompt=PROMPT, max_tokens=COUNT, n=2, logprobs=3)
    want = [reference(logits_of, choice) for choice in (0, 1)]
    # No temperature: OpenAI's default, 1, and nothing else.
    default_params = {"temperature": 1.0, "seed": 99}
    want_default, _ = reference(logits_of, 0, params=default_params)

    for spec in args.artifact:
        ranks, artifact = spec.split(":", 1)
        with ServerProcess(args.mpirun, int(ranks), args.server, artifact,
                           ["--weights", args.weights], args.work,
                           name=f"sampling{ranks}") as server:
            alone = server.request("POST", "/v1/completions", body)
            if alone.status != 200:
                fail(f"{ranks} ranks: {alone.status} {alone.body}")
            # The same request among others that sample differently.
            answers = {}

            def send(key, request):
                answers[key] = server.request("POST", "/v1/completions",
                                              request)
            threads = [threading.Thread(target=send, args=("same", body))] + [
                threading.Thread(target=send, args=(i, dict(
                    body, seed=i, prompt=PROMPT[i:] + [i], n=1)))
                for i in range(3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            batched = answers["same"]
            for choice, (tokens, logprobs) in enumerate(want):
                got = alone.json()["choices"][choice]
                if got["token_ids"] != tokens:
                    fail(f"{ranks} ranks, choice {choice}: {got['token_ids']}"
                         f", the reference draws {tokens}")
                if batched.json()["choices"][choice]["token_ids"] != tokens:
                    fail(f"{ranks} ranks, choice {choice} batched: "
                         f"{batched.json()['choices'][choice]['token_ids']}")
                reported = got["logprobs"]
                for index, token in enumerate(tokens):
                    expected = logprobs[index]
                    error = abs(reported["token_logprobs"][index] -
                                float(expected[token]))
                    top = sorted(reported["top_logprobs"][index].values(),
                                 reverse=True)
                    want_top = torch.topk(expected, 3).values.tolist()
                    if error > 1e-4 or max(abs(a - b) for a, b in
                                           zip(top, want_top)) > 1e-4:
                        fail(f"{ranks} ranks, logprobs at {index}: "
                             f"{reported['token_logprobs'][index]} "
                             f"{top}, want {float(expected[token])} "
                             f"{want_top}")
            print(f"{ranks} rank(s): n=2 seeded choices equal the reference "
                  f"draws {want[0][0]} and {want[1][0]}, alone and batched; "
                  "logprobs within 1e-4")
            answer = server.request("POST", "/v1/completions", {
                "prompt": PROMPT, "max_tokens": COUNT, "seed": 99})
            if answer.status != 200 or \
                    answer.json()["choices"][0]["token_ids"] != want_default:
                fail(f"{ranks} ranks, no temperature: {answer.status} "
                     f"{answer.body}, the reference draws at temperature 1 "
                     f"{want_default}")
            print(f"{ranks} rank(s): without 'temperature' the seeded draws "
                  "are the reference's at temperature 1")
            if ranks == "1":
                for name, bad in (("negative temperature",
                                   {"temperature": -0.5}),
                                  ("top_p above 1", {"top_p": 1.5}),
                                  ("unknown field", {"best_of": 2})):
                    answer = server.request("POST", "/v1/completions",
                                            dict(bad, prompt=[1], max_tokens=2))
                    print(f"bad request ({name}): {answer.status} "
                          f"{json.loads(answer.body)['error']}")


    if args.tokenizer:
        # Its own server: with a tokenizer, the completions' top_logprobs
        # are keyed by token text, which ids of one text would share.
        ranks, artifact = args.artifact[-1].split(":", 1)
        with ServerProcess(args.mpirun, int(ranks), args.server, artifact,
                           ["--weights", args.weights, "--tokenizer",
                            args.tokenizer], args.work,
                           name=f"chat{ranks}") as server:
            check_chat(server, ranks, logits_of, args.tokenizer)


if __name__ == "__main__":
    main()

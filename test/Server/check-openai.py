#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dtensor-server's /v1/completions driven by the OpenAI Python client.

Runs in scripts/torch-env.sh's environment (numpy and openai). Writes the
prompts, computes the reference with `dtensor-run ART -n R --generate N
--prompt P.npy ...` (the KV cache's greedy generation), starts the server on
the same artifact and weights, then asks it with `openai.OpenAI(base_url=...)`:

- the model list names the artifact;
- each prompt, non-streaming, from concurrent threads: the token ids (an
  extra field of the library's CompletionChoice) equal dtensor-run's,
  finish_reason "length", usage counts the tokens;
- each prompt streamed (stream=True): the chunks' ids joined are the same,
  one per chunk, the last chunk says "length";
- stop=[id] with an id first generated at position k: the first k ids and
  finish_reason "stop";
- a text prompt: the library raises UnprocessableEntityError (422) with the
  server's message.

Prints one line per check; exits non-zero (FAIL: ...) on the first mismatch.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess

import numpy as np
import openai

# Next to this script (PYTHONPATH also names test/Server: test/lit.cfg.py).
from server_harness import ServerProcess, add_server_arguments, fail


def token_ids(choice):
    """The server's extra field `token_ids` of a CompletionChoice."""
    extra = choice.model_extra or {}
    if "token_ids" not in extra:
        fail(f"no token_ids in the choice: {choice!r}")
    return list(extra["token_ids"])


def reference(args, prompts, tokens):
    """dtensor-run --generate: {prompt index: [ids]}."""
    paths = []
    for i, prompt in enumerate(prompts):
        path = os.path.join(args.work, f"prompt{i}.npy")
        np.save(path, np.array(prompt, dtype=np.int64))
        paths.append(path)
    command = [args.dtensor_run, args.artifact, "-n", str(args.ranks),
               "--weights", args.weights, "--generate", str(tokens)]
    for path in paths:
        command += ["--prompt", path]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        fail(f"{' '.join(command)} exited {run.returncode}:\n"
             f"{run.stdout}{run.stderr}")
    generated = {}
    for line in run.stdout.splitlines():
        match = re.fullmatch(r"generated (\d+): ([\d ]+)", line.strip())
        if match:
            generated[int(match[1])] = [int(t) for t in match[2].split()]
    if sorted(generated) != list(range(len(prompts))):
        fail(f"dtensor-run printed no generation for every prompt:\n"
             f"{run.stdout}")
    return generated


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_server_arguments(parser)
    parser.add_argument("--dtensor-run", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=10)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    rng = np.random.default_rng(5)
    # Lengths that take the decode entry alone, one prefill entry and two
    # chunks (with --prefill 8,32).
    prompts = [rng.integers(0, 256, size=n).tolist() for n in (5, 20, 40)]
    expected = reference(args, prompts, args.tokens)
    print(f"reference: {len(prompts)} prompts of "
          f"{[len(p) for p in prompts]} tokens x {args.tokens}, dtensor-run "
          f"on {args.ranks} ranks")

    with ServerProcess(args.mpirun, args.ranks, args.server, args.artifact,
                       ["--weights", args.weights], args.work) as server:
        client = openai.OpenAI(base_url=server.url("/v1"), api_key="none",
                               max_retries=0, timeout=60)
        models = [m.id for m in client.models.list().data]
        if len(models) != 1:
            fail(f"models: {models}")
        model = models[0]
        print(f"models: {model} (openai {openai.__version__})")

        # Concurrent non-streaming completions: batched decode steps.
        def complete(i):
            return client.completions.create(model=model, prompt=prompts[i],
                                             max_tokens=args.tokens)
        with concurrent.futures.ThreadPoolExecutor(len(prompts)) as pool:
            answers = list(pool.map(complete, range(len(prompts))))
        for i, answer in enumerate(answers):
            choice = answer.choices[0]
            ids = token_ids(choice)
            if ids != expected[i]:
                fail(f"prompt {i}: {ids} != dtensor-run's {expected[i]}")
            if choice.finish_reason != "length":
                fail(f"prompt {i}: finish_reason {choice.finish_reason!r}")
            usage = answer.usage
            if (usage.prompt_tokens, usage.completion_tokens) != (
                    len(prompts[i]), args.tokens):
                fail(f"prompt {i}: usage {usage}")
            if answer.model != model or choice.text != "":
                fail(f"prompt {i}: model {answer.model!r}, text "
                     f"{choice.text!r}")
        print(f"completions: {len(prompts)} concurrent, token ids equal "
              f"dtensor-run's, finish_reason length, usage counted")

        # Streaming: one chunk per token, then the finish reason.
        for i, prompt in enumerate(prompts):
            ids, reasons, chunks = [], [], 0
            stream = client.completions.create(
                model=model, prompt=prompt, max_tokens=args.tokens,
                stream=True)
            for chunk in stream:
                chunks += 1
                choice = chunk.choices[0]
                ids += token_ids(choice)
                if choice.finish_reason is not None:
                    reasons.append(choice.finish_reason)
            if ids != expected[i]:
                fail(f"stream {i}: {ids} != dtensor-run's {expected[i]}")
            if reasons != ["length"]:
                fail(f"stream {i}: finish reasons {reasons}")
            if chunks < args.tokens + 1:
                fail(f"stream {i}: {chunks} chunks for {args.tokens} tokens")
        print(f"stream: {len(prompts)} prompts, token ids equal, "
              f"finish_reason length in the last chunk")

        # stop=[id]: ends before the first occurrence of id.
        ids = expected[1]
        k = next((k for k in range(3, len(ids)) if ids[k] not in ids[:k]),
                 None)
        if k is None:
            fail(f"no stop token to pick in {ids}")
        for stream in (False, True):
            got, reason = [], None
            answer = client.completions.create(
                model=model, prompt=prompts[1], max_tokens=args.tokens,
                stop=[ids[k]], stream=stream)
            for chunk in (answer if stream else [answer]):
                got += token_ids(chunk.choices[0])
                reason = chunk.choices[0].finish_reason or reason
            if got != ids[:k] or reason != "stop":
                fail(f"stop={ids[k]} (stream {stream}): {got}, {reason!r}; "
                     f"expected {ids[:k]}, 'stop'")
        print(f"stop: at generated token {k}, the ids before it and "
              f"finish_reason stop (streamed and not)")

        # A text prompt: the library's error for 422 with the message.
        try:
            client.completions.create(model=model, prompt="Hello",
                                      max_tokens=4)
            fail("a text prompt was answered")
        except openai.UnprocessableEntityError as error:
            print(f"text prompt: {type(error).__name__} "
                  f"{error.status_code}: {error.body}")


if __name__ == "__main__":
    main()

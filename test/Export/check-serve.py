#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Serves an exported Hugging Face model with dtensor-server and checks its
answers against the Hugging Face module in PyTorch: /v1/next_token is the
argmax after the prompt's last token, and a greedy /v1/generate of N tokens
is Hugging Face's greedy continuation (recomputed over the growing
sequence).

  check-serve.py --config llama.json --mpirun CMD --server BIN
                 --artifact a.dtc --weights W --work DIR [--ranks N]
"""

import argparse

# dtensor_export and test/Server/server_harness.py come from PYTHONPATH
# (<root>/python and test/Server: test/lit.cfg.py).
import torch

from dtensor_export import hf
from server_harness import ServerProcess, add_server_arguments, fail


def greedy(model, prompt, count):
    tokens = list(prompt)
    with torch.no_grad():
        for _ in range(count):
            logits = model(input_ids=torch.tensor([tokens]),
                           use_cache=False).logits
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt):]


def main():
    parser = argparse.ArgumentParser()
    add_server_arguments(parser)
    parser.add_argument("--config", required=True)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=4)
    args = parser.parse_args()
    model = hf.model_from_config(args.config)
    prompts = [[5], [17, 3, 250, 9], list(range(40, 52))]
    with ServerProcess(args.mpirun, args.ranks, args.server, args.artifact,
                       ["--weights", args.weights], args.work,
                       name="export") as server:
        for prompt in prompts:
            answer = server.request("POST", "/v1/next_token",
                                    {"tokens": prompt})
            if answer.status != 200:
                fail(f"next_token {prompt}: {answer.status} {answer.body}")
            expected = greedy(model, prompt, 1)[0]
            got = answer.json()["next_token"]
            if got != expected:
                fail(f"next_token after {prompt}: {got}, Hugging Face "
                     f"{expected}")
            answer = server.request("POST", "/v1/generate",
                                    {"tokens": prompt,
                                     "max_new_tokens": args.tokens})
            if answer.status != 200:
                fail(f"generate {prompt}: {answer.status} {answer.body}")
            got = answer.json()["generated"]
            expected = greedy(model, prompt, args.tokens)
            if got != expected:
                fail(f"generate after {prompt}: {got}, Hugging Face "
                     f"{expected}")
            print(f"prompt of {len(prompt)}: next_token and {args.tokens} "
                  "generated tokens equal Hugging Face's")
    print(server.log_text().splitlines()[0].split("]: ", 1)[1])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Logits from an artifact that has them: llama_tiny with "logits" as a
second output. The server returns the last prompt position's row; it must
equal that row of the logits dtensor-run computes on the same artifact, and
its argmax the next token.

  check-logits.py --mpirun CMD --server BIN --dtensor-run BIN
                  --artifact ll2.dtc --weights W --work DIR
"""

import argparse
import concurrent.futures
import os
import shlex

import numpy as np

from server_harness import (ServerProcess, add_server_arguments, fail,
                            run_bounded)


def reference_logits(args, prompt, batch, seq_len, index):
    """dtensor-run on 2 ranks with `prompt` in row 0, zeros elsewhere (the
    server's packing)."""
    tokens = np.zeros((batch, seq_len), dtype=np.int64)
    tokens[0, :len(prompt)] = prompt
    stem = os.path.join(args.work, f"ref{index}")
    np.save(stem + "-tokens.npy", tokens)
    code, output = run_bounded(
        [args.dtensor_run, args.artifact, "-n", "2", "-q",
         "--mpirun", shlex.split(args.mpirun)[0],
         "--input", f"tokens={stem}-tokens.npy",
         "--weights", args.weights,
         "--output", f"logits={stem}-logits.npy"], 120)
    if code != 0:
        fail(f"dtensor-run exited {code}:\n{output}")
    return np.load(stem + "-logits.npy")[0, len(prompt) - 1]


def main():
    parser = argparse.ArgumentParser()
    add_server_arguments(parser)
    parser.add_argument("--dtensor-run", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    prompts = [[5], [17, 3, 250, 9], list(range(40, 56))]
    with ServerProcess(args.mpirun, 2, args.server, args.artifact,
                       ["--weights", args.weights], args.work,
                       name="logits") as server:
        health = server.request("GET", "/health").json()
        batch, seq_len = health["batch"], health["seq_len"]
        print(f"vocabulary {health['vocab']}")
        # Concurrently, with and without logits, so that steps mix both.
        bodies = ([{"tokens": p, "logits": True} for p in prompts] +
                  [{"tokens": p} for p in prompts])
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(
                lambda b: server.request("POST", "/v1/next_token", b), bodies))
        for body, answer in zip(bodies, answers):
            if answer.status != 200:
                fail(f"{body}: {answer.status} {answer.body}")
        for index, prompt in enumerate(prompts):
            with_logits = answers[index].json()
            without = answers[len(prompts) + index].json()
            if "logits" in without:
                fail("logits returned without being asked for")
            logits = np.array(with_logits["logits"], dtype=np.float32)
            if logits.shape != (health["vocab"],):
                fail(f"logits of shape {logits.shape}")
            if int(np.argmax(logits)) != with_logits["next_token"]:
                fail(f"argmax(logits) {np.argmax(logits)} is not next_token "
                     f"{with_logits['next_token']}")
            if with_logits["next_token"] != without["next_token"]:
                fail("next_token depends on asking for logits")
            expected = reference_logits(args, prompt, batch, seq_len, index)
            error = float(np.max(np.abs(logits - expected)) /
                          np.max(np.abs(expected)))
            if error > 1e-5:
                fail(f"prompt {index}: logits differ from dtensor-run's by "
                     f"{error:.3g} (relative)")
            print(f"prompt of {len(prompt)}: {len(logits)} logits equal "
                  f"dtensor-run's (max rel error {error:.1g}), argmax = "
                  f"next_token")
        answer = server.request("POST", "/v1/generate",
                                {"tokens": [1], "max_new_tokens": 1,
                                 "logits": True})
        print(f"generate with logits: {answer.status} {answer.json()['error']}")
    print(server.log_text().splitlines()[0].split("]: ", 1)[1])


if __name__ == "__main__":
    main()

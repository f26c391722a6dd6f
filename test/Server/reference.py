#!/usr/bin/env python3
"""Reference answers for the server tests, from the 1-rank artifact.

  reference.py --dtensor-run BIN --artifact l1.dtc --weights W.safetensors
               --work DIR -o reference.json [--new-tokens N] [--seed S]

Draws prompts (numpy, seeded), runs `dtensor-run` on the --mesh 1 artifact
with the same weights, and writes, per prompt, the argmax at every prompt
position and the next token; for the generation prompts, N greedy steps done
one dtensor-run at a time (append the argmax at the last position, run
again). Positions after a prompt are filled with random ids, not zeros, so
the server's zero padding is checked rather than assumed (the model is
causal: they must not matter).
"""

import argparse
import json
import os
import sys

import numpy as np

from server_harness import run_bounded


def manifest_shape(artifact):
    with open(os.path.join(artifact, "manifest.json")) as f:
        manifest = json.load(f)
    tensors = {t["name"]: t for t in manifest["tensors"]}
    batch, seq_len = tensors["tokens"]["shape"]
    vocab = tensors["tok_embeddings.weight"]["shape"][0]
    return batch, seq_len, vocab


class Reference:
    def __init__(self, args, batch, seq_len, vocab, rng):
        self.args = args
        self.batch, self.seq_len, self.vocab = batch, seq_len, vocab
        self.rng = rng
        self.runs = 0

    def run(self, sequences):
        """The argmax rows of `sequences` (each <= seq_len ids), B per run."""
        rows = []
        for start in range(0, len(sequences), self.batch):
            chunk = sequences[start:start + self.batch]
            tokens = self.rng.randint(0, self.vocab,
                                      size=(self.batch, self.seq_len))
            for row, sequence in enumerate(chunk):
                tokens[row, :len(sequence)] = sequence
            stem = os.path.join(self.args.work, f"run{self.runs}")
            self.runs += 1
            np.save(stem + "-tokens.npy", tokens.astype(np.int64))
            code, output = run_bounded(
                [self.args.dtensor_run, self.args.artifact, "-q",
                 "--input", f"tokens={stem}-tokens.npy",
                 "--weights", self.args.weights,
                 "--output", f"next_token={stem}-next.npy"], 120)
            if code != 0:
                sys.exit(f"reference: dtensor-run exited {code}:\n{output}")
            result = np.load(stem + "-next.npy")
            rows.extend(result[row].tolist() for row in range(len(chunk)))
        return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtensor-run", required=True)
    parser.add_argument("--artifact", required=True)
    parser.add_argument("--weights", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--new-tokens", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    batch, seq_len, vocab = manifest_shape(args.artifact)
    rng = np.random.RandomState(args.seed)
    reference = Reference(args, batch, seq_len, vocab, rng)

    # Lengths from 1 to the full sequence; ids over the whole vocabulary.
    lengths = [1, 2, 4, 7, 9, 12, 15, seq_len]
    prompts = [rng.randint(0, vocab, size=n).tolist() for n in lengths]
    rows = reference.run(prompts)
    next_token = [{"tokens": p, "argmax": r[:len(p)], "next_token": r[len(p) - 1]}
                  for p, r in zip(prompts, rows)]

    generate = []
    gen_prompts = [rng.randint(0, vocab, size=n).tolist()
                   for n in (3, seq_len - args.new_tokens)]
    sequences = [list(p) for p in gen_prompts]
    for _ in range(args.new_tokens):
        rows = reference.run(sequences)
        for sequence, row in zip(sequences, rows):
            sequence.append(row[len(sequence) - 1])
    for prompt, sequence in zip(gen_prompts, sequences):
        generate.append({"tokens": prompt, "max_new_tokens": args.new_tokens,
                         "generated": sequence[len(prompt):]})

    with open(args.output, "w") as f:
        json.dump({"batch": batch, "seq_len": seq_len, "vocab": vocab,
                   "next_token": next_token, "generate": generate}, f)
    distinct = len({p["next_token"] for p in next_token})
    print(f"reference: {len(next_token)} prompts, {len(generate)} generations "
          f"of {args.new_tokens} tokens, {reference.runs} runs of the 1-rank "
          f"artifact, {distinct} distinct next tokens")
    # Answers that are all alike would not tell a right server from a wrong
    # one (zero weights, say).
    if distinct < 3:
        sys.exit("reference: the answers hardly differ; the weights look wrong")


if __name__ == "__main__":
    main()

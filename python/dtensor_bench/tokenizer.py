#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Tokenizer throughput: dtensor-tokenize (runtime/tooling's C++ tokenizers,
what dtensor-server --tokenizer runs) against Hugging Face `tokenizers` on
the same tokenizer and text, one thread each.

  python -m dtensor_bench.tokenizer [--build-dir DIR] [--megabytes M]
      [--vocab V] [--repeat R]

Run with the interpreter of scripts/torch-env.sh (it has `tokenizers`).
Trains a byte-level BPE tokenizer (Llama 3's pre-tokenizer regex, V tokens)
on a generated multilingual text (English-like words, CJK, emoji, code,
whitespace runs; a fixed seed) of about M megabytes, checks that both give
the same ids for every line, then times encoding the text line by line,
best of R runs each: `tokenizers`' Tokenizer.encode per line (one thread;
its encode_batch would use every core), and `dtensor-tokenize --bench`
(the C++ encode per line, timed inside the process). Prints MB/s and
tokens/s of both; nothing is asserted.
"""

import argparse
import json
import os
import random
import subprocess
import tempfile
import time

from dtensor_bench.support import ROOT

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def make_text(megabytes, seed):
    """Lines of mixed scripts, about `megabytes` MB of UTF-8."""
    rng = random.Random(seed)
    syllables = ["ka", "to", "ri", "mon", "ex", "an", "ter", "pro", "li",
                 "ve", "qu", "ish", "ment", "tion", "al", "ing"]
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 400)] + \
        [chr(c) for c in range(0x3041, 0x3097)]
    emoji = ["😀", "🎉", "👍🏽", "🚀", "❤️", "🇫🇷"]
    lines, size = [], 0
    while size < megabytes * 1e6:
        parts = []
        for _ in range(rng.randint(5, 30)):
            kind = rng.random()
            if kind < 0.6:
                parts.append("".join(rng.choice(syllables)
                                     for _ in range(rng.randint(1, 4))))
            elif kind < 0.75:
                parts.append("".join(rng.choice(cjk)
                                     for _ in range(rng.randint(1, 6))))
            elif kind < 0.8:
                parts.append(rng.choice(emoji))
            elif kind < 0.9:
                parts.append(str(rng.randint(0, 100000)))
            else:
                parts.append(rng.choice(["(x)", "a+b;", "  ", "\t", "--", "."]))
        line = " ".join(parts)
        lines.append(line)
        size += len(line.encode()) + 1
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--megabytes", type=float, default=4)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from tokenizers import (Regex, Tokenizer, decoders, models,
                            pre_tokenizers, trainers)

    tool = os.path.join(args.build_dir, "bin", "dtensor-tokenize")
    lines = make_text(args.megabytes, args.seed)
    bpe = Tokenizer(models.BPE(ignore_merges=True))
    bpe.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(lines[:5000], trainers.BpeTrainer(
        vocab_size=args.vocab, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    with tempfile.TemporaryDirectory() as work:
        bpe.save(os.path.join(work, "tokenizer.json"))
        text_path = os.path.join(work, "text.txt")
        with open(text_path, "w") as f:
            f.write("\n".join(lines) + "\n")
        total = os.path.getsize(text_path)

        # The same ids first (a sample of the lines).
        sample = lines[::max(1, len(lines) // 500)]
        done = subprocess.run(
            [tool, "--tokenizer", work],
            input="".join(json.dumps({"text": l, "add_special_tokens": False})
                          + "\n" for l in sample).encode(),
            stdout=subprocess.PIPE, check=True)
        ours = [json.loads(l)["ids"] for l in done.stdout.decode().splitlines()]
        theirs = [bpe.encode(l, add_special_tokens=False).ids for l in sample]
        same = sum(a == b for a, b in zip(ours, theirs))

        hf_best, hf_tokens = float("inf"), 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            hf_tokens = sum(len(bpe.encode(l, add_special_tokens=False).ids)
                            for l in lines)
            hf_best = min(hf_best, time.perf_counter() - start)
        our_best, our_tokens = float("inf"), 0
        for _ in range(args.repeat):
            done = subprocess.run([tool, "--tokenizer", work, "--bench",
                                   text_path], stdout=subprocess.PIPE,
                                  check=True)
            answer = json.loads(done.stdout)
            our_best = min(our_best, answer["seconds"])
            our_tokens = answer["tokens"]
    mb = total / 1e6
    print(f"text: {mb:.2f} MB, {len(lines)} lines; vocabulary {args.vocab}; "
          f"same ids on {same} of {len(sample)} sampled lines")
    print(f"dtensor-tokenize: {mb / our_best:.2f} MB/s, "
          f"{our_tokens / our_best / 1e6:.2f} M tokens/s ({our_tokens} tokens, "
          f"best of {args.repeat})")
    print(f"HF tokenizers (encode, 1 thread): {mb / hf_best:.2f} MB/s, "
          f"{hf_tokens / hf_best / 1e6:.2f} M tokens/s ({hf_tokens} tokens, "
          f"best of {args.repeat})")


if __name__ == "__main__":
    main()

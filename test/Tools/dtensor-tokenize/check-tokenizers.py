# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dtensor-tokenize (runtime/tooling's tokenizers) against Hugging Face
`tokenizers` and `sentencepiece`, on tokenizers trained here on a small
Unicode corpus: byte-level BPE as GPT-2 (ByteLevel's own regex), Llama 3
(a Split regex, ignore_merges, a BOS template) and Qwen2 (its regex, one
digit a piece, the NFC normalizer) configure it, with a prefix space, and
SentencePiece BPE and unigram models with byte fallback. Every text gives the same ids (with
and without special tokens), the same decoded text (with and without
special tokens), and a stream that decodes to the same text in chunks of
whole characters; random id sequences (characters cut in half) decode the
same too."""

import argparse
import json
import os
import random
import subprocess
import sys

import sentencepiece as spm
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models,
                        normalizers, pre_tokenizers, processors, trainers)

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
         r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's 2024; we'll see.",
    "Tokenizers split text into pieces: words, numbers 12345 and symbols!?",
    "東京は日本の首都です。北京是中国的首都。서울은 한국의 수도입니다.",
    "Emoji: 😀 😃 👍🏽 👨‍👩‍👧‍👦 🇫🇷 — and more 🎉🎉🎉",
    "Combining marks: e\u0301 a\u0308 n\u0303 Z\u0351\u0361\u0322 cafe\u0301",
    "Whitespace   runs\t\ttabs\n\nnew lines\r\n  and    trailing   ",
    "Ελληνικά, русский текст, עברית, العربية, हिन्दी, ไทย.",
    "def f(x):\n    return x ** 2  # code with    indentation\n",
    "Special tokens <|im_start|>user\nhello<|im_end|> inside text.",
    "Numbers: 3.14159 2,718 1e-10 0x1F 42nd and 1/2 ½ ⅓ ٣ ४",
    "Mixed:Hello世界😀café naïve résumé coöperate",
    "I'M SHOUTING AND I'VE SAID IT, YOU'LL HEAR IT'S LOUD",
]

# Texts not in the training corpus, with the same kinds of characters.
HELD_OUT = [
    "",
    " ",
    "   leading and trailing spaces   ",
    "\n\n\n",
    "a",
    "新しい文章😀と絵文字🦀🦀、そして<|endoftext|>特別なトークン",
    "x\u0301\u0302\u0303 combining on x, then 👩🏽‍💻 and \U0001F9D1\u200D\U0001F680",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>assistant\n",
    "tabs\tand\u00a0nbsp\u2003em-space\u3000ideographic space",
    "repeated <mask>    <mask> masks, and <|endoftext|><|endoftext|>",
    "unknown script: 𓀀𓀁 ᚠᚢᚦ ⴰⵣⵓⵍ",
]

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def byte_level_bpe(style):
    """A byte-level BPE tokenizer trained on CORPUS, configured as `style`."""
    bpe = Tokenizer(models.BPE(ignore_merges=(style == "llama3")))
    if style == "gpt2":
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    elif style == "prefix-space":
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    else:
        bpe.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3 if style == "llama3" else QWEN2),
                                 behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    if style == "qwen2":
        bpe.normalizer = normalizers.NFC()
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=700, special_tokens=SPECIALS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(CORPUS * 3, trainer)
    bpe.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])
    bpe.add_tokens(["dtensor"])
    if style == "llama3":
        bpe.post_processor = processors.TemplateProcessing(
            single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 0)])
    else:
        bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    return bpe


class Reference:
    """encode/decode of `tokenizers` or `sentencepiece` for one folder."""

    def __init__(self, encode, decode, size):
        self.encode, self.decode, self.size = encode, decode, size


def hf_reference(bpe):
    return Reference(
        lambda text, special: bpe.encode(text, add_special_tokens=special).ids,
        lambda ids, skip: bpe.decode(ids, skip_special_tokens=skip),
        bpe.get_vocab_size(with_added_tokens=True))


def sp_reference(processor, add_bos):
    def encode(text, special):
        ids = processor.encode(text)
        return ([processor.bos_id()] if special and add_bos else []) + ids
    return Reference(encode, lambda ids, skip: processor.decode(ids),
                     processor.get_piece_size())


def sentencepiece_model(folder, model_type):
    prefix = os.path.join(folder, "tokenizer")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS * 3), model_prefix=prefix,
        model_type=model_type, vocab_size=420, byte_fallback=True,
        character_coverage=0.98, hard_vocab_limit=False,
        user_defined_symbols=SPECIALS[1:], minloglevel=2)
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"add_bos_token": True, "add_eos_token": False}, f)
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def run_tool(tool, folder, requests):
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([tool, "--tokenizer", folder], input=lines.encode(),
                          stdout=subprocess.PIPE, check=True)
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def check(name, tool, folder, reference, failures):
    texts = CORPUS + HELD_OUT
    rng = random.Random(7)
    # Random ids cut characters in half (byte tokens in any order).
    id_lists = [[rng.randrange(reference.size) for _ in range(rng.randint(1, 40))]
                for _ in range(40)]
    requests = ([{"text": t, "add_special_tokens": s}
                 for t in texts for s in (True, False)] +
                [{"ids": ids} for ids in id_lists])
    answers = run_tool(tool, folder, requests)
    checked = 0
    for request, answer in zip(requests, answers):
        if "text" in request:
            want = reference.encode(request["text"],
                                    request["add_special_tokens"])
            if answer["ids"] != want:
                failures.append(f"{name}: ids of {request['text']!r} "
                                f"(special {request['add_special_tokens']}): "
                                f"{answer['ids']} != {want}")
                continue
            ids = want
        else:
            ids = request["ids"]
        for key, skip in (("text", False), ("skip_special", True)):
            want = reference.decode(ids, skip)
            if answer[key] != want:
                failures.append(f"{name}: decode({ids}, skip={skip}) = "
                                f"{answer[key]!r}, not {want!r}")
        if answer["stream"] != answer["text"]:
            failures.append(f"{name}: the stream of {ids} is "
                            f"{answer['stream']!r}, not {answer['text']!r}")
        # A chunk is whole characters: a U+FFFD in it is one the full
        # decode has too (a byte that never completes a character).
        if "text" in request:
            for chunk in answer["stream_chunks"]:
                if "\ufffd" in chunk:
                    failures.append(f"{name}: the stream of "
                                    f"{request['text']!r} emitted {chunk!r}")
        checked += 1
    print(f"{name}: {checked} of {len(requests)} equal (ids, text, stream)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    failures = []
    for style in ("gpt2", "llama3", "qwen2", "prefix-space"):
        folder = os.path.join(args.work, "bpe-" + style)
        os.makedirs(folder, exist_ok=True)
        bpe = byte_level_bpe(style)
        bpe.save(os.path.join(folder, "tokenizer.json"))
        check("bpe-" + style, args.tool, folder, hf_reference(bpe), failures)
    for model_type in ("bpe", "unigram"):
        folder = os.path.join(args.work, "sp-" + model_type)
        os.makedirs(folder, exist_ok=True)
        processor = sentencepiece_model(folder, model_type)
        check("sentencepiece-" + model_type, args.tool, folder,
              sp_reference(processor, add_bos=True), failures)
    for failure in failures[:20]:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Text serving of an exported Hugging Face model with its tokenizer.

  check-serve-text.py --make-tokenizer DIR --config llama.json --out cfg.json
      trains a byte-level BPE tokenizer (Llama 3's special tokens, a BOS
      template), saves it with transformers into DIR, and writes the model
      config with the tokenizer's vocabulary size to cfg.json.
  check-serve-text.py --config cfg.json --tokenizer T --mpirun CMD
                      --server BIN --artifact a.dtc --weights W --work DIR
      serves the artifact with --tokenizer T and --api-key, and checks:
      401 without the key (/health open), /tokenize and /detokenize against
      transformers' tokenizer, text completions (plain, echoed, streamed,
      through the openai client) against transformers' greedy generate
      (token for token, its end-of-sequence id ending both) decoded by
      transformers, and a stop string cutting the text before it.
"""

import argparse
import http.client
import json
import os

# dtensor_export and test/Server/server_harness.py come from PYTHONPATH
# (<root>/python and test/Server: test/lit.cfg.py).
import torch

from server_harness import ServerProcess, fail

KEY = "sk-dtensor-test"
SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
            "<|end_header_id|>", "<|eot_id|>"]
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Serving text: prompts in, completions out, streamed or not.",
    "東京は日本の首都です。😀 emoji and café naïve résumé.",
    "def add(a, b):\n    return a + b\n",
    "Numbers 12345 and 3.14159, whitespace   runs\tand tabs.",
]
PROMPTS = ["The quick brown", "東京は 😀 café"]
# Llama 3's style of template.
CHAT_TEMPLATE = """{{- bos_token }}
{%- for message in messages %}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}"""
CHAT = [{"role": "system", "content": "Brief."},
        {"role": "user", "content": "東京 quick?"}]


def make_tokenizer(folder, config_path, out_path):
    from tokenizers import (Tokenizer, decoders, models, pre_tokenizers,
                            processors, trainers)
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(CORPUS * 4, trainers.BpeTrainer(
        vocab_size=320, special_tokens=SPECIALS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bpe.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A",
        special_tokens=[("<|begin_of_text|>", 0)])
    fast = PreTrainedTokenizerFast(tokenizer_object=bpe,
                                   bos_token="<|begin_of_text|>",
                                   eos_token="<|eot_id|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    with open(config_path) as f:
        config = json.load(f)
    # The model's vocabulary is the tokenizer's; generation ends at
    # <|eot_id|>, as a Llama 3 instruct model's does.
    config.update(vocab_size=len(fast), bos_token_id=0,
                  eos_token_id=fast.convert_tokens_to_ids("<|eot_id|>"))
    with open(out_path, "w") as f:
        json.dump(config, f)
    print(f"tokenizer: {len(fast)} tokens")


def generate(model, ids, count):
    """transformers' greedy generate: the new ids, its eos id left out."""
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), max_new_tokens=count,
                             do_sample=False, attention_mask=torch.ones(
                                 1, len(ids), dtype=torch.long))
    new = out[0, len(ids):].tolist()
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos])
    finish = "length"
    for i, token in enumerate(new):
        if token in eos:
            new, finish = new[:i], "stop"
            break
    return new, finish


def stream_text(port, body):
    """A streamed completion's (text, token ids, finish reason)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", "/v1/completions",
                       json.dumps(dict(body, stream=True)),
                       {"Content-Type": "application/json",
                        "Authorization": "Bearer " + KEY})
    response = connection.getresponse()
    if response.status != 200:
        fail(f"stream {body}: {response.status} {response.read()}")
    text, tokens, finish = "", [], None
    for raw in response:
        line = raw.decode().rstrip("\n")
        if not line.startswith("data: "):
            continue
        if line == "data: [DONE]":
            break
        choice = json.loads(line[6:])["choices"][0]
        text += choice["text"]
        tokens += choice["token_ids"]
        finish = choice["finish_reason"] or finish
    connection.close()
    return text, tokens, finish


def check(args):
    from transformers import AutoTokenizer

    from dtensor_export import hf

    model = hf.model_from_config(args.config)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    auth = {"Authorization": "Bearer " + KEY}
    with ServerProcess(args.mpirun, args.ranks, args.server, args.artifact,
                       ["--weights", args.weights, "--tokenizer",
                        args.tokenizer, "--api-key", KEY], args.work,
                       name="text") as server:
        def post(path, body, headers=auth):
            answer = server.request("POST", path, body, headers=headers)
            if answer.status != 200:
                fail(f"{path} {body}: {answer.status} {answer.body}")
            return answer.json()

        missing = server.request("POST", "/v1/completions", {"prompt": "a"})
        wrong = server.request("POST", "/tokenize", {"prompt": "a"},
                               headers={"Authorization": "Bearer nope"})
        health = server.request("GET", "/health")
        if (missing.status, wrong.status, health.status) != (401, 401, 200):
            fail(f"api key: {missing.status} {wrong.status} {health.status}")
        print(f"api key: 401 without it ({json.loads(missing.body)['error']})"
              ", /health open")

        for prompt in PROMPTS:
            ids = tokenizer(prompt).input_ids
            got = post("/tokenize", {"prompt": prompt})
            if got["tokens"] != ids:
                fail(f"/tokenize {prompt!r}: {got['tokens']}, "
                     f"transformers {ids}")
            text = post("/detokenize", {"tokens": ids})["prompt"]
            if text != tokenizer.decode(ids):
                fail(f"/detokenize {ids}: {text!r}")

            count = 10
            want_ids, want_finish = generate(model, ids, count)
            want_text = tokenizer.decode(want_ids, skip_special_tokens=True)
            body = {"prompt": prompt, "max_tokens": count, "temperature": 0}
            answer = post("/v1/completions", body)
            choice = answer["choices"][0]
            got = (choice["token_ids"], choice["text"], choice["finish_reason"])
            if got != (want_ids, want_text, want_finish):
                fail(f"completion {prompt!r}: {got}, transformers "
                     f"{(want_ids, want_text, want_finish)}")
            usage = answer["usage"]
            if (usage["prompt_tokens"], usage["completion_tokens"]) != (
                    len(ids), len(want_ids)):
                fail(f"usage {usage}")
            echoed = post("/v1/completions", dict(body, echo=True))
            if echoed["choices"][0]["text"] != prompt + want_text:
                fail(f"echo: {echoed['choices'][0]['text']!r}")
            streamed = stream_text(server.port, body)
            if streamed != (want_text, want_ids, want_finish):
                fail(f"stream {prompt!r}: {streamed}")
            print(f"{prompt!r}: {len(want_ids)} tokens ({want_finish}) equal "
                  "transformers' generate, text equal its decode (plain, "
                  "echoed, streamed); /tokenize, /detokenize equal")

            # A stop string from the middle of the text: the answer ends
            # before it, streamed or not.
            visible = want_text.rstrip("\ufffd")
            if len(visible) >= 4:
                stop = visible[2:4]
                cut = want_text[:want_text.index(stop)]
                answer = post("/v1/completions", dict(body, stop=[stop]))
                choice = answer["choices"][0]
                streamed = stream_text(server.port, dict(body, stop=[stop]))
                if (choice["text"], choice["finish_reason"]) != (cut, "stop") \
                        or streamed[0] != cut or streamed[2] != "stop":
                    fail(f"stop {stop!r}: {choice['text']!r} "
                         f"{choice['finish_reason']}, streamed {streamed}, "
                         f"want {cut!r}")
                print(f"{prompt!r}: stop string {stop!r} cuts the text "
                      "before it (streamed and not)")
            else:
                print(f"{prompt!r}: text too short for a stop string")

        # Chat: the template's prompt, greedy, equals transformers' generate
        # on apply_chat_template's ids.
        ids = tokenizer.apply_chat_template(CHAT, add_generation_prompt=True,
                                            tokenize=True)
        if hasattr(ids, "keys"):
            ids = ids["input_ids"]
        want_ids, want_finish = generate(model, list(ids), 8)
        want_text = tokenizer.decode(want_ids, skip_special_tokens=True)
        answer = post("/v1/chat/completions", {"messages": CHAT,
                                               "max_tokens": 8,
                                               "temperature": 0})
        choice = answer["choices"][0]
        got = (choice["token_ids"], choice["message"]["content"],
               choice["finish_reason"], answer["usage"]["prompt_tokens"])
        if got != (want_ids, want_text, want_finish, len(ids)):
            fail(f"chat: {got}, transformers "
                 f"{(want_ids, want_text, want_finish, len(ids))}")
        print(f"chat: {len(want_ids)} tokens ({want_finish}) equal "
              "transformers' generate on apply_chat_template, text equal")

        import openai
        client = openai.OpenAI(base_url=server.url("/v1"), api_key=KEY)
        reply = client.chat.completions.create(model="m", messages=CHAT,
                                               max_tokens=8, temperature=0)
        streamed = "".join(
            chunk.choices[0].delta.content or "" for chunk in
            client.chat.completions.create(model="m", messages=CHAT,
                                           max_tokens=8, stream=True,
                                           temperature=0))
        if reply.choices[0].message.content != want_text or \
                streamed != want_text:
            fail(f"openai chat: {reply.choices[0].message.content!r}, "
                 f"streamed {streamed!r}, want {want_text!r}")
        sampled = client.chat.completions.create(
            model="m", messages=CHAT, max_tokens=6, n=2, temperature=0.9,
            seed=5, logprobs=True, top_logprobs=2)
        again = client.chat.completions.create(
            model="m", messages=CHAT, max_tokens=6, n=2, temperature=0.9,
            seed=5, logprobs=True, top_logprobs=2)
        contents = [c.message.content for c in sampled.choices]
        if len(contents) != 2 or contents != [
                c.message.content for c in again.choices] or any(
                len(c.logprobs.content[0].top_logprobs) != 2
                for c in sampled.choices):
            fail(f"openai chat n=2: {sampled}")
        print("openai chat: text equal (streamed and not); n=2 seeded "
              "sampling repeats, with 2 top logprobs a token")
        for name, bad in (("temperature", {"temperature": -1}),
                          ("top_p", {"top_p": 1.5}),
                          ("unknown field", {"extra_body": {"best_of": 2}})):
            try:
                client.chat.completions.create(model="m", messages=CHAT,
                                               max_tokens=2, **bad)
                fail(f"openai: bad {name} accepted")
            except openai.APIStatusError as error:
                print(f"openai bad {name}: {type(error).__name__} "
                      f"{error.status_code}: {error.body['error'] if isinstance(error.body, dict) else error.body}")
        ids = tokenizer(PROMPTS[0]).input_ids
        want_ids, _ = generate(model, ids, 6)
        completion = client.completions.create(model="m", prompt=PROMPTS[0],
                                               max_tokens=6, temperature=0)
        if completion.choices[0].text != tokenizer.decode(
                want_ids, skip_special_tokens=True):
            fail(f"openai: {completion.choices[0].text!r}")
        try:
            openai.OpenAI(base_url=server.url("/v1"), api_key="bad") \
                .completions.create(model="m", prompt="a", max_tokens=1)
            fail("openai: a bad key was accepted")
        except openai.AuthenticationError as error:
            print(f"openai: text equal, a bad key raises "
                  f"{type(error).__name__} {error.status_code}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--make-tokenizer", metavar="DIR")
    parser.add_argument("--out")
    parser.add_argument("--config", required=True)
    parser.add_argument("--tokenizer")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--mpirun")
    parser.add_argument("--server")
    parser.add_argument("--artifact")
    parser.add_argument("--weights")
    parser.add_argument("--work")
    args = parser.parse_args()
    if args.make_tokenizer:
        make_tokenizer(args.make_tokenizer, args.config, args.out)
    else:
        check(args)


if __name__ == "__main__":
    main()

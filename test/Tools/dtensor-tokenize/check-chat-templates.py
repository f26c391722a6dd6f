# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The chat templates of runtime/tooling (ChatTemplate.h, through
dtensor-tokenize --chat-template) against transformers'
apply_chat_template: for templates in the styles of the Llama 3, ChatML
(Qwen2), Mistral/Llama 2 families and one exercising whitespace control,
trim_blocks and lstrip_blocks, comments, tests, filters and methods, every
conversation renders to the same text and ids (or both raise, with the
same message); a template with a macro is refused with what it uses."""

import argparse
import json
import os
import subprocess
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

TEMPLATES = {
    "llama3": """{{- bos_token }}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] | trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}
{%- if system_message %}
{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' + system_message + '<|eot_id|>' }}
{%- endif %}
{%- for message in messages %}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
""",
    "chatml": """{%- if tools %}
{{- '<|im_start|>system\\n' }}{% if messages[0].role == 'system' %}{{ messages[0].content + '\\n\\n' }}{% endif %}{{ "# Tools\\n" }}{% for tool in tools %}{{ "\\n" }}{{ tool | tojson }}{% endfor %}{{ '<|im_end|>\\n' }}
{%- else %}
{%- if messages[0].role == 'system' %}{{ '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}{%- else %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{%- endif %}
{%- endif %}
{%- set ns = namespace(count=0) %}
{%- for message in messages %}
{%- if message.role != 'system' %}{%- set ns.count = ns.count + 1 %}
{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}
{{- '' if ns.count > 0 else 'none' }}""",
    "mistral": """{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}""",
    "blocks": """{# a comment #}
{% for m in messages %}
    {% if m.role == 'user' %}
User: {{ m.content.strip() }}
    {% else %}
Bot ({{ loop.index }}/{{ messages|length }}): {{ m.content ~ ('' if loop.last else ' |') }}
    {% endif %}
{% endfor %}
{% if add_generation_prompt is defined and add_generation_prompt %}Bot:{% endif %}
{{ 'X' if messages[0].content.startswith('Hi') else 'Y' }}{{ 'end' | upper }} {{ missing_variable is not defined }}
{{- [1, 2, 3][1:] | join(',') }} {{ {'a': 1}.get('b', 'none') }} {{ 7 % 3 - -1 }} {{ "x" in "xyz" and 2 not in [1] }}""",
}

CONVERSATIONS = [
    [{"role": "user", "content": "Hi there! 东京 😀"}],
    [{"role": "system", "content": "  Be brief.  "},
     {"role": "user", "content": "What is 2 + 2?"},
     {"role": "assistant", "content": "4."},
     {"role": "user", "content": "Hi again\nwith a newline"}],
    [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}],
]


def tokenizer():
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    specials = ["<s>", "</s>", "<|begin_of_text|>", "<|eot_id|>",
                "<|start_header_id|>", "<|end_header_id|>", "<|im_start|>",
                "<|im_end|>"]
    bpe.train_from_iterator(
        ["Hi there, be brief. What is 2 + 2? [INST] user assistant system"
         " You are a helpful assistant. Tools Bot User"] * 4,
        trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                            show_progress=False,
                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<s>",
                                   eos_token="</s>")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    fast = tokenizer()
    fast.save_pretrained(args.work)
    tools = [{"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}}}}}]
    failures = 0
    for name, source in TEMPLATES.items():
        path = os.path.join(args.work, name + ".jinja")
        with open(path, "w") as f:
            f.write(source)
        requests, expected = [], []
        for messages in CONVERSATIONS:
            for generation in (True, False):
                variables = {"messages": messages,
                             "add_generation_prompt": generation,
                             "bos_token": "<s>", "eos_token": "</s>"}
                kwargs = {}
                if name == "chatml" and generation:
                    variables["tools"] = tools
                    kwargs["tools"] = tools
                requests.append(variables)
                try:
                    text = fast.apply_chat_template(
                        messages, chat_template=source, tokenize=False,
                        add_generation_prompt=generation, **kwargs)
                    ids = fast.apply_chat_template(
                        messages, chat_template=source, tokenize=True,
                        add_generation_prompt=generation, **kwargs)
                    if hasattr(ids, "keys"):  # a BatchEncoding
                        ids = ids["input_ids"]
                    expected.append({"text": text, "ids": list(ids)})
                except Exception as error:  # jinja2's TemplateError
                    expected.append({"error": str(error)})
        done = subprocess.run(
            [args.tool, "--tokenizer", args.work, "--chat-template", path],
            input="".join(json.dumps(r) + "\n" for r in requests).encode(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if done.returncode != 0:
            print(f"FAIL: {name}: {done.stderr.decode().strip()}")
            failures += 1
            continue
        answers = [json.loads(l) for l in done.stdout.decode().splitlines()]
        equal = raised = 0
        for request, answer, want in zip(requests, answers, expected):
            if "error" in want:
                if "error" in answer and want["error"] in answer["error"]:
                    raised += 1
                    continue
            elif answer == want:
                equal += 1
                continue
            failures += 1
            print(f"FAIL: {name} {json.dumps(request)[:80]}: {answer}, "
                  f"transformers {want}")
        print(f"{name}: {equal} rendered equal (text and ids), {raised} "
              "raised the same message")
    macro = os.path.join(args.work, "macro.jinja")
    with open(macro, "w") as f:
        f.write("{% macro f() %}x{% endmacro %}{{ f() }}")
    done = subprocess.run([args.tool, "--tokenizer", args.work,
                           "--chat-template", macro], input=b"",
                          stderr=subprocess.PIPE)
    print(f"macro: exit {done.returncode}: "
          f"{done.stderr.decode().strip().split(': ', 2)[-1]}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

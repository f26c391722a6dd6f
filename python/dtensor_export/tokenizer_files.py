# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The tokenizer of an exported model, next to its plan: the files of a
Hugging Face model folder that dtensor-server --tokenizer reads (the
tokenizer, its config with the chat template and special tokens, the
generation config with the end-of-sequence ids)."""

import os
import shutil

from .errors import ExportError

# What dtensor-server reads (runtime/tooling/Tokenizer.h, TokenizerConfig.h)
# and what a user of the folder with `transformers` needs besides.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json",
                   "special_tokens_map.json", "added_tokens.json",
                   "chat_template.jinja", "generation_config.json")


def tokenizer_folder(plan_path):
    """Where the tokenizer of `plan_path` goes: model.json -> model.tokenizer/."""
    stem, _ = os.path.splitext(plan_path)
    return stem + ".tokenizer"


def has_tokenizer(folder):
    return any(os.path.exists(os.path.join(folder, name))
               for name in ("tokenizer.json", "tokenizer.model"))


def copy_tokenizer(source, plan_path, model=None):
    """Copies `source`'s tokenizer files to tokenizer_folder(plan_path); with
    no generation_config.json there, writes `model`'s (its eos_token_id ends
    the server's completions as it ends transformers' generate). Returns the
    folder."""
    if not has_tokenizer(source):
        raise ExportError(f"--tokenizer {source}: no tokenizer.json or "
                          "tokenizer.model there")
    target = tokenizer_folder(plan_path)
    os.makedirs(target, exist_ok=True)
    for name in TOKENIZER_FILES:
        path = os.path.join(source, name)
        if os.path.exists(path):
            shutil.copyfile(path, os.path.join(target, name))
    generation = os.path.join(target, "generation_config.json")
    config = getattr(model, "generation_config", None)
    if not os.path.exists(generation) and config is not None:
        config.to_json_file(generation)
    return target

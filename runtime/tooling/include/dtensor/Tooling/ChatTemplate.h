//===- ChatTemplate.h - A model's chat template, rendered -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Jinja chat template of a Hugging Face tokenizer_config.json (or
// chat_template.jinja) turns a list of messages into the prompt text, as
// `transformers`' apply_chat_template does. A subset of Jinja, enough for
// the templates of the Llama, Mistral, Qwen2 and GPT-2-style families:
//
//   {{ expression }}, {% if %}/{% elif %}/{% else %}/{% endif %},
//   {% for x in list %} (and `for k, v in dict.items()`, `loop.index`,
//   `index0`, `first`, `last`, `length`; an `else` branch is refused),
//   {% set x = ... %} and {% set ns.x = ... %} with namespace(...),
//   {# comments #}, whitespace control ({%- -%} {{- -}}), trim_blocks and
//   lstrip_blocks as transformers sets them.
//   Expressions: string, integer, float, true/false/none and list literals;
//   variables, `.attribute`, `[index]`, `[a:b]` slices; + - * / % ~;
//   == != < <= > >=, in, not in, and, or, not; `x if c else y`; tests
//   `is [not] defined / none / string / number / mapping / iterable /
//   true / false`; filters trim, length, count, tojson, upper, lower,
//   string, int, first, last, default, join, capitalize; the calls
//   raise_exception(message), namespace(...), range(n), and the methods
//   strip, lstrip, rstrip, startswith, endswith, upper, lower, split,
//   items, keys, values, get.
//
// Anything else (macros, call blocks, filters blocks, includes, other
// filters) is refused when the template is parsed, with what it was, so a
// server refuses a template it would render wrongly at start, not per
// request.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TOOLING_CHATTEMPLATE_H
#define DTENSOR_TOOLING_CHATTEMPLATE_H

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace dtensor::tooling {

class ChatTemplate {
public:
  /// Parses `source`; null with `error` set (what is not supported, and
  /// where) when it uses more than the subset above.
  static std::unique_ptr<ChatTemplate> parse(const std::string &source,
                                             std::string &error);
  ~ChatTemplate();

  /// Renders the template with `variables` (messages, add_generation_prompt,
  /// bos_token, eos_token, ...), their keys in the order given (tojson
  /// writes them so, as Python does). False with `error` set when the
  /// template raises (raise_exception) or misuses a value.
  bool render(const nlohmann::ordered_json &variables, std::string &text,
              std::string &error) const;

  struct Node;

private:
  ChatTemplate() = default;
  std::unique_ptr<Node> root_;
};

} // namespace dtensor::tooling

#endif // DTENSOR_TOOLING_CHATTEMPLATE_H

//===- ChatTemplateTest.cpp - Tests of the chat template subset -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Jinja's whitespace rules as transformers configures them, scoping of set
// in loops and namespaces, Python's str of values, and the refusals at
// parse; test/Tools/dtensor-tokenize/chat-templates.test compares whole
// templates with transformers'.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/ChatTemplate.h"

#include <gtest/gtest.h>

using dtensor::tooling::ChatTemplate;
using nlohmann::ordered_json;

namespace {

std::string render(const std::string &source, const ordered_json &variables,
                   bool expectOk = true) {
  std::string error, text;
  auto chat = ChatTemplate::parse(source, error);
  EXPECT_TRUE(chat) << error;
  if (!chat)
    return error;
  bool ok = chat->render(variables, text, error);
  EXPECT_EQ(ok, expectOk) << error;
  return ok ? text : error;
}

TEST(ChatTemplateTest, WhitespaceControl) {
  ordered_json none = ordered_json::object();
  // trim_blocks: the newline after a block tag goes; lstrip_blocks: the
  // indentation before one too. {{ }} keeps both.
  EXPECT_EQ(render("a\n  {% if true %}\n  b\n  {% endif %}\nc", none),
            "a\n  b\nc");
  EXPECT_EQ(render("x  {{- ' y ' -}}  z", none), "x y z");
  EXPECT_EQ(render("{# note #}\n{{ 1 }}\n", none), "1\n");
}

TEST(ChatTemplateTest, ScopesAndNamespaces) {
  ordered_json variables = {{"items", {1, 2, 3}}};
  EXPECT_EQ(render("{% set n = 0 %}{% for i in items %}{% set n = n + i %}"
                   "{% endfor %}{{ n }}",
                   variables),
            "0");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for i in items %}"
                   "{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}",
                   variables),
            "6");
  EXPECT_EQ(render("{% for i in items %}{{ loop.index0 }}{{ ',' if not "
                   "loop.last }}{% endfor %}",
                   variables),
            "0,1,2");
}

TEST(ChatTemplateTest, PythonValues) {
  ordered_json variables = {{"d", {{"b", 1}, {"a", "x"}}}, {"f", 2.5}};
  EXPECT_EQ(render("{{ d }} {{ d | tojson }} {{ f }} {{ none }} {{ true }} "
                   "{{ 4 / 2 }} {{ undefined_name }}|",
                   variables),
            "{'b': 1, 'a': 'x'} {\"b\": 1, \"a\": \"x\"} 2.5 None True 2.0 |");
  EXPECT_EQ(render("{{ raise_exception('no system role') }}",
                   ordered_json::object(), false),
            "the chat template raised: no system role");
}

TEST(ChatTemplateTest, RefusesWhatItDoesNotImplement) {
  std::string error;
  EXPECT_FALSE(ChatTemplate::parse("{% include 'x' %}", error));
  EXPECT_EQ(error, "chat template: line 1: the statement 'include' is not "
                   "supported (if, elif, else, endif, for, endfor, set are)");
  EXPECT_FALSE(ChatTemplate::parse("\n{{ x | wordcount }}", error));
  EXPECT_EQ(error, "chat template: line 2: the filter 'wordcount' is not "
                   "supported");
  EXPECT_FALSE(ChatTemplate::parse("{% if x %}", error));
  EXPECT_EQ(error, "chat template: line 1: the template ends before elif or "
                   "else or endif");
  EXPECT_FALSE(
      ChatTemplate::parse("{% for x in y %}{% else %}{% endfor %}", error));
  EXPECT_NE(error.find("else branch is not supported"), std::string::npos);
}

} // namespace

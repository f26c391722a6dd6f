//===- ChatTemplateSyntax.h - The chat template's tree ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the chat template's lexer, parser and renderer share (private to
// runtime/tooling; ChatTemplate.h is the interface): the tokens and pieces
// of the source, the tree, and the failure that carries a message with its
// line. A small Jinja interpreter in three steps: the source is cut into
// text and tags (ChatTemplateLexer.cpp), tags into a tree by recursive
// descent (ChatTemplateParser.cpp), and the tree is evaluated over JSON
// values (ChatTemplateRenderer.cpp). Written here: Debian packages no C++
// Jinja library (Inja lacks Jinja's loop, namespace and test syntax;
// minja is not packaged).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_TOOLING_CHATTEMPLATESYNTAX_H
#define DTENSOR_RUNTIME_TOOLING_CHATTEMPLATESYNTAX_H

#include "dtensor/Tooling/ChatTemplate.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dtensor::tooling {

// Keys in their order, as Python's dicts keep them (tojson of tools).
using json = nlohmann::ordered_json;

/// A template or expression node.
struct ChatTemplate::Node {
  enum Kind {
    // Statements.
    Sequence,
    Text,
    Output,
    If,
    For,
    Set,
    // Expressions.
    Literal,
    Name,
    Attribute,
    Index,
    Slice,
    Call,
    Filter,
    Test,
    Not,
    Negate,
    Binary,
    Ternary,
    List,
    Dict
  } kind;
  std::string text; // text, name, operator, attribute, filter or test
  json literal;
  std::vector<std::unique_ptr<Node>> children;
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> keywords;
  std::vector<std::string> targets; // for: loop variables; set: a.b
  bool negated = false;             // is not, not in
  int line = 0;
};

namespace jinja {

using Node = ChatTemplate::Node;
using NodePtr = std::unique_ptr<Node>;

/// A template that cannot be parsed or rendered: "line N: why".
struct Failure {
  std::string message;
};

[[noreturn]] inline void fail(int line, const std::string &message) {
  throw Failure{"line " + std::to_string(line) + ": " + message};
}

struct Token {
  enum Kind { Name, String, Integer, Float, Operator, End } kind;
  std::string text;
  json value;
  int line = 0;
};

/// A piece of the source: text, an {{ output }} or a {% statement %}.
struct Piece {
  enum Kind { Text, Output, Statement } kind;
  std::string text;
  std::vector<Token> tokens;
  int line = 0;
};

/// The source cut into pieces, with Jinja's whitespace control and
/// transformers' trim_blocks and lstrip_blocks applied.
std::vector<Piece> lex(const std::string &source);

/// The pieces as a tree; anything outside the subset fails.
NodePtr parse(std::vector<Piece> pieces);

/// Appends the rendering of `root` with `variables` to `out`.
void render(const Node &root, const json &variables, std::string &out);

} // namespace jinja
} // namespace dtensor::tooling

#endif // DTENSOR_RUNTIME_TOOLING_CHATTEMPLATESYNTAX_H

//===- ChatTemplateParser.cpp - Chat template pieces to a tree ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Recursive descent with Jinja's precedence: `x if c else y`, or, and, not,
// comparisons (and in, not in), + -, ~, * / %, unary minus, then postfix
// attributes, indexing, slices and calls, with filters and tests binding
// tighter than arithmetic. Statements outside if/for/set, and filters and
// tests outside the subset, fail here, when the template is loaded.
//
//===----------------------------------------------------------------------===//

#include "ChatTemplateSyntax.h"

#include <algorithm>
#include <set>

namespace dtensor::tooling::jinja {

namespace {

NodePtr makeNode(Node::Kind kind, int line) {
  auto node = std::make_unique<Node>();
  node->kind = kind;
  node->line = line;
  return node;
}

const std::set<std::string> kFilters = {
    "trim", "length", "count", "tojson",  "upper", "lower",      "string",
    "int",  "first",  "last",  "default", "join",  "capitalize", "items"};
const std::set<std::string> kTests = {
    "defined",  "undefined", "none", "string", "number",  "mapping",
    "iterable", "sequence",  "true", "false",  "boolean", "integer"};

/// Expressions over the tokens of one tag.
class ExpressionParser {
public:
  ExpressionParser(const std::vector<Token> &tokens, size_t at = 0)
      : tokens_(tokens), at_(at) {}

  const Token &peek(size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  bool isOperator(const char *op, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Operator && peek(ahead).text == op;
  }
  bool isName(const char *name, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Name && peek(ahead).text == name;
  }
  const Token &next() { return tokens_[std::min(at_++, tokens_.size() - 1)]; }
  void expectOperator(const char *op) {
    if (!isOperator(op))
      fail(peek().line, std::string("expected '") + op + "'" + found());
    next();
  }
  std::string expectName() {
    if (peek().kind != Token::Name)
      fail(peek().line, "expected a name" + found());
    return next().text;
  }
  void expectEnd() {
    if (peek().kind != Token::End)
      fail(peek().line, "unexpected" + found());
  }
  std::string found() const {
    const Token &token = peek();
    if (token.kind == Token::End)
      return ", found the end of the tag";
    return ", found '" +
           (token.kind == Token::String ? token.value.get<std::string>()
            : token.text.empty()        ? token.value.dump()
                                        : token.text) +
           "'";
  }

  NodePtr expression() {
    NodePtr value = orExpression();
    if (isName("if")) {
      int line = next().line;
      auto ternary = makeNode(Node::Ternary, line);
      NodePtr condition = orExpression();
      NodePtr otherwise;
      if (isName("else")) {
        next();
        otherwise = expression();
      } else {
        otherwise = makeNode(Node::Literal, line);
        otherwise->text = "undefined";
      }
      ternary->children.push_back(std::move(value));
      ternary->children.push_back(std::move(condition));
      ternary->children.push_back(std::move(otherwise));
      return ternary;
    }
    return value;
  }

private:
  NodePtr binary(NodePtr left, const std::string &op, NodePtr right) {
    auto node = makeNode(Node::Binary, left->line);
    node->text = op;
    node->children.push_back(std::move(left));
    node->children.push_back(std::move(right));
    return node;
  }

  NodePtr orExpression() {
    NodePtr left = andExpression();
    while (isName("or")) {
      next();
      left = binary(std::move(left), "or", andExpression());
    }
    return left;
  }
  NodePtr andExpression() {
    NodePtr left = notExpression();
    while (isName("and")) {
      next();
      left = binary(std::move(left), "and", notExpression());
    }
    return left;
  }
  NodePtr notExpression() {
    if (isName("not")) {
      int line = next().line;
      auto node = makeNode(Node::Not, line);
      node->children.push_back(notExpression());
      return node;
    }
    return comparison();
  }
  NodePtr comparison() {
    NodePtr left = additive();
    while (true) {
      const Token &token = peek();
      if (token.kind == Token::Operator &&
          (token.text == "==" || token.text == "!=" || token.text == "<" ||
           token.text == ">" || token.text == "<=" || token.text == ">=")) {
        std::string op = next().text;
        left = binary(std::move(left), op, additive());
      } else if (isName("in")) {
        next();
        left = binary(std::move(left), "in", additive());
      } else if (isName("not") && isName("in", 1)) {
        next();
        next();
        left = binary(std::move(left), "not in", additive());
      } else {
        return left;
      }
    }
  }
  NodePtr additive() {
    NodePtr left = concatenation();
    while (isOperator("+") || isOperator("-")) {
      std::string op = next().text;
      left = binary(std::move(left), op, concatenation());
    }
    return left;
  }
  NodePtr concatenation() {
    NodePtr left = multiplicative();
    while (isOperator("~")) {
      next();
      left = binary(std::move(left), "~", multiplicative());
    }
    return left;
  }
  NodePtr multiplicative() {
    NodePtr left = unary();
    while (isOperator("*") || isOperator("/") || isOperator("%")) {
      std::string op = next().text;
      left = binary(std::move(left), op, unary());
    }
    if (isOperator("//") || isOperator("**"))
      fail(peek().line, "the operator '" + peek().text + "' is not supported");
    return left;
  }
  NodePtr unary() {
    if (isOperator("-")) {
      int line = next().line;
      auto node = makeNode(Node::Negate, line);
      node->children.push_back(unary());
      return node;
    }
    NodePtr node = postfix(primary());
    // Filters and tests bind tighter than arithmetic.
    while (true) {
      if (isOperator("|")) {
        int line = next().line;
        std::string name = expectName();
        if (!kFilters.count(name))
          fail(line, "the filter '" + name + "' is not supported");
        auto filter = makeNode(Node::Filter, line);
        filter->text = name;
        filter->children.push_back(std::move(node));
        if (isOperator("("))
          arguments(*filter);
        node = std::move(filter);
      } else if (isName("is")) {
        int line = next().line;
        auto test = makeNode(Node::Test, line);
        if (isName("not")) {
          next();
          test->negated = true;
        }
        test->text = expectName();
        if (!kTests.count(test->text))
          fail(line, "the test '" + test->text + "' is not supported");
        test->children.push_back(std::move(node));
        node = std::move(test);
      } else {
        return node;
      }
    }
  }
  /// (arguments, keyword=arguments) into `call`'s children after the
  /// first and its keywords.
  void arguments(Node &call) {
    expectOperator("(");
    while (!isOperator(")")) {
      if (peek().kind == Token::Name && isOperator("=", 1)) {
        std::string name = next().text;
        next();
        call.keywords.emplace_back(name, expression());
      } else {
        call.children.push_back(expression());
      }
      if (!isOperator(")"))
        expectOperator(",");
    }
    next();
  }
  NodePtr postfix(NodePtr node) {
    while (true) {
      if (isOperator(".")) {
        int line = next().line;
        auto attribute = makeNode(Node::Attribute, line);
        attribute->text = expectName();
        attribute->children.push_back(std::move(node));
        node = std::move(attribute);
      } else if (isOperator("[")) {
        int line = next().line;
        NodePtr start, stop;
        if (!isOperator(":"))
          start = expression();
        if (isOperator(":")) {
          next();
          auto slice = makeNode(Node::Slice, line);
          if (!isOperator("]"))
            stop = expression();
          slice->children.push_back(std::move(node));
          slice->children.push_back(std::move(start));
          slice->children.push_back(std::move(stop));
          node = std::move(slice);
        } else {
          auto index = makeNode(Node::Index, line);
          index->children.push_back(std::move(node));
          index->children.push_back(std::move(start));
          node = std::move(index);
        }
        expectOperator("]");
      } else if (isOperator("(")) {
        auto call = makeNode(Node::Call, peek().line);
        call->children.push_back(std::move(node));
        arguments(*call);
        node = std::move(call);
      } else {
        return node;
      }
    }
  }
  NodePtr primary() {
    const Token &token = next();
    if (token.kind == Token::String || token.kind == Token::Integer ||
        token.kind == Token::Float) {
      auto node = makeNode(Node::Literal, token.line);
      node->literal = token.value;
      // Adjacent strings concatenate.
      while (token.kind == Token::String && peek().kind == Token::String)
        node->literal =
            node->literal.get<std::string>() + next().value.get<std::string>();
      return node;
    }
    if (token.kind == Token::Name) {
      auto node = makeNode(Node::Literal, token.line);
      if (token.text == "true" || token.text == "True")
        node->literal = true;
      else if (token.text == "false" || token.text == "False")
        node->literal = false;
      else if (token.text == "none" || token.text == "None")
        node->literal = nullptr;
      else {
        node->kind = Node::Name;
        node->text = token.text;
      }
      return node;
    }
    if (token.kind == Token::Operator && token.text == "(") {
      NodePtr inner = expression();
      expectOperator(")");
      return inner;
    }
    if (token.kind == Token::Operator && token.text == "[") {
      auto list = makeNode(Node::List, token.line);
      while (!isOperator("]")) {
        list->children.push_back(expression());
        if (!isOperator("]"))
          expectOperator(",");
      }
      next();
      return list;
    }
    if (token.kind == Token::Operator && token.text == "{") {
      auto dict = makeNode(Node::Dict, token.line);
      while (!isOperator("}")) {
        dict->children.push_back(expression());
        expectOperator(":");
        dict->children.push_back(expression());
        if (!isOperator("}"))
          expectOperator(",");
      }
      next();
      return dict;
    }
    --at_;
    fail(token.line, "expected an expression" + found());
  }

  const std::vector<Token> &tokens_;
  size_t at_;
};

/// Statements: the pieces into a tree.
class TemplateParser {
public:
  explicit TemplateParser(std::vector<Piece> pieces)
      : pieces_(std::move(pieces)) {}

  NodePtr parse() {
    std::string end;
    NodePtr body = sequence({}, end);
    return body;
  }

private:
  /// Pieces until a statement named in `enders`; its name into `end`.
  NodePtr sequence(const std::set<std::string> &enders, std::string &end) {
    auto body = makeNode(Node::Sequence, 0);
    while (at_ < pieces_.size()) {
      Piece &piece = pieces_[at_++];
      if (piece.kind == Piece::Text) {
        auto text = makeNode(Node::Text, piece.line);
        text->text = piece.text;
        body->children.push_back(std::move(text));
        continue;
      }
      ExpressionParser tokens(piece.tokens);
      if (piece.kind == Piece::Output) {
        auto output = makeNode(Node::Output, piece.line);
        output->children.push_back(tokens.expression());
        tokens.expectEnd();
        body->children.push_back(std::move(output));
        continue;
      }
      std::string keyword = tokens.expectName();
      if (enders.count(keyword)) {
        end = keyword;
        current_ = std::move(piece);
        return body;
      }
      if (keyword == "if")
        body->children.push_back(ifStatement(tokens, piece.line));
      else if (keyword == "for")
        body->children.push_back(forStatement(tokens, piece.line));
      else if (keyword == "set")
        body->children.push_back(setStatement(tokens, piece.line));
      else
        fail(piece.line,
             "the statement '" + keyword +
                 "' is not supported (if, elif, else, endif, for, endfor, "
                 "set are)");
    }
    if (!enders.empty()) {
      std::string names;
      for (const std::string &name : enders)
        names += (names.empty() ? "" : " or ") + name;
      fail(pieces_.empty() ? 0 : pieces_.back().line,
           "the template ends before " + names);
    }
    return body;
  }

  NodePtr ifStatement(ExpressionParser &tokens, int line) {
    auto node = makeNode(Node::If, line);
    NodePtr condition = tokens.expression();
    tokens.expectEnd();
    while (true) {
      std::string end;
      NodePtr body = sequence({"elif", "else", "endif"}, end);
      node->children.push_back(std::move(condition));
      node->children.push_back(std::move(body));
      ExpressionParser rest(current_.tokens);
      rest.expectName();
      if (end == "endif") {
        rest.expectEnd();
        return node;
      }
      if (end == "else") {
        rest.expectEnd();
        condition = makeNode(Node::Literal, current_.line);
        condition->literal = true;
        continue;
      }
      condition = rest.expression();
      rest.expectEnd();
    }
  }

  NodePtr forStatement(ExpressionParser &tokens, int line) {
    auto node = makeNode(Node::For, line);
    node->targets.push_back(tokens.expectName());
    if (tokens.isOperator(",")) {
      tokens.next();
      node->targets.push_back(tokens.expectName());
    }
    if (!tokens.isName("in"))
      fail(line, "expected 'in' in a for statement" + tokens.found());
    tokens.next();
    node->children.push_back(tokens.expression());
    if (tokens.isName("if") || tokens.isName("recursive"))
      fail(line, "a for statement with '" + tokens.peek().text +
                     "' is not supported");
    tokens.expectEnd();
    std::string end;
    node->children.push_back(sequence({"endfor", "else"}, end));
    if (end == "else")
      fail(current_.line, "a for statement's else branch is not supported");
    return node;
  }

  NodePtr setStatement(ExpressionParser &tokens, int line) {
    auto node = makeNode(Node::Set, line);
    node->targets.push_back(tokens.expectName());
    if (tokens.isOperator(".")) {
      tokens.next();
      node->targets.push_back(tokens.expectName());
    }
    if (!tokens.isOperator("="))
      fail(line, "a set block ({% set x %}...{% endset %}) is not supported");
    tokens.next();
    node->children.push_back(tokens.expression());
    tokens.expectEnd();
    return node;
  }

  std::vector<Piece> pieces_;
  size_t at_ = 0;
  Piece current_;
};

} // namespace

NodePtr parse(std::vector<Piece> pieces) {
  return TemplateParser(std::move(pieces)).parse();
}

} // namespace dtensor::tooling::jinja

//===- ChatTemplate.cpp - A model's chat template, rendered ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A small Jinja interpreter: the source is cut into text and tags (with
// Jinja's whitespace control and transformers' trim_blocks and
// lstrip_blocks), tags into tokens, tokens into a tree by recursive descent
// with Jinja's precedence (filters and tests bind tighter than arithmetic,
// `not` looser than comparisons), and the tree is evaluated over JSON
// values. Written here: Debian packages no C++ Jinja library (Inja lacks
// Jinja's loop, namespace and test syntax; minja is not packaged).
//
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/ChatTemplate.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

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

namespace {

using Node = ChatTemplate::Node;
using NodePtr = std::unique_ptr<Node>;

/// A value: JSON, or Jinja's undefined.
struct Value {
  json data;
  bool undefined = false;
  static Value missing() {
    Value value;
    value.undefined = true;
    return value;
  }
};

struct Failure {
  std::string message;
};

[[noreturn]] void fail(int line, const std::string &message) {
  throw Failure{"line " + std::to_string(line) + ": " + message};
}

//===----------------------------------------------------------------------===//
// Lexing
//===----------------------------------------------------------------------===//

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

class Lexer {
public:
  explicit Lexer(const std::string &source) : source_(source) {}

  std::vector<Piece> pieces() {
    std::vector<Piece> result;
    std::string text;
    bool trimNext = false; // a `-` closer or trim_blocks
    while (at_ < source_.size()) {
      size_t open = findTag(at_);
      std::string before = source_.substr(at_, open - at_);
      if (trimNext) {
        size_t first = before.find_first_not_of(" \t\r\n");
        before = first == std::string::npos ? "" : before.substr(first);
      }
      if (blockNewline_ && !before.empty() && before[0] == '\n')
        before.erase(0, 1);
      trimNext = blockNewline_ = false;
      advance(open);
      if (open >= source_.size()) {
        result.push_back({Piece::Text, before, {}, line_});
        break;
      }
      char kind = source_[open + 1];
      bool trimBefore = open + 2 < source_.size() && source_[open + 2] == '-';
      bool keepBefore = open + 2 < source_.size() && source_[open + 2] == '+';
      if (trimBefore) {
        size_t last = before.find_last_not_of(" \t\r\n");
        before = last == std::string::npos ? "" : before.substr(0, last + 1);
      } else if (kind != '{' && !keepBefore) {
        // lstrip_blocks: the spaces and tabs between a line's start and a
        // block tag or comment go.
        size_t last = before.find_last_not_of(" \t");
        if (last == std::string::npos ? lineStartBefore(open, before)
                                      : before[last] == '\n')
          before.erase(last == std::string::npos ? 0 : last + 1);
      }
      if (!before.empty())
        result.push_back({Piece::Text, before, {}, line_});
      at_ = open + 2 + (trimBefore || keepBefore ? 1 : 0);
      int line = line_;
      if (kind == '#') {
        size_t close = source_.find("#}", at_);
        if (close == std::string::npos)
          fail(line, "a comment is not closed");
        trimNext = close > at_ && source_[close - 1] == '-';
        advance(close + 2);
        at_ = close + 2;
        blockNewline_ = !trimNext;
        continue;
      }
      std::string closer = kind == '{' ? "}}" : "%}";
      Piece piece{kind == '{' ? Piece::Output : Piece::Statement, "", {}, line};
      piece.tokens = tokens(closer, trimNext);
      if (kind == '%' && !trimNext)
        blockNewline_ = true; // trim_blocks
      result.push_back(std::move(piece));
    }
    return result;
  }

private:
  /// The next "{{", "{%" or "{#" from `from` (the end if none).
  size_t findTag(size_t from) const {
    for (size_t i = from; i + 1 < source_.size(); ++i)
      if (source_[i] == '{' && (source_[i + 1] == '{' ||
                                source_[i + 1] == '%' || source_[i + 1] == '#'))
        return i;
    return source_.size();
  }

  /// Whether `before` (all spaces) starts a line: a newline or the start
  /// of the source precedes it.
  bool lineStartBefore(size_t open, const std::string &before) const {
    size_t start = open - before.size();
    return start == 0 || source_[start - 1] == '\n';
  }

  void advance(size_t to) {
    for (size_t i = at_; i < to && i < source_.size(); ++i)
      if (source_[i] == '\n')
        ++line_;
  }

  /// The tokens of a tag up to `closer` ("}}" or "%}"); `trimAfter` tells
  /// whether it closed with "-".
  std::vector<Token> tokens(const std::string &closer, bool &trimAfter) {
    std::vector<Token> result;
    int line = line_;
    while (true) {
      while (at_ < source_.size() &&
             std::isspace(static_cast<unsigned char>(source_[at_]))) {
        if (source_[at_] == '\n')
          ++line_;
        ++at_;
      }
      if (at_ >= source_.size())
        fail(line, "a tag is not closed with '" + closer + "'");
      if (source_.compare(at_, 1 + closer.size(), "-" + closer) == 0 ||
          source_.compare(at_, closer.size(), closer) == 0) {
        trimAfter = source_[at_] == '-';
        at_ += closer.size() + (trimAfter ? 1 : 0);
        result.push_back({Token::End, "", json(), line_});
        return result;
      }
      char c = source_[at_];
      Token token{Token::Operator, "", json(), line_};
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t end = at_;
        while (end < source_.size() &&
               (std::isalnum(static_cast<unsigned char>(source_[end])) ||
                source_[end] == '_'))
          ++end;
        token.kind = Token::Name;
        token.text = source_.substr(at_, end - at_);
        at_ = end;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        size_t end = at_;
        bool isFloat = false;
        while (end < source_.size() &&
               (std::isdigit(static_cast<unsigned char>(source_[end])) ||
                (source_[end] == '.' && !isFloat && end + 1 < source_.size() &&
                 std::isdigit(static_cast<unsigned char>(source_[end + 1]))))) {
          isFloat |= source_[end] == '.';
          ++end;
        }
        std::string digits = source_.substr(at_, end - at_);
        token.kind = isFloat ? Token::Float : Token::Integer;
        token.value =
            isFloat ? json(std::stod(digits)) : json(std::stoll(digits));
        at_ = end;
      } else if (c == '\'' || c == '"') {
        token.kind = Token::String;
        std::string value;
        size_t i = at_ + 1;
        for (; i < source_.size() && source_[i] != c; ++i) {
          if (source_[i] != '\\' || i + 1 >= source_.size()) {
            value += source_[i];
            continue;
          }
          char escaped = source_[++i];
          switch (escaped) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case 'r':
            value += '\r';
            break;
          default:
            value += escaped;
            break;
          }
        }
        if (i >= source_.size())
          fail(line_, "a string is not closed");
        token.value = value;
        at_ = i + 1;
      } else {
        static const char *const twoChar[] = {
            "==", "!=", "<=", ">=", "//", "**"};
        token.text = std::string(1, c);
        for (const char *op : twoChar)
          if (source_.compare(at_, 2, op) == 0)
            token.text = op;
        if (token.text.size() == 1 &&
            std::string("+-*/%~<>=()[]{}.,:|").find(c) == std::string::npos)
          fail(line_, std::string("unexpected character '") + c + "'");
        at_ += token.text.size();
      }
      result.push_back(std::move(token));
    }
  }

  const std::string &source_;
  size_t at_ = 0;
  int line_ = 1;
  bool blockNewline_ = false;
};

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Rendering
//===----------------------------------------------------------------------===//

bool truthy(const Value &value) {
  if (value.undefined)
    return false;
  const json &data = value.data;
  switch (data.type()) {
  case json::value_t::null:
    return false;
  case json::value_t::boolean:
    return data.get<bool>();
  case json::value_t::string:
    // json::empty() is false for every string.
    return !data.get_ref<const std::string &>().empty();
  case json::value_t::array:
  case json::value_t::object:
    return !data.empty();
  case json::value_t::number_float:
    return data.get<double>() != 0;
  default:
    return data.get<int64_t>() != 0;
  }
}

std::string pythonFloat(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  // The shortest form that reads back the same, as Python's repr.
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", digits, value);
    if (std::stod(shorter) == value) {
      std::snprintf(text, sizeof(text), "%s", shorter);
      break;
    }
  }
  std::string result = text;
  if (result.find_first_of(".enI") == std::string::npos)
    result += ".0";
  return result;
}

std::string repr(const json &data);

/// Python's str() of a value.
std::string toText(const Value &value) {
  if (value.undefined)
    return "";
  const json &data = value.data;
  if (data.is_string())
    return data.get<std::string>();
  if (data.is_boolean())
    return data.get<bool>() ? "True" : "False";
  if (data.is_null())
    return "None";
  if (data.is_number_float())
    return pythonFloat(data.get<double>());
  if (data.is_number())
    return data.dump();
  return repr(data);
}

/// Python's repr() of a value ({'a': [1, 'b']}).
std::string repr(const json &data) {
  if (data.is_string()) {
    std::string text = "'";
    for (char c : data.get<std::string>()) {
      if (c == '\'' || c == '\\')
        text += '\\';
      if (c == '\n') {
        text += "\\n";
        continue;
      }
      text += c;
    }
    return text + "'";
  }
  if (data.is_array()) {
    std::string text = "[";
    for (size_t i = 0; i < data.size(); ++i)
      text += (i ? ", " : "") + repr(data[i]);
    return text + "]";
  }
  if (data.is_object()) {
    std::string text = "{";
    bool first = true;
    for (const auto &item : data.items()) {
      text += (first ? "" : ", ") + repr(json(item.key())) + ": " +
              repr(item.value());
      first = false;
    }
    return text + "}";
  }
  Value value;
  value.data = data;
  return toText(value);
}

/// Python's json.dumps(value, ensure_ascii=False), transformers' tojson
/// (", " and ": " separators; `indent` spaces a level when given).
std::string pythonJson(const json &data, int indent, int depth = 0) {
  std::string newline =
      indent > 0 ? "\n" + std::string((depth + 1) * indent, ' ') : "";
  std::string closing =
      indent > 0 ? "\n" + std::string(depth * indent, ' ') : "";
  std::string separator = indent > 0 ? "," : ", ";
  if (data.is_array()) {
    if (data.empty())
      return "[]";
    std::string text = "[";
    for (size_t i = 0; i < data.size(); ++i)
      text += (i ? separator : "") + newline +
              pythonJson(data[i], indent, depth + 1);
    return text + closing + "]";
  }
  if (data.is_object()) {
    if (data.empty())
      return "{}";
    std::string text = "{";
    bool first = true;
    for (const auto &item : data.items()) {
      text += (first ? "" : separator) + newline + json(item.key()).dump() +
              ": " + pythonJson(item.value(), indent, depth + 1);
      first = false;
    }
    return text + closing + "}";
  }
  if (data.is_number_float())
    return pythonFloat(data.get<double>());
  return data.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string strip(const std::string &text, const std::string &chars, bool left,
                  bool right) {
  size_t begin = left ? text.find_first_not_of(chars) : 0;
  if (begin == std::string::npos)
    return "";
  size_t end = right ? text.find_last_not_of(chars) : text.size() - 1;
  return text.substr(begin, end - begin + 1);
}

const char *const kWhitespace = " \t\n\r\f\v";

Value make(json data) {
  Value value;
  value.data = std::move(data);
  return value;
}

class Renderer {
public:
  explicit Renderer(const json &variables) {
    scopes_.emplace_back();
    for (const auto &item : variables.items())
      scopes_.back()[item.key()] = make(item.value());
  }

  void render(const Node &node, std::string &out) {
    switch (node.kind) {
    case Node::Sequence:
      for (const NodePtr &child : node.children)
        render(*child, out);
      return;
    case Node::Text:
      out += node.text;
      return;
    case Node::Output:
      out += toText(evaluate(*node.children[0]));
      return;
    case Node::If:
      for (size_t i = 0; i + 1 < node.children.size(); i += 2)
        if (truthy(evaluate(*node.children[i]))) {
          render(*node.children[i + 1], out);
          return;
        }
      return;
    case Node::For:
      return renderFor(node, out);
    case Node::Set: {
      Value value = evaluate(*node.children[0]);
      if (node.targets.size() == 1) {
        scopes_.back()[node.targets[0]] = value;
        return;
      }
      Value *object = lookup(node.targets[0]);
      if (!object || !object->data.is_object())
        fail(node.line, "'" + node.targets[0] + "' is not a namespace");
      object->data[node.targets[1]] = value.data;
      return;
    }
    default:
      fail(node.line, "not a statement");
    }
  }

private:
  Value *lookup(const std::string &name) {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto found = scope->find(name);
      if (found != scope->end())
        return &found->second;
    }
    return nullptr;
  }

  void renderFor(const Node &node, std::string &out) {
    Value iterable = evaluate(*node.children[0]);
    json items = json::array();
    if (iterable.undefined || iterable.data.is_null())
      return;
    if (iterable.data.is_array())
      items = iterable.data;
    else if (iterable.data.is_object())
      for (const auto &item : iterable.data.items())
        items.push_back(item.key());
    else if (iterable.data.is_string())
      for (char c : iterable.data.get<std::string>())
        items.push_back(std::string(1, c));
    else
      fail(node.line, "cannot loop over " + repr(iterable.data));
    // Assignments in a loop's body stay in it, as in Jinja.
    scopes_.emplace_back();
    for (size_t i = 0; i < items.size(); ++i) {
      auto &scope = scopes_.back();
      scope.clear();
      if (node.targets.size() == 2) {
        if (!items[i].is_array() || items[i].size() != 2)
          fail(node.line, "cannot unpack " + repr(items[i]) + " into " +
                              node.targets[0] + ", " + node.targets[1]);
        scope[node.targets[0]] = make(items[i][0]);
        scope[node.targets[1]] = make(items[i][1]);
      } else {
        scope[node.targets[0]] = make(items[i]);
      }
      int64_t n = static_cast<int64_t>(items.size()),
              index = static_cast<int64_t>(i);
      scope["loop"] = make({{"index", index + 1},
                            {"index0", index},
                            {"revindex", n - index},
                            {"revindex0", n - index - 1},
                            {"first", i == 0},
                            {"last", index == n - 1},
                            {"length", n}});
      render(*node.children[1], out);
    }
    scopes_.pop_back();
  }

  Value evaluate(const Node &node) {
    switch (node.kind) {
    case Node::Literal:
      return node.text == "undefined" ? Value::missing() : make(node.literal);
    case Node::Name: {
      Value *value = lookup(node.text);
      return value ? *value : Value::missing();
    }
    case Node::List: {
      json list = json::array();
      for (const NodePtr &child : node.children)
        list.push_back(evaluate(*child).data);
      return make(list);
    }
    case Node::Dict: {
      json dict = json::object();
      for (size_t i = 0; i + 1 < node.children.size(); i += 2)
        dict[toText(evaluate(*node.children[i]))] =
            evaluate(*node.children[i + 1]).data;
      return make(dict);
    }
    case Node::Attribute:
      return attribute(evaluate(*node.children[0]), node.text, node.line);
    case Node::Index:
      return index(evaluate(*node.children[0]), evaluate(*node.children[1]),
                   node.line);
    case Node::Slice:
      return slice(node);
    case Node::Call:
      return call(node);
    case Node::Filter:
      return filter(node);
    case Node::Test: {
      bool result = test(node.text, evaluate(*node.children[0]));
      return make(node.negated ? !result : result);
    }
    case Node::Not:
      return make(!truthy(evaluate(*node.children[0])));
    case Node::Negate: {
      Value value = evaluate(*node.children[0]);
      if (!value.data.is_number())
        fail(node.line, "cannot negate " + repr(value.data));
      return value.data.is_number_float() ? make(-value.data.get<double>())
                                          : make(-value.data.get<int64_t>());
    }
    case Node::Ternary:
      return truthy(evaluate(*node.children[1])) ? evaluate(*node.children[0])
                                                 : evaluate(*node.children[2]);
    case Node::Binary:
      return binary(node);
    default:
      fail(node.line, "not an expression");
    }
  }

  Value attribute(const Value &object, const std::string &name, int line) {
    if (object.undefined)
      return Value::missing();
    if (object.data.is_object()) {
      auto found = object.data.find(name);
      if (found != object.data.end())
        return make(*found);
    }
    (void)line;
    // Methods are resolved by call(); anything else is undefined.
    return Value::missing();
  }

  Value index(const Value &object, const Value &key, int line) {
    if (object.undefined)
      return Value::missing();
    if (object.data.is_object() && key.data.is_string()) {
      auto found = object.data.find(key.data.get<std::string>());
      return found == object.data.end() ? Value::missing() : make(*found);
    }
    if ((object.data.is_array() || object.data.is_string()) &&
        key.data.is_number_integer()) {
      int64_t size =
          object.data.is_array()
              ? static_cast<int64_t>(object.data.size())
              : static_cast<int64_t>(object.data.get<std::string>().size());
      int64_t i = key.data.get<int64_t>();
      if (i < 0)
        i += size;
      if (i < 0 || i >= size)
        return Value::missing();
      return object.data.is_array()
                 ? make(object.data[i])
                 : make(std::string(1, object.data.get<std::string>()[i]));
    }
    fail(line, "cannot index " + repr(object.data) + " with " + repr(key.data));
  }

  Value slice(const Node &node) {
    Value object = evaluate(*node.children[0]);
    bool isString = object.data.is_string();
    if (!object.data.is_array() && !isString)
      fail(node.line, "cannot slice " + repr(object.data));
    int64_t size =
        isString ? static_cast<int64_t>(object.data.get<std::string>().size())
                 : static_cast<int64_t>(object.data.size());
    auto bound = [&](const NodePtr &expression, int64_t fallback) {
      if (!expression)
        return fallback;
      Value value = evaluate(*expression);
      if (!value.data.is_number_integer())
        fail(node.line, "a slice bound must be an integer");
      int64_t i = value.data.get<int64_t>();
      if (i < 0)
        i += size;
      return std::min(std::max<int64_t>(i, 0), size);
    };
    int64_t start = bound(node.children[1], 0);
    int64_t stop = std::max(start, bound(node.children[2], size));
    if (isString)
      return make(object.data.get<std::string>().substr(start, stop - start));
    json list = json::array();
    for (int64_t i = start; i < stop; ++i)
      list.push_back(object.data[i]);
    return make(list);
  }

  Value call(const Node &node) {
    const Node &callee = *node.children[0];
    std::vector<Value> args;
    for (size_t i = 1; i < node.children.size(); ++i)
      args.push_back(evaluate(*node.children[i]));
    auto argument = [&](size_t i) -> const json & {
      static const json none;
      return i < args.size() ? args[i].data : none;
    };
    if (callee.kind == Node::Name) {
      const std::string &name = callee.text;
      if (name == "raise_exception")
        throw Failure{"the chat template raised: " + toText(args.at(0))};
      if (name == "namespace") {
        json object = json::object();
        for (const auto &[key, value] : node.keywords)
          object[key] = evaluate(*value).data;
        return make(object);
      }
      if (name == "range") {
        int64_t start = 0, stop = 0;
        if (args.size() == 1)
          stop = argument(0).get<int64_t>();
        else if (args.size() == 2) {
          start = argument(0).get<int64_t>();
          stop = argument(1).get<int64_t>();
        }
        json list = json::array();
        for (int64_t i = start; i < stop; ++i)
          list.push_back(i);
        return make(list);
      }
      Value *function = lookup(name);
      if (!function)
        fail(node.line, "'" + name +
                            "' is undefined (the functions are "
                            "raise_exception, namespace, range)");
      fail(node.line, "'" + name + "' is not a function");
    }
    if (callee.kind != Node::Attribute)
      fail(node.line, "only functions and methods can be called");
    Value object = evaluate(*callee.children[0]);
    const std::string &method = callee.text;
    const json &data = object.data;
    if (data.is_string()) {
      const std::string &text = data.get_ref<const std::string &>();
      std::string chars = argument(0).is_string()
                              ? argument(0).get<std::string>()
                              : std::string(kWhitespace);
      if (method == "strip")
        return make(strip(text, chars, true, true));
      if (method == "lstrip")
        return make(strip(text, chars, true, false));
      if (method == "rstrip")
        return make(strip(text, chars, false, true));
      if (method == "upper" || method == "lower") {
        std::string result = text;
        for (char &c : result)
          c = static_cast<char>(method == "upper" ? std::toupper(c)
                                                  : std::tolower(c));
        return make(result);
      }
      if (method == "startswith" || method == "endswith") {
        std::string affix = argument(0).get<std::string>();
        bool result =
            text.size() >= affix.size() &&
            text.compare(method == "startswith" ? 0
                                                : text.size() - affix.size(),
                         affix.size(), affix) == 0;
        return make(result);
      }
      if (method == "split") {
        json parts = json::array();
        if (argument(0).is_string()) {
          std::string separator = argument(0).get<std::string>();
          size_t from = 0, found;
          while ((found = text.find(separator, from)) != std::string::npos) {
            parts.push_back(text.substr(from, found - from));
            from = found + separator.size();
          }
          parts.push_back(text.substr(from));
        } else {
          size_t from = text.find_first_not_of(kWhitespace);
          while (from != std::string::npos) {
            size_t end = text.find_first_of(kWhitespace, from);
            parts.push_back(text.substr(from, end - from));
            from = end == std::string::npos
                       ? end
                       : text.find_first_not_of(kWhitespace, end);
          }
        }
        return make(parts);
      }
    }
    if (data.is_object()) {
      if (method == "items") {
        json pairs = json::array();
        for (const auto &item : data.items())
          pairs.push_back({item.key(), item.value()});
        return make(pairs);
      }
      if (method == "keys" || method == "values") {
        json list = json::array();
        for (const auto &item : data.items())
          list.push_back(method == "keys" ? json(item.key()) : item.value());
        return make(list);
      }
      if (method == "get") {
        auto found = data.find(argument(0).get<std::string>());
        if (found != data.end())
          return make(*found);
        return args.size() > 1 ? args[1] : make(nullptr);
      }
    }
    fail(node.line,
         "the method '" + method + "' of " + repr(data) + " is not supported");
  }

  Value filter(const Node &node) {
    Value value = evaluate(*node.children[0]);
    const std::string &name = node.text;
    const json &data = value.data;
    if (name == "default") {
      bool replace = value.undefined;
      if (node.children.size() > 2)
        replace |= !truthy(value) && truthy(evaluate(*node.children[2]));
      return replace ? (node.children.size() > 1 ? evaluate(*node.children[1])
                                                 : make(""))
                     : value;
    }
    if (value.undefined && name != "length" && name != "count")
      fail(node.line, "the filter '" + name + "' of an undefined value");
    if (name == "trim")
      return make(strip(toText(value), kWhitespace, true, true));
    if (name == "length" || name == "count") {
      if (data.is_string())
        return make(static_cast<int64_t>(
            data.get<std::string>().size())); // bytes; ASCII templates
      return make(static_cast<int64_t>(value.undefined ? 0 : data.size()));
    }
    if (name == "tojson") {
      int indent = 0;
      for (const auto &[key, argument] : node.keywords)
        if (key == "indent")
          indent = static_cast<int>(evaluate(*argument).data.get<int64_t>());
      return make(pythonJson(data, indent));
    }
    if (name == "upper" || name == "lower" || name == "capitalize") {
      std::string text = toText(value);
      for (size_t i = 0; i < text.size(); ++i)
        text[i] = static_cast<char>(name == "upper" ||
                                            (name == "capitalize" && i == 0)
                                        ? std::toupper(text[i])
                                        : std::tolower(text[i]));
      return make(text);
    }
    if (name == "string")
      return make(toText(value));
    if (name == "int")
      return make(data.is_number() ? static_cast<int64_t>(data.get<double>())
                                   : std::stoll(toText(value)));
    if (name == "first" || name == "last") {
      if (!data.is_array() || data.empty())
        return Value::missing();
      return make(name == "first" ? data.front() : data.back());
    }
    if (name == "join") {
      std::string separator =
          node.children.size() > 1 ? toText(evaluate(*node.children[1])) : "";
      std::string text;
      for (size_t i = 0; i < data.size(); ++i)
        text += (i ? separator : "") + toText(make(data[i]));
      return make(text);
    }
    if (name == "items") {
      json pairs = json::array();
      for (const auto &item : data.items())
        pairs.push_back({item.key(), item.value()});
      return make(pairs);
    }
    fail(node.line, "the filter '" + name + "' is not supported");
  }

  bool test(const std::string &name, const Value &value) {
    const json &data = value.data;
    if (name == "defined")
      return !value.undefined;
    if (name == "undefined")
      return value.undefined;
    if (value.undefined)
      return false;
    if (name == "none")
      return data.is_null();
    if (name == "string")
      return data.is_string();
    if (name == "number")
      return data.is_number();
    if (name == "integer")
      return data.is_number_integer();
    if (name == "boolean")
      return data.is_boolean();
    if (name == "mapping")
      return data.is_object();
    if (name == "iterable" || name == "sequence")
      return data.is_array() || data.is_string() ||
             (name == "iterable" && data.is_object());
    if (name == "true")
      return data.is_boolean() && data.get<bool>();
    return data.is_boolean() && !data.get<bool>(); // "false"
  }

  Value binary(const Node &node) {
    const std::string &op = node.text;
    if (op == "and") {
      Value left = evaluate(*node.children[0]);
      return truthy(left) ? evaluate(*node.children[1]) : left;
    }
    if (op == "or") {
      Value left = evaluate(*node.children[0]);
      return truthy(left) ? left : evaluate(*node.children[1]);
    }
    Value left = evaluate(*node.children[0]);
    Value right = evaluate(*node.children[1]);
    const json &a = left.data, &b = right.data;
    if (op == "~")
      return make(toText(left) + toText(right));
    if (op == "==" || op == "!=") {
      bool equal = left.undefined || right.undefined
                       ? left.undefined == right.undefined
                       : a == b;
      return make(op == "==" ? equal : !equal);
    }
    if (op == "in" || op == "not in") {
      bool found = false;
      if (b.is_string() && a.is_string())
        found = b.get<std::string>().find(a.get<std::string>()) !=
                std::string::npos;
      else if (b.is_array())
        found = std::find(b.begin(), b.end(), a) != b.end();
      else if (b.is_object() && a.is_string())
        found = b.contains(a.get<std::string>());
      else if (!right.undefined && !b.is_null())
        fail(node.line, "'in' needs a string, list or mapping on its right, "
                        "not " +
                            repr(b));
      return make(op == "in" ? found : !found);
    }
    if (op == "+" && a.is_string() && b.is_string())
      return make(a.get<std::string>() + b.get<std::string>());
    if (op == "+" && a.is_array() && b.is_array()) {
      json list = a;
      list.insert(list.end(), b.begin(), b.end());
      return make(list);
    }
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      if (!((a.is_number() && b.is_number()) ||
            (a.is_string() && b.is_string())))
        fail(node.line, "cannot compare " + repr(a) + " and " + repr(b));
      bool result = op == "<"    ? a < b
                    : op == ">"  ? b < a
                    : op == "<=" ? !(b < a)
                                 : !(a < b);
      return make(result);
    }
    if (!a.is_number() || !b.is_number())
      fail(node.line, "cannot apply '" + op + "' to " +
                          (left.undefined ? "an undefined value" : repr(a)) +
                          " and " +
                          (right.undefined ? "an undefined value" : repr(b)));
    bool integers = a.is_number_integer() && b.is_number_integer();
    if (op == "/" || !integers) {
      double x = a.get<double>(), y = b.get<double>();
      if ((op == "/" || op == "%") && y == 0)
        fail(node.line, "division by zero");
      return make(op == "+"   ? x + y
                  : op == "-" ? x - y
                  : op == "*" ? x * y
                  : op == "/" ? x / y
                              : x - y * std::floor(x / y));
    }
    int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
    if (op == "%") {
      if (y == 0)
        fail(node.line, "division by zero");
      int64_t r = x % y;
      return make(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
    }
    return make(op == "+" ? x + y : op == "-" ? x - y : x * y);
  }

  std::vector<std::map<std::string, Value>> scopes_;
};

} // namespace

ChatTemplate::~ChatTemplate() = default;

std::unique_ptr<ChatTemplate> ChatTemplate::parse(const std::string &source,
                                                  std::string &error) {
  try {
    Lexer lexer(source);
    TemplateParser parser(lexer.pieces());
    std::unique_ptr<ChatTemplate> result(new ChatTemplate());
    result->root_ = parser.parse();
    return result;
  } catch (const Failure &failure) {
    error = "chat template: " + failure.message;
    return nullptr;
  }
}

bool ChatTemplate::render(const json &variables, std::string &text,
                          std::string &error) const {
  try {
    Renderer renderer(variables);
    text.clear();
    renderer.render(*root_, text);
    return true;
  } catch (const Failure &failure) {
    error = failure.message;
    return false;
  } catch (const json::exception &failure) {
    error = std::string("chat template: ") + failure.what();
    return false;
  }
}

} // namespace dtensor::tooling

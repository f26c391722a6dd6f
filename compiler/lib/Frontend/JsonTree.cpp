//===- JsonTree.cpp - JSON values that remember where they were -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Frontend/JsonTree.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace dtensor::frontend;

const JsonNode *JsonNode::get(llvm::StringRef key) const {
  for (const auto &[name, value] : members)
    if (name == key)
      return &value;
  return nullptr;
}

const char *JsonNode::describe(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

static bool isIdentifier(llvm::StringRef key) {
  if (key.empty() || llvm::isDigit(key.front()))
    return false;
  return llvm::all_of(key, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::string dtensor::frontend::jsonMemberPath(llvm::StringRef parent,
                                              llvm::StringRef key) {
  if (isIdentifier(key))
    return (parent + "." + key).str();
  std::string escaped;
  for (char c : key) {
    if (c == '"' || c == '\\')
      escaped += '\\';
    escaped += c;
  }
  return (parent + "[\"" + escaped + "\"]").str();
}

namespace {
/// Recursive descent over the text, tracking line and column.
class Parser {
public:
  Parser(llvm::StringRef text, JsonParseError &error)
      : text(text), error(error) {}

  std::optional<JsonNode> parseDocument() {
    JsonNode root;
    skipSpace();
    if (!parseValue(root, "$", 0))
      return std::nullopt;
    skipSpace();
    if (pos != text.size()) {
      fail("unexpected text after the JSON value");
      return std::nullopt;
    }
    return root;
  }

private:
  static constexpr unsigned kMaxDepth = 256;

  llvm::StringRef text;
  JsonParseError &error;
  size_t pos = 0;
  unsigned line = 1;
  unsigned column = 1;

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  void advance() {
    if (text[pos] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[pos]) & 0xC0) != 0x80) {
      // Columns count characters: UTF-8 continuation bytes add none.
      ++column;
    }
    ++pos;
  }

  bool fail(const llvm::Twine &message) {
    error.line = line;
    error.column = column;
    error.message = message.str();
    return false;
  }

  bool failExpected(const char *what) {
    if (atEnd())
      return fail(llvm::Twine("expected ") + what +
                  ", found the end of the file");
    return fail(llvm::Twine("expected ") + what + ", found '" +
                llvm::Twine(peek()) + "'");
  }

  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      advance();
  }

  bool consumeWord(llvm::StringRef word) {
    if (!text.substr(pos).starts_with(word))
      return false;
    for (size_t i = 0; i < word.size(); ++i)
      advance();
    return true;
  }

  bool parseValue(JsonNode &node, std::string path, unsigned depth) {
    if (depth > kMaxDepth)
      return fail("JSON nested deeper than 256 levels");
    node.line = line;
    node.column = column;
    node.path = std::move(path);
    switch (peek()) {
    case '{':
      return parseObject(node, depth);
    case '[':
      return parseArray(node, depth);
    case '"':
      node.kind = JsonNode::Kind::String;
      return parseString(node.string);
    case 't':
    case 'f':
    case 'n':
      return parseLiteral(node);
    default:
      if (peek() == '-' || llvm::isDigit(peek()))
        return parseNumber(node);
      return failExpected("a JSON value");
    }
  }

  bool parseLiteral(JsonNode &node) {
    if (consumeWord("true")) {
      node.kind = JsonNode::Kind::Bool;
      node.boolean = true;
    } else if (consumeWord("false")) {
      node.kind = JsonNode::Kind::Bool;
    } else if (consumeWord("null")) {
      node.kind = JsonNode::Kind::Null;
    } else {
      return failExpected("a JSON value");
    }
    if (!atEnd() && llvm::isAlnum(peek()))
      return failExpected("',' or a closing bracket");
    return true;
  }

  bool parseNumber(JsonNode &node) {
    size_t start = pos;
    bool integral = true;
    if (peek() == '-')
      advance();
    if (peek() == '0') {
      advance();
      if (llvm::isDigit(peek()))
        return fail("leading zeros are not allowed in JSON numbers");
    } else if (llvm::isDigit(peek())) {
      while (llvm::isDigit(peek()))
        advance();
    } else {
      return failExpected("a digit");
    }
    if (peek() == '.') {
      integral = false;
      advance();
      if (!llvm::isDigit(peek()))
        return failExpected("a digit after '.'");
      while (llvm::isDigit(peek()))
        advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      advance();
      if (peek() == '+' || peek() == '-')
        advance();
      if (!llvm::isDigit(peek()))
        return failExpected("a digit in the exponent");
      while (llvm::isDigit(peek()))
        advance();
    }
    std::string literal = text.substr(start, pos - start).str();
    node.kind = JsonNode::Kind::Number;
    node.number = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(node.number))
      return fail("number out of range: " + literal);
    if (integral) {
      errno = 0;
      char *end = nullptr;
      long long value = std::strtoll(literal.c_str(), &end, 10);
      if (errno == 0 && end && *end == '\0')
        node.integer = static_cast<int64_t>(value);
    }
    return true;
  }

  bool parseHex4(unsigned &value) {
    value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      if (!llvm::isHexDigit(c))
        return failExpected("four hex digits after \\u");
      value = value * 16 + llvm::hexDigitValue(c);
      advance();
    }
    return true;
  }

  bool parseString(std::string &out) {
    advance(); // the opening quote
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char c = peek();
      if (c == '"') {
        advance();
        break;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string (write it escaped)");
      if (c != '\\') {
        out += c;
        advance();
        continue;
      }
      advance();
      char escape = peek();
      if (atEnd())
        return fail("unterminated string");
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        advance();
        unsigned code;
        if (!parseHex4(code))
          return false;
        if (code >= 0xD800 && code <= 0xDBFF) {
          unsigned low;
          if (!consumeWord("\\u") || !parseHex4(low) || low < 0xDC00 ||
              low > 0xDFFF)
            return fail("unpaired UTF-16 surrogate in \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        } else if (code >= 0xDC00 && code <= 0xDFFF) {
          return fail("unpaired UTF-16 surrogate in \\u escape");
        }
        char buffer[4];
        char *end = buffer;
        llvm::ConvertCodePointToUTF8(code, end);
        out.append(buffer, end);
        continue;
      }
      default:
        return fail(llvm::Twine("invalid escape '\\") + llvm::Twine(escape) +
                    "' in a string");
      }
      advance();
    }
    return true;
  }

  bool parseArray(JsonNode &node, unsigned depth) {
    node.kind = JsonNode::Kind::Array;
    advance();
    skipSpace();
    if (peek() == ']') {
      advance();
      return true;
    }
    while (true) {
      JsonNode element;
      std::string path =
          node.path + "[" + std::to_string(node.elements.size()) + "]";
      if (!parseValue(element, std::move(path), depth + 1))
        return false;
      node.elements.push_back(std::move(element));
      skipSpace();
      if (peek() == ',') {
        advance();
        skipSpace();
        continue;
      }
      if (peek() == ']') {
        advance();
        return true;
      }
      return failExpected("',' or ']'");
    }
  }

  bool parseObject(JsonNode &node, unsigned depth) {
    node.kind = JsonNode::Kind::Object;
    advance();
    skipSpace();
    if (peek() == '}') {
      advance();
      return true;
    }
    while (true) {
      if (peek() != '"')
        return failExpected("a member name in double quotes");
      unsigned keyLine = line, keyColumn = column;
      std::string key;
      if (!parseString(key))
        return false;
      if (node.get(key)) {
        error.line = keyLine;
        error.column = keyColumn;
        error.message =
            "duplicate member \"" + key + "\" in the object at " + node.path;
        return false;
      }
      skipSpace();
      if (peek() != ':')
        return failExpected("':'");
      advance();
      skipSpace();
      JsonNode value;
      if (!parseValue(value, jsonMemberPath(node.path, key), depth + 1))
        return false;
      node.members.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (peek() == ',') {
        advance();
        skipSpace();
        continue;
      }
      if (peek() == '}') {
        advance();
        return true;
      }
      return failExpected("',' or '}'");
    }
  }
};
} // namespace

std::optional<JsonNode> dtensor::frontend::parseJson(llvm::StringRef text,
                                                     JsonParseError &error) {
  return Parser(text, error).parseDocument();
}

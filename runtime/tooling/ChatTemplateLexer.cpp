//===- ChatTemplateLexer.cpp - Chat template source to pieces -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Text between tags stays as it is but for Jinja's whitespace control
// ({%- -%} {{- -}}) and what transformers' environment adds: trim_blocks
// (the newline after a block tag goes) and lstrip_blocks (the spaces and
// tabs before a block tag on its line go). Tags become tokens.
//
//===----------------------------------------------------------------------===//

#include "ChatTemplateSyntax.h"

#include <cctype>

namespace dtensor::tooling::jinja {

namespace {

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

} // namespace

std::vector<Piece> lex(const std::string &source) {
  return Lexer(source).pieces();
}

} // namespace dtensor::tooling::jinja

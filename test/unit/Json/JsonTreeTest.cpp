//===- JsonTreeTest.cpp - the position-keeping JSON parser ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Frontend/JsonTree.h"

#include <gtest/gtest.h>

using namespace dtensor::frontend;

namespace {

JsonNode parseOk(llvm::StringRef text) {
  JsonParseError error;
  std::optional<JsonNode> node = parseJson(text, error);
  EXPECT_TRUE(node.has_value()) << error.line << ":" << error.column << ": "
                                << error.message;
  return node ? *node : JsonNode();
}

JsonParseError parseFails(llvm::StringRef text) {
  JsonParseError error;
  EXPECT_FALSE(parseJson(text, error).has_value()) << text.str();
  return error;
}

TEST(JsonTreeTest, PositionsAndPaths) {
  JsonNode root = parseOk("{\n  \"a\": [1, {\"b c\": true}],\n  \"d\": null\n}");
  ASSERT_TRUE(root.isObject());
  EXPECT_EQ(root.path, "$");
  EXPECT_EQ(root.line, 1u);
  EXPECT_EQ(root.column, 1u);
  const JsonNode *a = root.get("a");
  ASSERT_TRUE(a && a->isArray());
  EXPECT_EQ(a->path, "$.a");
  EXPECT_EQ(a->line, 2u);
  EXPECT_EQ(a->column, 8u);
  ASSERT_EQ(a->elements.size(), 2u);
  EXPECT_EQ(a->elements[0].path, "$.a[0]");
  EXPECT_EQ(a->elements[0].column, 9u);
  const JsonNode *bc = a->elements[1].get("b c");
  ASSERT_TRUE(bc && bc->isBool() && bc->boolean);
  EXPECT_EQ(bc->path, "$.a[1][\"b c\"]");
  const JsonNode *d = root.get("d");
  ASSERT_TRUE(d && d->isNull());
  EXPECT_EQ(d->line, 3u);
  EXPECT_EQ(root.get("missing"), nullptr);
  // Members keep file order.
  ASSERT_EQ(root.members.size(), 2u);
  EXPECT_EQ(root.members[0].first, "a");
  EXPECT_EQ(root.members[1].first, "d");
}

TEST(JsonTreeTest, Numbers) {
  JsonNode root = parseOk("[0, -12, 3.5, 1e3, 9223372036854775807, "
                          "9223372036854775808]");
  ASSERT_EQ(root.elements.size(), 6u);
  EXPECT_EQ(root.elements[0].integer, 0);
  EXPECT_EQ(root.elements[1].integer, -12);
  EXPECT_FALSE(root.elements[2].isInteger());
  EXPECT_DOUBLE_EQ(root.elements[2].number, 3.5);
  // An exponent makes a number fractional in form, whatever its value.
  EXPECT_FALSE(root.elements[3].isInteger());
  EXPECT_DOUBLE_EQ(root.elements[3].number, 1000.0);
  EXPECT_EQ(root.elements[4].integer, INT64_MAX);
  // Too large for int64_t: a number, not an integer.
  EXPECT_TRUE(root.elements[5].isNumber());
  EXPECT_FALSE(root.elements[5].isInteger());
}

TEST(JsonTreeTest, Strings) {
  JsonNode root = parseOk(R"(["a\"b\\c\/\n\t", "\u00e9\ud83d\ude00"])");
  EXPECT_EQ(root.elements[0].string, "a\"b\\c/\n\t");
  EXPECT_EQ(root.elements[1].string, "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonTreeTest, ColumnsCountCharacters) {
  // The two-byte 'é' is one column.
  JsonNode root = parseOk("[\"\xc3\xa9\", 1]");
  EXPECT_EQ(root.elements[1].column, 7u);
}

TEST(JsonTreeTest, Errors) {
  JsonParseError error = parseFails("{\n  \"a\": 1,\n}");
  EXPECT_EQ(error.line, 3u);
  EXPECT_EQ(error.column, 1u);
  EXPECT_EQ(error.message,
            "expected a member name in double quotes, found '}'");

  error = parseFails("{\"a\": 1, \"a\": 2}");
  EXPECT_EQ(error.column, 10u);
  EXPECT_EQ(error.message, "duplicate member \"a\" in the object at $");

  EXPECT_EQ(parseFails("[1 2]").message, "expected ',' or ']', found '2'");
  EXPECT_EQ(parseFails("[01]").message,
            "leading zeros are not allowed in JSON numbers");
  EXPECT_EQ(parseFails("\"abc").message, "unterminated string");
  EXPECT_EQ(parseFails("\"a\tb\"").message,
            "control character in a string (write it escaped)");
  EXPECT_EQ(parseFails("\"\\x\"").message, "invalid escape '\\x' in a string");
  EXPECT_EQ(parseFails("\"\\ud800\"").message,
            "unpaired UTF-16 surrogate in \\u escape");
  EXPECT_EQ(parseFails("tru").message,
            "expected a JSON value, found 't'");
  EXPECT_EQ(parseFails("nullx").message,
            "expected ',' or a closing bracket, found 'x'");
  EXPECT_EQ(parseFails("{} {}").message,
            "unexpected text after the JSON value");
  EXPECT_EQ(parseFails("").message,
            "expected a JSON value, found the end of the file");
  EXPECT_EQ(parseFails("1e999").message, "number out of range: 1e999");
  EXPECT_EQ(parseFails(std::string(300, '[')).message,
            "JSON nested deeper than 256 levels");
}

TEST(JsonTreeTest, Describe) {
  EXPECT_STREQ(JsonNode::describe(JsonNode::Kind::Object), "an object");
  EXPECT_EQ(jsonMemberPath("$.a", "b_1"), "$.a.b_1");
  EXPECT_EQ(jsonMemberPath("$", "layers.*"), "$[\"layers.*\"]");
  EXPECT_EQ(jsonMemberPath("$", "1a"), "$[\"1a\"]");
}

} // namespace

//===- EmitterTest.cpp - Locator, accessors and the op registry -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include "dtensor/Frontend/OpEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"

using namespace dtensor::frontend;
using namespace dtensor::frontend::test;

namespace {

using EmitterTest = OpTest;

TEST(OpDefinitionsTest, SortedAndFound) {
  llvm::ArrayRef<OpDefinition> definitions = getOpDefinitions();
  ASSERT_FALSE(definitions.empty());
  for (size_t i = 1; i < definitions.size(); ++i)
    EXPECT_LT(definitions[i - 1].name, definitions[i].name);
  for (const OpDefinition &definition : definitions) {
    EXPECT_EQ(lookupOpDefinition(definition.name), &definition);
    EXPECT_LE(definition.minInputs, definition.maxInputs);
  }
  EXPECT_EQ(definitions.size(), 55u);
}

TEST(OpDefinitionsTest, Aliases) {
  const OpDefinition *view = lookupOpDefinition("view");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->name, "reshape");
  EXPECT_EQ(lookupOpDefinition("to"), lookupOpDefinition("cast"));
  EXPECT_EQ(lookupOpDefinition("cat"), lookupOpDefinition("concat"));
  EXPECT_EQ(lookupOpDefinition("conv2d"), nullptr);
  EXPECT_EQ(lookupOpDefinition(""), nullptr);
  EXPECT_EQ(lookupOpDefinition("zzz"), nullptr);
}

TEST(OpDefinitionsTest, Counts) {
  EXPECT_EQ(lookupOpDefinition("split")->numOutputs, 0u);
  EXPECT_EQ(lookupOpDefinition("linear")->minInputs, 2u);
  EXPECT_EQ(lookupOpDefinition("linear")->maxInputs, 3u);
  EXPECT_EQ(lookupOpDefinition("scaled_dot_product_attention")->maxInputs, 4u);
  EXPECT_EQ(lookupOpDefinition("cache_write")->minInputs, 4u);
  EXPECT_EQ(lookupOpDefinition("cache_write")->maxInputs, 4u);
  EXPECT_GT(lookupOpDefinition("concat")->maxInputs, 1000u);
  EXPECT_EQ(lookupOpDefinition("arange")->minInputs, 0u);
  EXPECT_EQ(lookupOpDefinition("arange")->maxInputs, 0u);
  EXPECT_EQ(lookupOpDefinition("where")->minInputs, 3u);
}

/// What the table says beyond the importer's counts is consistent: one
/// input name per input (one for a variadic op), attributes named once,
/// defaults that are JSON values and only on optional attributes, and
/// aliases of op kinds the table has.
TEST(OpDefinitionsTest, TableEntries) {
  for (const OpDefinition &definition : getOpDefinitions()) {
    SCOPED_TRACE(definition.name.str());
    EXPECT_TRUE(definition.emit);
    size_t names = definition.getInputNames().size();
    if (definition.maxInputs == kAnyNumberOfInputs)
      EXPECT_EQ(names, 1u);
    else
      EXPECT_EQ(names, definition.maxInputs);
    llvm::StringSet<> seen;
    for (const PlanOpAttr &attribute : definition.attributes) {
      EXPECT_TRUE(seen.insert(attribute.name).second) << attribute.name.str();
      EXPECT_EQ(definition.getAttribute(attribute.name), &attribute);
      if (attribute.defaultValue.empty())
        continue;
      EXPECT_FALSE(attribute.required) << attribute.name.str();
      JsonParseError parseError;
      EXPECT_TRUE(parseJson(attribute.defaultValue, parseError))
          << attribute.name.str();
    }
    // Training needs a gradient for every op with a float output; a
    // differentiable op has one.
    if (definition.differentiable)
      EXPECT_TRUE(definition.floatOutput);
  }
  EXPECT_EQ(getOpAliases().size(), 3u);
  for (const auto &[alias, target] : getOpAliases()) {
    EXPECT_EQ(lookupOpDefinition(alias), lookupOpDefinition(target));
    EXPECT_TRUE(lookupOpDefinition(target)) << target.str();
  }
  EXPECT_FALSE(lookupOpDefinition("argmax")->floatOutput);
  EXPECT_EQ(lookupOpDefinition("pow")->getAttribute("exponent")->kind,
            PlanAttrKind::Number);
  EXPECT_EQ(lookupOpDefinition("linear")->getAttribute("scalar"), nullptr);
}

TEST_F(EmitterTest, LocatorPrefixesThePath) {
  JsonParseError parseError;
  std::optional<JsonNode> root =
      parseJson("{\"a\": [1,\n   {\"dim\": \"x\"}]}", parseError);
  ASSERT_TRUE(root);
  const JsonNode &dim = *root->get("a")->elements[1].get("dim");
  JsonLocator locator(&context, "model.json");
  mlir::FileLineColLoc loc = locator.get(dim);
  EXPECT_EQ(loc.getFilename(), "model.json");
  EXPECT_EQ(loc.getLine(), 2u);
  EXPECT_EQ(loc.getColumn(), 12u);
  (void)(locator.emitError(dim) << "expected an integer, got a string");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "$.a[1].dim: expected an integer, got a string");
  EXPECT_EQ(errors[0].line, 2u);
  EXPECT_EQ(errors[0].column, 12u);
}

TEST_F(EmitterTest, LocatorPrintsAsFileLineColumn) {
  JsonParseError parseError;
  std::optional<JsonNode> root = parseJson("{\"dim\": \"x\"}", parseError);
  ASSERT_TRUE(root);
  JsonLocator locator(&context, "model.json");
  // The default printer of an unhandled diagnostic, as tools show it.
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  (void)(locator.emitError(*root->get("dim"))
         << "expected an integer, got a string");
  EXPECT_EQ(text, "model.json:1:9: error: $.dim: expected an integer, got a "
                  "string\n");
  (void)(locator.emitWarning(*root) << "unused");
  EXPECT_NE(text.find("model.json:1:1: warning: $: unused"), std::string::npos);
}

TEST_F(EmitterTest, OpErrorsNameTheKind) {
  std::string message =
      buildError(R"({"op": "linear", "inputs": ["x", "w"], "output": "y"})",
                 {ramp(Dtype::F32, {8, 32}, 1), ramp(Dtype::F32, {16, 64}, 1)});
  EXPECT_EQ(message, "$.model.ops[0] (linear): input 'x' has shape [8, 32] but "
                     "weight 'w' [16, 64] expects [..., 64]");
  EXPECT_EQ(errors[0].line, 1u);
  EXPECT_EQ(errors[0].column, opColumn());
}

TEST_F(EmitterTest, InputErrorsPointAtTheInput) {
  std::string message =
      buildError(R"({"op": "exp", "inputs": ["ids"], "output": "y"})",
                 {ramp(Dtype::I32, {4}, 1)});
  EXPECT_EQ(message, "$.model.ops[0].inputs[0] (exp): input 'ids' has dtype "
                     "i32; exp needs a floating-point tensor (f32, f16 or "
                     "bf16)");
  // `{"op": "exp", "inputs": [` is 25 characters.
  EXPECT_EQ(errors[0].column, opColumn() + 25);
}

TEST_F(EmitterTest, WrongKindOfValue) {
  Tensor x = ramp(Dtype::F32, {2, 3}, 1);
  EXPECT_EQ(
      buildError(
          R"({"op": "softmax", "inputs": ["x"], "output": "y", "dim": "1"})",
          {x}),
      "$.model.ops[0].dim: expected an integer, got the string \"1\"");
  EXPECT_EQ(
      buildError(
          R"({"op": "softmax", "inputs": ["x"], "output": "y", "dim": 1.5})",
          {x}),
      "$.model.ops[0].dim: expected an integer, got the number 1.5");
  EXPECT_EQ(
      buildError(
          R"({"op": "sum", "inputs": ["x"], "output": "y", "keepdim": 1})",
          {x}),
      "$.model.ops[0].keepdim: expected true or false, got a number");
  EXPECT_EQ(buildError(R"({"op": "mul", "inputs": ["x"], "output": "y",
                           "scalar": null})",
                       {x}),
            "$.model.ops[0].scalar: expected a number, got null");
  EXPECT_EQ(errors[0].line, 2u);
  EXPECT_EQ(buildError(R"({"op": "gelu", "inputs": ["x"], "output": "y",
                           "approximate": "fast"})",
                       {x}),
            "$.model.ops[0].approximate: expected one of \"none\", \"tanh\"; "
            "got the string \"fast\"");
  EXPECT_EQ(buildError(R"({"op": "permute", "inputs": ["x"], "output": "y",
                           "dims": 1})",
                       {x}),
            "$.model.ops[0].dims: expected a list of integers, got a number");
  EXPECT_EQ(buildError(R"({"op": "sum", "inputs": ["x"], "output": "y",
                           "dim": {"a": 1}})",
                       {x}),
            "$.model.ops[0].dim: expected an integer or a list of integers, "
            "got an object");
  EXPECT_EQ(buildError(R"({"op": "sum", "inputs": ["x"], "output": "y",
                           "dim": [0, true]})",
                       {x}),
            "$.model.ops[0].dim[1]: expected an integer, got a boolean");
}

TEST_F(EmitterTest, MissingAttribute) {
  EXPECT_EQ(buildError(R"({"op": "transpose", "inputs": ["x"], "output": "y",
                     "dim1": 0})",
                       {ramp(Dtype::F32, {2, 3}, 1)}),
            "$.model.ops[0] (transpose): missing attribute 'dim0'");
  EXPECT_EQ(buildError(R"({"op": "reshape", "inputs": ["x"], "output": "y"})",
                       {ramp(Dtype::F32, {2, 3}, 1)}),
            "$.model.ops[0] (reshape): missing attribute 'shape'");
}

TEST_F(EmitterTest, DimOutOfRange) {
  Tensor x = ramp(Dtype::F32, {2, 3}, 1);
  EXPECT_EQ(
      buildError(
          R"({"op": "softmax", "inputs": ["x"], "output": "y", "dim": 2})",
          {x}),
      "$.model.ops[0].dim (softmax): dim 2 is out of range for a tensor of "
      "rank 2 (expected -2 to 1)");
  EXPECT_EQ(
      buildError(
          R"({"op": "softmax", "inputs": ["x"], "output": "y", "dim": -3})",
          {x}),
      "$.model.ops[0].dim (softmax): dim -3 is out of range for a tensor of "
      "rank 2 (expected -2 to 1)");
  EXPECT_EQ(
      buildError(R"({"op": "rotary", "inputs": ["x"], "output": "y"})", {x}),
      "$.model.ops[0] (rotary): seq_dim -3 (the default) is out of range "
      "for a tensor of rank 2 (expected -2 to 1)");
  EXPECT_EQ(buildError(R"({"op": "softmax", "inputs": ["x"], "output": "y"})",
                       {tensor(Dtype::F32, {}, {1})}),
            "$.model.ops[0] (softmax): dim -1 (the default) is out of range "
            "for a tensor of rank 0, which has no dims");
}

/// The accessors on their own, over an op without inputs.
TEST_F(EmitterTest, Accessors) {
  JsonParseError parseError;
  std::optional<JsonNode> op = parseJson(
      R"({"op": "x", "i": 3, "f": 2.5, "b": false, "e": "tanh",
          "l": [1, -2], "n": 7})",
      parseError);
  ASSERT_TRUE(op);
  JsonLocator locator(&context, "test.json");
  mlir::OpBuilder builder(&context);
  OpEmitter emitter(builder, builder.getUnknownLoc(), *op, {}, {}, 1, locator);
  EXPECT_EQ(emitter.opName(), "x");
  EXPECT_EQ(*emitter.getInt("i"), 3);
  EXPECT_EQ(*emitter.getNumber("i"), 3.0);
  EXPECT_EQ(*emitter.getNumber("f"), 2.5);
  EXPECT_FALSE(*emitter.getBool("b", true));
  EXPECT_EQ(*emitter.getEnum("e", {"none", "tanh"}), "tanh");
  EXPECT_EQ(*emitter.getIntList("l"), (llvm::SmallVector<int64_t>{1, -2}));
  EXPECT_EQ(*emitter.getIntList("i", /*allowScalar=*/true),
            (llvm::SmallVector<int64_t>{3}));
  EXPECT_TRUE(mlir::failed(emitter.getDim("n", 3, 0)));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "$.n (x): n 7 is out of range for a tensor of "
                               "rank 3 (expected -3 to 2)");
  errors.clear();
  EXPECT_EQ(*emitter.getDim("i", 4), 3);
  EXPECT_EQ(*emitter.getDim("absent", 4, -1), 3);
  EXPECT_TRUE(emitter.getNode("l")->isArray());
  EXPECT_EQ(emitter.getNode("absent2"), nullptr);
  EXPECT_TRUE(emitter.has("f"));
  EXPECT_FALSE(emitter.has("absent3"));
  // Defaults.
  EXPECT_EQ(*emitter.getInt("d1", 5), 5);
  EXPECT_EQ(*emitter.getNumber("d2", 0.5), 0.5);
  EXPECT_TRUE(*emitter.getBool("d3", true));
  EXPECT_EQ(*emitter.getEnum("d4", {"a", "b"}, llvm::StringRef("b")), "b");
  EXPECT_EQ(*emitter.getIntList("d5", false, llvm::ArrayRef<int64_t>{4, 5}),
            (llvm::SmallVector<int64_t>{4, 5}));
  EXPECT_TRUE(errors.empty());
  // Every key asked for is read, present or not.
  for (llvm::StringRef key : {"i", "f", "b", "e", "l", "n", "absent", "d1",
                              "d2", "d3", "d4", "d5", "absent2", "absent3"})
    EXPECT_TRUE(emitter.getReadKeys().contains(key)) << key.str();
  EXPECT_FALSE(emitter.getReadKeys().contains("op"));

  // Missing without a default.
  EXPECT_TRUE(mlir::failed(emitter.getNumber("m1")));
  EXPECT_TRUE(mlir::failed(emitter.getBool("m2")));
  EXPECT_TRUE(mlir::failed(emitter.getEnum("m3", {"a"})));
  EXPECT_TRUE(mlir::failed(emitter.getInt("m4")));
  EXPECT_TRUE(mlir::failed(emitter.getDim("m5", 2)));
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0].message, "$ (x): missing attribute 'm1'");
  EXPECT_EQ(errors[1].message, "$ (x): missing attribute 'm2'");
  EXPECT_EQ(errors[2].message, "$ (x): missing attribute 'm3'");
  EXPECT_EQ(errors[3].message, "$ (x): missing attribute 'm4'");
  EXPECT_EQ(errors[4].message, "$ (x): missing attribute 'm5'");
  errors.clear();
  // Wrong kinds.
  EXPECT_TRUE(mlir::failed(emitter.getInt("f")));
  EXPECT_TRUE(mlir::failed(emitter.getNumber("e")));
  EXPECT_TRUE(mlir::failed(emitter.getBool("l")));
  EXPECT_TRUE(mlir::failed(emitter.getEnum("i", {"a", "b"})));
  EXPECT_TRUE(mlir::failed(emitter.getIntList("i")));
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0].message, "$.f: expected an integer, got the number 2.5");
  EXPECT_EQ(errors[1].message,
            "$.e: expected a number, got the string \"tanh\"");
  EXPECT_EQ(errors[2].message, "$.l: expected true or false, got an array");
  EXPECT_EQ(errors[3].message,
            "$.i: expected one of \"a\", \"b\"; got a number");
  EXPECT_EQ(errors[4].message,
            "$.i: expected a list of integers, got a number");
  // Errors of an op, an input and an attribute.
  errors.clear();
  (void)(emitter.emitError() << "a");
  (void)(emitter.emitAttrError("l") << "b");
  (void)(emitter.emitAttrError("absent") << "c");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].message, "$ (x): a");
  EXPECT_EQ(errors[1].message, "$.l (x): b");
  EXPECT_EQ(errors[2].message, "$ (x): c");
  EXPECT_EQ(errors[1].line, 2u);
}

TEST_F(EmitterTest, NegativeDimsCountFromTheEnd) {
  ASSERT_TRUE(build(
      R"({"op": "transpose", "inputs": ["x"], "output": "y", "dim0": -1,
          "dim1": 0})",
      {ramp(Dtype::F32, {2, 3, 4}, 1)}));
  EXPECT_NE(printModule().find("permutation = [2, 1, 0]"), std::string::npos)
      << printModule();
}

TEST_F(EmitterTest, OpLocationIsTheGivenOne) {
  ASSERT_TRUE(build(R"({"op": "neg", "inputs": ["x"], "output": "y"})",
                    {ramp(Dtype::F32, {2}, 1)}));
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo();
  module->print(os, flags);
  // NameLoc("m", test.json:1:<column of the op object>) on the ops.
  std::string file =
      "= loc(\"test.json\":1:" + std::to_string(opColumn()) + ")";
  EXPECT_NE(text.find(file), std::string::npos) << text;
  EXPECT_NE(text.find("= loc(\"m\"(#loc"), std::string::npos) << text;
  EXPECT_NE(text.find("arith.negf %in : f32 loc(#loc"), std::string::npos)
      << text;
}

} // namespace

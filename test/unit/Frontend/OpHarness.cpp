//===- OpHarness.cpp - Build one model-plan op, lower it and run it -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "OpHarness.h"

#include "NaiveRuntime.h"
#include "dtensor/Attention/Passes.h"
#include "dtensor/Codegen/CPU/CpuCodegen.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Frontend/OpEmitter.h"
#include "dtensor/InitAllDialects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"

#include <cmath>
#include <cstring>
#include <dlfcn.h>

using namespace mlir;
using namespace dtensor::frontend;
using namespace dtensor::frontend::test;

int dtensor::frontend::test::getMatmulCallCount() {
  return static_cast<int>(dtensor::test::getMatmulBetas().size());
}

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

namespace {
const llvm::fltSemantics *getSemantics(Dtype dtype) {
  switch (dtype) {
  case Dtype::F32:
    return &llvm::APFloat::IEEEsingle();
  case Dtype::F16:
    return &llvm::APFloat::IEEEhalf();
  case Dtype::BF16:
    return &llvm::APFloat::BFloat();
  default:
    return nullptr;
  }
}

size_t getElementSize(Dtype dtype) {
  switch (dtype) {
  case Dtype::F16:
  case Dtype::BF16:
    return 2;
  case Dtype::F32:
  case Dtype::I32:
    return 4;
  case Dtype::I64:
    return 8;
  }
  return 0;
}

Type getMlirType(MLIRContext &context, Dtype dtype) {
  Builder b(&context);
  switch (dtype) {
  case Dtype::F32:
    return b.getF32Type();
  case Dtype::F16:
    return b.getF16Type();
  case Dtype::BF16:
    return b.getBF16Type();
  case Dtype::I32:
    return b.getI32Type();
  case Dtype::I64:
    return b.getI64Type();
  }
  return {};
}

std::optional<Dtype> getDtype(Type type) {
  if (type.isF32())
    return Dtype::F32;
  if (type.isF16())
    return Dtype::F16;
  if (type.isBF16())
    return Dtype::BF16;
  if (type.isInteger(32))
    return Dtype::I32;
  if (type.isInteger(64))
    return Dtype::I64;
  return std::nullopt;
}

/// The bits of `value` in a float format.
llvm::APInt toBits(double value, const llvm::fltSemantics &semantics) {
  llvm::APFloat number(value);
  bool lost;
  number.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return number.bitcastToAPInt();
}

double fromBits(const llvm::APInt &bits, const llvm::fltSemantics &semantics) {
  llvm::APFloat number(semantics, bits);
  bool lost;
  number.convert(llvm::APFloat::IEEEdouble(),
                 llvm::APFloat::rmNearestTiesToEven, &lost);
  return number.convertToDouble();
}

/// A row-major buffer of one tensor and its memref descriptor.
class HostBuffer {
public:
  HostBuffer(Dtype dtype, std::vector<int64_t> shape)
      : dtype(dtype), shape(std::move(shape)) {
    bytes.assign(std::max<int64_t>(count(), 1) * getElementSize(dtype), 0xA5);
  }

  int64_t count() const {
    int64_t n = 1;
    for (int64_t size : shape)
      n *= size;
    return n;
  }

  void write(const std::vector<double> &values) {
    for (int64_t i = 0; i < count(); ++i)
      store(i, values[i]);
  }

  std::vector<double> read() const {
    std::vector<double> values;
    for (int64_t i = 0; i < count(); ++i)
      values.push_back(load(i));
    return values;
  }

  /// { allocated, aligned, offset, sizes[r], strides[r] }, row-major.
  void *descriptor() {
    words.clear();
    words.push_back(reinterpret_cast<int64_t>(bytes.data()));
    words.push_back(reinterpret_cast<int64_t>(bytes.data()));
    words.push_back(0);
    words.insert(words.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t dim = static_cast<int64_t>(shape.size()) - 2; dim >= 0; --dim)
      strides[dim] = strides[dim + 1] * shape[dim + 1];
    words.insert(words.end(), strides.begin(), strides.end());
    return words.data();
  }

private:
  void store(int64_t i, double value) {
    uint8_t *at = bytes.data() + i * getElementSize(dtype);
    switch (dtype) {
    case Dtype::F32: {
      float v = static_cast<float>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case Dtype::F16:
    case Dtype::BF16: {
      uint16_t v = static_cast<uint16_t>(
          toBits(value, *getSemantics(dtype)).getZExtValue());
      std::memcpy(at, &v, 2);
      break;
    }
    case Dtype::I32: {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(at, &v, 4);
      break;
    }
    case Dtype::I64: {
      int64_t v = static_cast<int64_t>(value);
      std::memcpy(at, &v, 8);
      break;
    }
    }
  }

  double load(int64_t i) const {
    const uint8_t *at = bytes.data() + i * getElementSize(dtype);
    switch (dtype) {
    case Dtype::F32: {
      float v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case Dtype::F16:
    case Dtype::BF16: {
      uint16_t v;
      std::memcpy(&v, at, 2);
      return fromBits(llvm::APInt(16, v), *getSemantics(dtype));
    }
    case Dtype::I32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      return v;
    }
    case Dtype::I64: {
      int64_t v;
      std::memcpy(&v, at, 8);
      return static_cast<double>(v);
    }
    }
    return 0;
  }

  Dtype dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  std::vector<int64_t> words;
};
} // namespace

int64_t Tensor::size() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

double Tensor::at(std::initializer_list<int64_t> index) const {
  int64_t position = 0;
  size_t dim = 0;
  for (int64_t i : index)
    position = position * shape[dim++] + i;
  return values[position];
}

std::vector<double>
dtensor::frontend::test::roundTo(Dtype dtype, std::vector<double> values) {
  for (double &value : values) {
    if (const llvm::fltSemantics *semantics = getSemantics(dtype))
      value = fromBits(toBits(value, *semantics), *semantics);
    else
      value = std::trunc(value);
  }
  return values;
}

Tensor dtensor::frontend::test::tensor(Dtype dtype, std::vector<int64_t> shape,
                                       std::vector<double> values) {
  Tensor t{dtype, std::move(shape), roundTo(dtype, std::move(values))};
  EXPECT_EQ(t.size(), static_cast<int64_t>(t.values.size()));
  return t;
}

Tensor dtensor::frontend::test::ramp(Dtype dtype, std::vector<int64_t> shape,
                                     double scale, double shift) {
  Tensor t{dtype, std::move(shape), {}};
  for (int64_t i = 0; i < t.size(); ++i)
    t.values.push_back(scale * static_cast<double>(i) + shift);
  t.values = roundTo(dtype, std::move(t.values));
  return t;
}

Tensor dtensor::frontend::test::noise(Dtype dtype, std::vector<int64_t> shape,
                                      double range, unsigned seed) {
  Tensor t{dtype, std::move(shape), {}};
  uint64_t state = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (int64_t i = 0; i < t.size(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double unit = static_cast<double>(state >> 11) / 9007199254740992.0;
    t.values.push_back((2 * unit - 1) * range);
  }
  t.values = roundTo(dtype, std::move(t.values));
  return t;
}

void dtensor::frontend::test::expectNear(const Tensor &actual,
                                         const std::vector<int64_t> &shape,
                                         const std::vector<double> &expected,
                                         double tolerance) {
  ASSERT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.values.size(), expected.size());
  // Report the first few mismatches only.
  int failures = 0;
  for (size_t i = 0; i < expected.size() && failures < 3; ++i) {
    bool ok = std::isnan(expected[i]) ? std::isnan(actual.values[i])
              : std::isinf(expected[i])
                  ? actual.values[i] == expected[i]
                  : std::abs(actual.values[i] - expected[i]) <=
                        tolerance * (1 + std::abs(expected[i]));
    failures += !ok;
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(actual.values[i])) << "element " << i;
      continue;
    }
    if (std::isinf(expected[i])) {
      EXPECT_EQ(actual.values[i], expected[i]) << "element " << i;
      continue;
    }
    EXPECT_NEAR(actual.values[i], expected[i],
                tolerance * (1 + std::abs(expected[i])))
        << "element " << i;
  }
}

//===----------------------------------------------------------------------===//
// The fixture
//===----------------------------------------------------------------------===//

namespace {
constexpr llvm::StringLiteral kPrefix = "{\"model\": {\"ops\": [";
} // namespace

unsigned OpTest::opColumn() { return kPrefix.size() + 1; }

OpTest::OpTest() {
  mlir::DialectRegistry registry;
  dtensor::registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
    Error error;
    if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation())) {
      error.line = file.getLine();
      error.column = file.getColumn();
    }
    error.message = diag.str();
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      errors.push_back(error);
    return success();
  });
  dtensor::test::resetNaiveRuntime();
}

OpTest::~OpTest() { releaseLibrary(); }

void OpTest::releaseLibrary() {
  if (handle)
    dlclose(handle);
  handle = nullptr;
  if (!library.empty())
    llvm::sys::fs::remove(library);
  library.clear();
}

bool OpTest::build(llvm::StringRef opJson, const std::vector<Tensor> &inputs) {
  errors.clear();
  std::string text = (kPrefix + opJson + "]}}").str();
  JsonParseError parseError;
  std::optional<JsonNode> root = parseJson(text, parseError);
  if (!root) {
    ADD_FAILURE() << "bad JSON in the test: " << parseError.message;
    return false;
  }
  const JsonNode &op = root->get("model")->get("ops")->elements.front();

  OpBuilder builder(&context);
  module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> types;
  for (const Tensor &input : inputs)
    types.push_back(
        RankedTensorType::get(input.shape, getMlirType(context, input.dtype)));
  auto func = func::FuncOp::create(builder, builder.getUnknownLoc(), "main",
                                   builder.getFunctionType(types, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);

  JsonLocator locator(&context, "test.json");
  std::vector<const JsonNode *> inputNodes;
  if (const JsonNode *names = op.get("inputs"))
    for (const JsonNode &name : names->elements)
      inputNodes.push_back(&name);
  if (inputNodes.size() != inputs.size()) {
    ADD_FAILURE() << "the op lists " << inputNodes.size()
                  << " inputs, the test " << inputs.size();
    return false;
  }
  const JsonNode *outputs = op.get("outputs");
  unsigned numOutputs = outputs ? outputs->elements.size() : 1;
  const OpDefinition *definition = lookupOpDefinition(op.get("op")->string);
  if (!definition) {
    ADD_FAILURE() << "unknown op " << op.get("op")->string;
    return false;
  }
  EXPECT_GE(inputs.size(), definition->minInputs);
  EXPECT_LE(inputs.size(), definition->maxInputs);
  Location loc = NameLoc::get(builder.getStringAttr("m"), locator.get(op));
  SmallVector<Value> arguments(entry->getArguments());
  OpEmitter emitter(builder, loc, op, arguments, inputNodes, numOutputs,
                    locator);
  FailureOr<SmallVector<Value>> results = definition->emit(emitter);
  if (failed(results))
    return false;
  EXPECT_EQ(results->size(),
            definition->numOutputs ? definition->numOutputs : numOutputs);
  func::ReturnOp::create(builder, loc, *results);
  func.setType(builder.getFunctionType(types, TypeRange(ValueRange(*results))));

  // Every attribute must have been read (the importer rejects the rest).
  for (const auto &[key, value] : op.members) {
    if (llvm::is_contained({"op", "inputs", "output", "outputs", "module"},
                           key))
      continue;
    EXPECT_TRUE(emitter.getReadKeys().contains(key))
        << "attribute '" << key << "' was not read";
  }
  // Every attribute the emitter read is one the op table lists (the schema,
  // the docs and the Python checks rely on the table).
  for (const auto &entry : emitter.getReadKeys()) {
    llvm::StringRef key = entry.getKey();
    if (llvm::is_contained({"op", "inputs", "output", "outputs", "module"},
                           key))
      continue;
    EXPECT_NE(definition->getAttribute(key), nullptr)
        << "'" << definition->name.str() << "' read attribute '" << key.str()
        << "', which its OpDefinition does not list";
  }
  return succeeded(verify(*module));
}

std::string OpTest::printModule() {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

std::optional<std::vector<Tensor>>
OpTest::run(llvm::StringRef opJson, const std::vector<Tensor> &inputs) {
  if (!build(opJson, inputs)) {
    for (const Error &error : errors)
      ADD_FAILURE() << error.line << ":" << error.column << ": "
                    << error.message;
    ADD_FAILURE() << "the op was not built";
    return std::nullopt;
  }
  auto func = cast<func::FuncOp>(module->getBody()->front());
  SmallVector<Type> resultTypes(func.getResultTypes());
  std::string built = printModule();
  if (getenv("DTENSOR_OPS_TEST_DUMP"))
    llvm::errs() << built;

  // The ops as the frontend emits them, attention decomposed into linalg
  // (--dtensor-decompose-attention), then the CPU lowering: the fused
  // attention kernel of the runtime is not linked here (FusedAttentionTest
  // and test/E2E/fused-attention.test test it).
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(dtensor::createDecomposeAttention());
  dtensor::codegen::CpuLoweringOptions lowering;
  dtensor::codegen::buildCpuLoweringPipeline(pm, lowering);
  if (failed(pm.run(*module))) {
    for (const Error &error : errors)
      ADD_FAILURE() << error.message;
    ADD_FAILURE() << "the lowering failed for\n" << built;
    return std::nullopt;
  }
  releaseLibrary();
  if (llvm::sys::fs::createTemporaryFile("frontend-ops-test", "so", library)) {
    ADD_FAILURE() << "cannot create a temporary file";
    return std::nullopt;
  }
  if (failed(dtensor::codegen::emitCpuSharedObject(*module, {}, library))) {
    ADD_FAILURE() << "emitting the shared object failed";
    return std::nullopt;
  }
  handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ADD_FAILURE() << "dlopen: " << dlerror();
    return std::nullopt;
  }
  using Entry = void (*)(void **);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "dtensor_entry_main"));
  if (!entry) {
    ADD_FAILURE() << "no dtensor_entry_main";
    return std::nullopt;
  }

  std::vector<HostBuffer> buffers;
  buffers.reserve(inputs.size() + resultTypes.size());
  for (const Tensor &input : inputs) {
    buffers.emplace_back(input.dtype, input.shape);
    buffers.back().write(input.values);
  }
  std::vector<Tensor> results;
  for (Type type : resultTypes) {
    auto tensorType = cast<RankedTensorType>(type);
    std::optional<Dtype> dtype = getDtype(tensorType.getElementType());
    if (!dtype) {
      ADD_FAILURE() << "unexpected result type";
      return std::nullopt;
    }
    results.push_back(
        Tensor{*dtype, std::vector<int64_t>(tensorType.getShape()), {}});
    buffers.emplace_back(*dtype, results.back().shape);
  }
  std::vector<void *> descriptors;
  for (HostBuffer &buffer : buffers)
    descriptors.push_back(buffer.descriptor());
  entry(descriptors.data());
  for (size_t i = 0; i < results.size(); ++i)
    results[i].values = buffers[inputs.size() + i].read();
  // Inputs are read only.
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<double> after = buffers[i].read();
    for (size_t j = 0; j < after.size(); ++j) {
      if (std::isnan(after[j]) && std::isnan(inputs[i].values[j]))
        continue;
      EXPECT_EQ(after[j], inputs[i].values[j]) << "input " << i;
    }
  }
  return results;
}

Tensor OpTest::runOne(llvm::StringRef opJson,
                      const std::vector<Tensor> &inputs) {
  std::optional<std::vector<Tensor>> results = run(opJson, inputs);
  if (!results || results->size() != 1) {
    ADD_FAILURE() << "expected one result";
    return Tensor{};
  }
  return results->front();
}

std::string OpTest::buildError(llvm::StringRef opJson,
                               const std::vector<Tensor> &inputs) {
  if (build(opJson, inputs)) {
    ADD_FAILURE() << "the op was accepted:\n" << printModule();
    return "";
  }
  if (errors.size() != 1) {
    ADD_FAILURE() << errors.size() << " errors";
    for (const Error &error : errors)
      ADD_FAILURE() << error.message;
    return errors.empty() ? "" : errors.front().message;
  }
  return errors.front().message;
}

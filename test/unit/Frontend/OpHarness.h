//===- OpHarness.h - Build, lower and run one plan op -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The FrontendOpsTest fixture: an op object written as JSON is emitted with
// its OpEmitter into `func.func @main` over inputs of given types, the module
// is verified, and for numerics lowered with the CPU pipeline into a shared
// object that is loaded and called. Errors are collected with their
// positions.
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_TEST_UNIT_FRONTEND_OPHARNESS_H
#define DTENSOR_TEST_UNIT_FRONTEND_OPHARNESS_H

#include "dtensor/Frontend/JsonTree.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallString.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace dtensor::frontend::test {

enum class Dtype { F32, F16, BF16, I32, I64 };

/// A host tensor: logical values (as doubles) in row-major order.
struct Tensor {
  Dtype dtype = Dtype::F32;
  std::vector<int64_t> shape;
  std::vector<double> values;

  int64_t size() const;
  /// Element at a row-major multi-index.
  double at(std::initializer_list<int64_t> index) const;
};

/// `values` rounded to what `dtype` can hold.
std::vector<double> roundTo(Dtype dtype, std::vector<double> values);
/// A tensor of `shape` whose values are `scale * i + shift` (i row-major),
/// rounded to `dtype`.
Tensor ramp(Dtype dtype, std::vector<int64_t> shape, double scale,
            double shift = 0);
/// A tensor with deterministic pseudo-random values in [-range, range],
/// rounded to `dtype`.
Tensor noise(Dtype dtype, std::vector<int64_t> shape, double range = 1,
             unsigned seed = 1);
Tensor tensor(Dtype dtype, std::vector<int64_t> shape,
              std::vector<double> values);

/// One error: where and what.
struct Error {
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
};

class OpTest : public ::testing::Test {
protected:
  OpTest();
  ~OpTest() override;

  /// Emits the op `opJson` (an op object, placed at `$.model.ops[0]` of a
  /// model plan, on line 1) over inputs of the types of `inputs` into
  /// @main. Returns false (and records errors) when the op is rejected or
  /// the module does not verify; checks that the op read every attribute.
  bool build(llvm::StringRef opJson, const std::vector<Tensor> &inputs);

  /// build(), then lowers, loads and runs @main; returns its results, or
  /// nullopt (after a test failure) when any step fails.
  std::optional<std::vector<Tensor>> run(llvm::StringRef opJson,
                                         const std::vector<Tensor> &inputs);

  /// The single result of run() (a test failure unless there is one).
  Tensor runOne(llvm::StringRef opJson, const std::vector<Tensor> &inputs);

  /// build() must fail with exactly one error; returns its message.
  std::string buildError(llvm::StringRef opJson,
                         const std::vector<Tensor> &inputs);

  /// The module built last, printed.
  std::string printModule();

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<Error> errors;
  /// Column of the op object on line 1 (after the model-plan prefix).
  static unsigned opColumn();

private:
  /// Closes and deletes the library run() loaded last, if any: a test that
  /// runs several ops leaves no file behind in the temporary folder.
  void releaseLibrary();

  llvm::SmallString<128> library;
  void *handle = nullptr;
};

/// Expects `actual` to equal `expected` elementwise within `tolerance`
/// (absolute, plus relative to the expected magnitude).
void expectNear(const Tensor &actual, const std::vector<int64_t> &shape,
                const std::vector<double> &expected, double tolerance);

/// Runtime calls the lowered programs make (implemented in OpHarness.cpp).
int getMatmulCallCount();

} // namespace dtensor::frontend::test

#endif // DTENSOR_TEST_UNIT_FRONTEND_OPHARNESS_H

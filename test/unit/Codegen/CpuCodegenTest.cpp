//===- CpuCodegenTest.cpp - Programs lowered, loaded and run --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Each test lowers a small program without collectives through the CPU
// pipeline, emits a shared object, loads it and calls its entry with
// hand-built memref descriptors, then checks the results against a naive
// computation. The runtime calls the programs make are NaiveRuntime's.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/CpuCodegen.h"
#include "dtensor/InitAllDialects.h"
#include "NaiveRuntime.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <vector>

//===----------------------------------------------------------------------===//
// Harness
//===----------------------------------------------------------------------===//

namespace {

/// A row-major buffer and its memref descriptor.
template <typename T> struct Buffer {
  std::vector<int64_t> shape;
  std::vector<T> data;
  std::vector<int64_t> descriptorWords;

  explicit Buffer(std::vector<int64_t> shape, std::vector<T> values = {})
      : shape(std::move(shape)) {
    int64_t count = 1;
    for (int64_t size : this->shape)
      count *= size;
    data = values.empty() ? std::vector<T>(count, T(-7)) : std::move(values);
    EXPECT_EQ(static_cast<int64_t>(data.size()), count);
  }

  /// { allocated, aligned, offset, sizes[r], strides[r] }, row-major.
  void *descriptor() {
    descriptorWords.clear();
    descriptorWords.push_back(reinterpret_cast<int64_t>(data.data()));
    descriptorWords.push_back(reinterpret_cast<int64_t>(data.data()));
    descriptorWords.push_back(0);
    for (int64_t size : shape)
      descriptorWords.push_back(size);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t dim = static_cast<int64_t>(shape.size()) - 2; dim >= 0; --dim)
      strides[dim] = strides[dim + 1] * shape[dim + 1];
    descriptorWords.insert(descriptorWords.end(), strides.begin(),
                           strides.end());
    return descriptorWords.data();
  }

  T &at(int64_t i, int64_t j) { return data[i * shape[1] + j]; }
};

std::vector<float> iota(int64_t count, float scale, float shift = 0) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = scale * static_cast<float>(i) + shift;
  return values;
}

using Entry = void (*)(void **);

class CpuCodegenTest : public ::testing::Test {
protected:
  CpuCodegenTest() {
    mlir::DialectRegistry registry;
  dtensor::registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
    dtensor::test::resetNaiveRuntime();
  }

  ~CpuCodegenTest() override {
    if (handle)
      dlclose(handle);
    if (!library.empty())
      llvm::sys::fs::remove(library);
  }

  /// Lowers `source`, loads it and returns its dtensor_entry_main.
  Entry compile(llvm::StringRef source) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    if (!module) {
      ADD_FAILURE() << "cannot parse the program";
      return nullptr;
    }
    mlir::PassManager pm(&context);
    dtensor::codegen::buildCpuLoweringPipeline(pm, {});
    if (mlir::failed(pm.run(*module))) {
      ADD_FAILURE() << "the lowering failed";
      return nullptr;
    }
    if (llvm::sys::fs::createTemporaryFile("cpu-codegen-test", "so", library)) {
      ADD_FAILURE() << "cannot create a temporary file";
      return nullptr;
    }
    if (mlir::failed(
            dtensor::codegen::emitCpuSharedObject(*module, {}, library))) {
      ADD_FAILURE() << "emitting the shared object failed";
      return nullptr;
    }
    handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      ADD_FAILURE() << "dlopen: " << dlerror();
      return nullptr;
    }
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "dtensor_entry_main"));
    if (!entry)
      ADD_FAILURE() << "no dtensor_entry_main";
    return entry;
  }

  mlir::MLIRContext context;
  llvm::SmallString<128> library;
  void *handle = nullptr;
};

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

TEST_F(CpuCodegenTest, ElementwiseChain) {
  Entry entry = compile(R"mlir(
    func.func @main(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>)
        -> tensor<4x5xf32> {
      %e = tensor.empty() : tensor<4x5xf32>
      %m = linalg.mul ins(%a, %b : tensor<4x5xf32>, tensor<4x5xf32>)
                      outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
      %one = arith.constant dense<1.0> : tensor<4x5xf32>
      %s = arith.addf %m, %one : tensor<4x5xf32>
      %t = math.tanh %s : tensor<4x5xf32>
      return %t : tensor<4x5xf32>
    })mlir");
  ASSERT_TRUE(entry);
  Buffer<float> a({4, 5}, iota(20, 0.1f, -1)), b({4, 5}, iota(20, -0.05f, 0.5));
  Buffer<float> out({4, 5});
  void *descriptors[] = {a.descriptor(), b.descriptor(), out.descriptor()};
  entry(descriptors);
  for (int64_t i = 0; i < 20; ++i)
    EXPECT_NEAR(out.data[i], std::tanh(a.data[i] * b.data[i] + 1), 1e-6)
        << "element " << i;
  // Inputs are read only.
  EXPECT_EQ(a.data, iota(20, 0.1f, -1));
}

TEST_F(CpuCodegenTest, MatmulCallsRuntime) {
  Entry entry = compile(R"mlir(
    func.func @main(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>,
                    %at: tensor<4x3xf32>, %c: tensor<3x5xf32>)
        -> (tensor<3x5xf32>, tensor<3x5xf32>) {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3x5xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>)
          -> tensor<3x5xf32>
      %p = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>)
                         outs(%f : tensor<3x5xf32>) -> tensor<3x5xf32>
      %q = linalg.matmul
          indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                           affine_map<(m, n, k) -> (k, n)>,
                           affine_map<(m, n, k) -> (m, n)>]
          ins(%at, %b : tensor<4x3xf32>, tensor<4x5xf32>)
          outs(%c : tensor<3x5xf32>) -> tensor<3x5xf32>
      return %p, %q : tensor<3x5xf32>, tensor<3x5xf32>
    })mlir");
  ASSERT_TRUE(entry);
  Buffer<float> a({3, 4}, iota(12, 0.5f, -2)), b({4, 5}, iota(20, 0.25f, 1));
  Buffer<float> at({4, 3}), c({3, 5}, iota(15, 1.0f));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t l = 0; l < 4; ++l)
      at.at(l, i) = a.at(i, l);
  Buffer<float> p({3, 5}), q({3, 5});
  void *descriptors[] = {a.descriptor(), b.descriptor(), at.descriptor(),
                         c.descriptor(), p.descriptor(), q.descriptor()};
  entry(descriptors);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      float sum = 0;
      for (int64_t l = 0; l < 4; ++l)
        sum += a.at(i, l) * b.at(l, j);
      EXPECT_NEAR(p.at(i, j), sum, 1e-4) << i << "," << j;
      EXPECT_NEAR(q.at(i, j), sum + c.at(i, j), 1e-4) << i << "," << j;
    }
  // The zero fill became beta = 0; the accumulating matmul has beta = 1.
  EXPECT_EQ(dtensor::test::getMatmulBetas(), (std::vector<int32_t>{0, 1}));
  // The accumulator argument is not overwritten.
  EXPECT_EQ(c.data, iota(15, 1.0f));
}

TEST_F(CpuCodegenTest, BatchMatmulF64) {
  Entry entry = compile(R"mlir(
    func.func @main(%a: tensor<2x3x4xf64>, %b: tensor<2x4x2xf64>)
        -> tensor<2x3x2xf64> {
      %zero = arith.constant 0.0 : f64
      %e = tensor.empty() : tensor<2x3x2xf64>
      %f = linalg.fill ins(%zero : f64) outs(%e : tensor<2x3x2xf64>)
          -> tensor<2x3x2xf64>
      %r = linalg.batch_matmul
          ins(%a, %b : tensor<2x3x4xf64>, tensor<2x4x2xf64>)
          outs(%f : tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
      return %r : tensor<2x3x2xf64>
    })mlir");
  ASSERT_TRUE(entry);
  std::vector<double> av(24), bv(16);
  for (int64_t i = 0; i < 24; ++i)
    av[i] = 0.5 * static_cast<double>(i) - 3;
  for (int64_t i = 0; i < 16; ++i)
    bv[i] = 1.0 - 0.125 * static_cast<double>(i);
  Buffer<double> a({2, 3, 4}, av), b({2, 4, 2}, bv), out({2, 3, 2});
  void *descriptors[] = {a.descriptor(), b.descriptor(), out.descriptor()};
  entry(descriptors);
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < 4; ++l)
          sum += av[p * 12 + i * 4 + l] * bv[p * 8 + l * 2 + j];
        EXPECT_DOUBLE_EQ(out.data[p * 6 + i * 2 + j], sum);
      }
  EXPECT_EQ(dtensor::test::getMatmulBetas(), (std::vector<int32_t>{0}));
}

TEST_F(CpuCodegenTest, IntegerMatmulStaysLoops) {
  Entry entry = compile(R"mlir(
    func.func @main(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>)
        -> tensor<2x2xi32> {
      %zero = arith.constant 0 : i32
      %e = tensor.empty() : tensor<2x2xi32>
      %f = linalg.fill ins(%zero : i32) outs(%e : tensor<2x2xi32>)
          -> tensor<2x2xi32>
      %r = linalg.matmul ins(%a, %b : tensor<2x3xi32>, tensor<3x2xi32>)
                         outs(%f : tensor<2x2xi32>) -> tensor<2x2xi32>
      return %r : tensor<2x2xi32>
    })mlir");
  ASSERT_TRUE(entry);
  Buffer<int32_t> a({2, 3}, {1, 2, 3, 4, 5, 6}),
      b({3, 2}, {7, 8, 9, 10, 11, 12});
  Buffer<int32_t> out({2, 2});
  void *descriptors[] = {a.descriptor(), b.descriptor(), out.descriptor()};
  entry(descriptors);
  EXPECT_EQ(out.data, (std::vector<int32_t>{58, 64, 139, 154}));
  EXPECT_TRUE(dtensor::test::getMatmulBetas().empty());
}

TEST_F(CpuCodegenTest, DynamicShape) {
  Entry entry = compile(R"mlir(
    func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %a, %c0 : tensor<?x4xf32>
      %e = tensor.empty(%n) : tensor<?x4xf32>
      %r = linalg.add ins(%a, %a : tensor<?x4xf32>, tensor<?x4xf32>)
                      outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
      %s = math.exp %r : tensor<?x4xf32>
      return %s : tensor<?x4xf32>
    })mlir");
  ASSERT_TRUE(entry);
  for (int64_t rows : {3, 1, 0}) {
    Buffer<float> a({rows, 4},
                    rows ? iota(rows * 4, 0.125f, -1) : std::vector<float>{});
    Buffer<float> out({rows, 4});
    void *descriptors[] = {a.descriptor(), out.descriptor()};
    entry(descriptors);
    for (int64_t i = 0; i < rows * 4; ++i)
      EXPECT_NEAR(out.data[i], std::exp(2 * a.data[i]), 1e-5)
          << rows << " rows, element " << i;
  }
}

TEST_F(CpuCodegenTest, Reduction) {
  Entry entry = compile(R"mlir(
    func.func @main(%a: tensor<3x6xf32>) -> tensor<3xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<3xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>)
          -> tensor<3xf32>
      %r = linalg.reduce ins(%a : tensor<3x6xf32>) outs(%f : tensor<3xf32>)
          dimensions = [1]
          (%x: f32, %acc: f32) {
            %s = arith.addf %x, %acc : f32
            linalg.yield %s : f32
          }
      return %r : tensor<3xf32>
    })mlir");
  ASSERT_TRUE(entry);
  Buffer<float> a({3, 6}, iota(18, 0.5f, -3)), out({3});
  void *descriptors[] = {a.descriptor(), out.descriptor()};
  entry(descriptors);
  for (int64_t i = 0; i < 3; ++i) {
    float sum = 0;
    for (int64_t j = 0; j < 6; ++j)
      sum += a.at(i, j);
    EXPECT_NEAR(out.data[i], sum, 1e-5) << "row " << i;
  }
}

TEST_F(CpuCodegenTest, Softmax) {
  Entry entry = compile(R"mlir(
    func.func @main(%a: tensor<2x5xf32>) -> tensor<2x5xf32> {
      %e = tensor.empty() : tensor<2x5xf32>
      %s = linalg.softmax dimension(1) ins(%a : tensor<2x5xf32>)
                          outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
      return %s : tensor<2x5xf32>
    })mlir");
  ASSERT_TRUE(entry);
  Buffer<float> a({2, 5}, iota(10, 0.75f, -4)), out({2, 5});
  void *descriptors[] = {a.descriptor(), out.descriptor()};
  // Twice: nothing of the first call may linger in the second.
  for (int call = 0; call < 2; ++call) {
    entry(descriptors);
    for (int64_t i = 0; i < 2; ++i) {
      float max = a.at(i, 0), sum = 0;
      for (int64_t j = 0; j < 5; ++j)
        max = std::max(max, a.at(i, j));
      for (int64_t j = 0; j < 5; ++j)
        sum += std::exp(a.at(i, j) - max);
      for (int64_t j = 0; j < 5; ++j)
        EXPECT_NEAR(out.at(i, j), std::exp(a.at(i, j) - max) / sum, 1e-6)
            << i << "," << j;
    }
  }
}

} // namespace

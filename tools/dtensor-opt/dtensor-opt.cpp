//===- dtensor-opt.cpp - mlir-opt with the dtensor dialect ------*- C++ -*-===//
//
// Parses, verifies, transforms and prints IR with the dtensor dialect and the
// upstream dialects the compilation pipeline uses.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CpuCodegen.h"
#include "dtensor/Codegen/GpuCodegen.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"
#include "dtensor/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  dtensor::registerDTensorPasses();
  dtensor::codegen::registerCpuCodegenPasses();
  dtensor::codegen::registerGpuCodegenPasses();

  mlir::DialectRegistry registry;
  registry.insert<dtensor::DTensorDialect, mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect>();
  // Interface implementations (bufferization, inlining, ...) of the
  // upstream dialects.
  mlir::registerAllExtensions(registry);
  dtensor::codegen::registerGpuTargetInterfaces(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dtensor optimizer driver\n", registry));
}

//===- GpuCodegen.h - Per-rank program to CUDA kernels ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The CUDA back end: lowers a per-rank module to host code in the LLVM
// dialect that calls the runtime ABI of dtensor/rt_abi.h, with the device
// code -- one kernel per loop nest, compiled by LLVM's NVPTX back end and
// the CUDA toolkit's ptxas -- embedded in it. Matmuls and collectives are
// runtime calls (cuBLASLt and NCCL in the runtime's CUDA backend).
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_CODEGEN_GPU_GPUCODEGEN_H
#define DTENSOR_CODEGEN_GPU_GPUCODEGEN_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <functional>
#include <string>

namespace dtensor::codegen {

struct GpuLoweringOptions {
  /// The GPU architecture, as CUDA names it (sm_90 for H100 and H200).
  std::string chip = "sm_90";
  /// NVPTX target features, e.g. +ptx80; empty lets LLVM pick the PTX
  /// version the architecture needs.
  std::string features;
  /// The CUDA toolkit's root: bin/ptxas, bin/fatbinary, nvvm/libdevice.
  std::string toolkit;
  /// What to embed: fatbin (cubin plus PTX), bin (cubin) or isa (PTX).
  std::string format = "fatbin";
  /// Threads per block of the elementwise and reduction kernels.
  int64_t blockSize = 256;
  bool fuseElementwise = true;
  bool matmulToRuntime = true;
  /// Adds passes that read the program once bufferized, its deallocations
  /// placed (the memory report's allocations); none when empty.
  std::function<void(mlir::OpPassManager &)> afterBufferization;
};

/// Per-rank module (tensors + dtensor collectives) -> host LLVM dialect with
/// embedded device code, ready for translation.
void buildGpuLoweringPipeline(mlir::OpPassManager &pm,
                              const GpuLoweringOptions &options);

/// The CUDA toolkit root to use when none is given: $CUDA_PATH, else the one
/// found when dtensor was configured, else /usr/local/cuda; empty when none
/// of them has bin/ptxas.
std::string findCudaToolkit();

/// Registers what serializing GPU modules needs: the NVVM target's
/// interface and the LLVM IR translations of the device dialects.
void registerGpuTargetInterfaces(mlir::DialectRegistry &registry);

/// Registers the GPU passes and the pipeline `dtensor-gpu-lowering` for
/// dtensor-opt.
void registerGpuCodegenPasses();

} // namespace dtensor::codegen

#endif // DTENSOR_CODEGEN_GPU_GPUCODEGEN_H

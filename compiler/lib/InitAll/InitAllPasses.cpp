//===- InitAllPasses.cpp - Passes and pipelines of dtensor-opt ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/InitAllPasses.h"

#include "dtensor/Attention/Passes.h"
#include "dtensor/Autodiff/Passes.h"
#include "dtensor/Codegen/CPU/CpuCodegen.h"
#include "dtensor/Codegen/Common/Passes.h"
#include "dtensor/Codegen/GPU/GpuCodegen.h"
#include "dtensor/Collectives/Passes.h"
#include "dtensor/Driver/Pipelines.h"
#include "dtensor/Partition/Passes.h"
#include "dtensor/Propagation/Passes.h"
#include "dtensor/Reports/Passes.h"
#include "dtensor/Training/Passes.h"

void dtensor::registerAllPasses() {
  registerPropagationPasses();
  registerPartitionPasses();
  registerAttentionPasses();
  registerAutodiffPasses();
  registerTrainingPasses();
  registerCollectivesPasses();
  registerReportsPasses();
  codegen::registerCodegenCommonPasses();
  codegen::registerCpuCodegenPasses();
  codegen::registerGpuCodegenPasses();
  driver::registerDistributePipeline();
}

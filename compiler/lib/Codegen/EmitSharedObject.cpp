//===- EmitSharedObject.cpp - LLVM dialect to a native shared object ------===//
//
// Translation to LLVM IR, LLVM's own optimisation pipeline for the target
// (the loop and SLP vectorisers need the target's vector widths), object
// emission in memory, and a link into a shared object by the system `cc`,
// which also resolves the libm calls of math ops.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CpuCodegen.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <mutex>

using namespace mlir;

namespace dtensor::codegen {
namespace {

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// The target features: the host's when no CPU is named, then `extra`.
std::string getFeatures(const CpuTargetOptions &options) {
  llvm::SubtargetFeatures features;
  if (options.cpu.empty())
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.getKey(), feature.getValue());
  if (!options.features.empty()) {
    llvm::SmallVector<llvm::StringRef> extra;
    llvm::StringRef(options.features).split(extra, ',', -1, false);
    for (llvm::StringRef feature : extra)
      features.AddFeature(feature);
  }
  return features.getString();
}

llvm::OptimizationLevel getOptimizationLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::OptimizationLevel::O0;
  case 1:
    return llvm::OptimizationLevel::O1;
  case 2:
    return llvm::OptimizationLevel::O2;
  default:
    return llvm::OptimizationLevel::O3;
  }
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine,
              unsigned level) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  llvm::ModulePassManager pipeline =
      level == 0
          ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
          : builder.buildPerModuleDefaultPipeline(getOptimizationLevel(level));
  pipeline.run(module, modules);
}

/// Links `object` into a shared object at `path` with the system cc.
LogicalResult link(ModuleOp module, llvm::StringRef object,
                   llvm::StringRef path) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return module.emitError("cannot find the system C compiler `cc`");

  llvm::SmallString<128> errorsPath;
  if (llvm::sys::fs::createTemporaryFile("dtensor-cc", "txt", errorsPath))
    return module.emitError("cannot create a temporary file");
  llvm::FileRemover removeErrors(errorsPath);

  llvm::StringRef args[] = {*cc, "-shared", "-o", path, object, "-lm"};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt,
                                                llvm::StringRef(errorsPath)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, redirects, 0,
                                         0, &message);
  if (status == 0)
    return success();

  llvm::sys::fs::remove(path);
  InFlightDiagnostic diag = module.emitError("linking ")
                            << path << " with " << *cc << " failed";
  if (!message.empty())
    diag << ": " << message;
  if (auto errors = llvm::MemoryBuffer::getFile(errorsPath))
    diag << "\n" << (*errors)->getBuffer().rtrim();
  return failure();
}

} // namespace

LogicalResult emitCpuSharedObject(ModuleOp module,
                                  const CpuTargetOptions &options,
                                  llvm::StringRef path) {
  initializeNativeTarget();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return module.emitError("cannot translate the module to LLVM IR");

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("no target for ") << triple.str() << ": " << error;
  std::string cpu =
      options.cpu.empty() ? llvm::sys::getHostCPUName().str() : options.cpu;
  llvm::CodeGenOptLevel codegenLevel =
      options.optLevel == 0   ? llvm::CodeGenOptLevel::None
      : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                              : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, getFeatures(options), llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, codegenLevel));
  if (!machine)
    return module.emitError("cannot create a target machine for ")
           << triple.str() << " (cpu " << cpu << ")";
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  optimize(*llvmModule, *machine, options.optLevel);

  llvm::SmallString<0> objectCode;
  {
    llvm::raw_svector_ostream os(objectCode);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return module.emitError("the target cannot emit object files");
    codegen.run(*llvmModule);
  }

  int fd;
  llvm::SmallString<128> objectPath;
  if (llvm::sys::fs::createTemporaryFile("dtensor", "o", fd, objectPath))
    return module.emitError("cannot create a temporary object file");
  llvm::FileRemover removeObject(objectPath);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << objectCode;
    if (os.has_error())
      return module.emitError("cannot write ") << objectPath;
  }
  return link(module, objectPath, path);
}

} // namespace dtensor::codegen

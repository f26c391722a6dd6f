//===- EmitSharedObject.cpp - LLVM dialect to a native shared object ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Translation to LLVM IR, LLVM's own optimisation pipeline for the target
// (the loop and SLP vectorisers need the target's vector widths), object
// emission in memory, and a link into a shared object by the system `cc`,
// which also resolves the libm calls of math ops. On x86-64 glibc the loop
// vectoriser calls glibc's vector math library (libmvec) for exp, tanh, ...
// in vectorised loops instead of the scalar libm function per element.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Codegen/CPU/CpuCodegen.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/IRBuilder.h"
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

/// glibc's libmvec has the x86-64 vector variants of libm's functions that
/// LLVM knows (the _ZGV* names of the x86 vector function ABI).
bool hasVectorMathLibrary(const llvm::Triple &triple) {
  return triple.getArch() == llvm::Triple::x86_64 && triple.isOSLinux() &&
         triple.isGNUEnvironment();
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine,
              unsigned level) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  const llvm::Triple &triple = machine.getTargetTriple();
  llvm::TargetLibraryInfoImpl libraryInfo(
      triple, hasVectorMathLibrary(triple) ? llvm::VectorLibrary::LIBMVEC
                                           : llvm::VectorLibrary::NoLibrary);
  // Registered first, so the builder's default registration is skipped.
  functions.registerPass(
      [&] { return llvm::TargetLibraryAnalysis(libraryInfo); });
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

/// Links `object` into a shared object at `path` with the system cc (with
/// libmvec when vectorised loops call it, and libm).
LogicalResult link(ModuleOp module, llvm::StringRef object,
                   llvm::StringRef path) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return module.emitError("cannot find the system C compiler `cc`");

  llvm::SmallString<128> errorsPath;
  if (llvm::sys::fs::createTemporaryFile("dtensor-cc", "txt", errorsPath))
    return module.emitError("cannot create a temporary file");
  llvm::FileRemover removeErrors(errorsPath);

  llvm::SmallVector<llvm::StringRef> args = {
      *cc, "-shared", "-o", path, object, "-Wl,--as-needed"};
  if (hasVectorMathLibrary(llvm::Triple(llvm::sys::getDefaultTargetTriple())))
    args.push_back("-lmvec");
  args.push_back("-lm");
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

/// LLVM's x86 lowering without native bf16 rounds some bf16 values through
/// f32 (e.g. to materialise a bf16 constant) with the soft-float helper
/// __truncsfbf2, which libgcc only has since GCC 13. Each program carries
/// its own (hidden, so it never clashes): round to nearest even, NaNs stay
/// quiet NaNs.
void addBf16TruncationHelper(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *f32 = llvm::Type::getFloatTy(context);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  llvm::Type *i16 = llvm::Type::getInt16Ty(context);
  auto *type = llvm::FunctionType::get(llvm::Type::getBFloatTy(context), {f32},
                                       /*isVarArg=*/false);
  llvm::Function *helper = module.getFunction("__truncsfbf2");
  if (helper && !helper->isDeclaration())
    return;
  if (!helper)
    helper = llvm::Function::Create(type, llvm::GlobalValue::WeakAnyLinkage,
                                    "__truncsfbf2", module);
  helper->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
  helper->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", helper));
  llvm::Value *value = helper->getArg(0);
  llvm::Value *bits = b.CreateBitCast(value, i32);
  llvm::Value *lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded =
      b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7FFF)));
  llvm::Value *high = b.CreateTrunc(b.CreateLShr(rounded, 16), i16);
  llvm::Value *quietNan =
      b.CreateOr(b.CreateTrunc(b.CreateLShr(bits, 16), i16), 0x0040);
  llvm::Value *isNan = b.CreateFCmpUNO(value, value);
  b.CreateRet(b.CreateBitCast(b.CreateSelect(isNan, quietNan, high),
                              type->getReturnType()));
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
  addBf16TruncationHelper(*llvmModule);

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

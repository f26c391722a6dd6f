//===- RuntimeCalls.cpp - Calls into the runtime ABI ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dtensor/Codegen/Common/RuntimeCalls.h"
#include "dtensor/Dialect/DTensor/DTensorDialect.h"

#include "dtensor/rt_abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace dtensor::codegen {

std::optional<int32_t> getRuntimeDType(Type elementType) {
  if (elementType.isF32())
    return DTENSOR_RT_F32;
  if (elementType.isF64())
    return DTENSOR_RT_F64;
  if (elementType.isF16())
    return DTENSOR_RT_F16;
  if (elementType.isBF16())
    return DTENSOR_RT_BF16;
  if (elementType.isInteger(32))
    return DTENSOR_RT_I32;
  if (elementType.isInteger(64))
    return DTENSOR_RT_I64;
  if (elementType.isInteger(8))
    return DTENSOR_RT_I8;
  if (elementType.isInteger(1))
    return DTENSOR_RT_BOOL;
  return std::nullopt;
}

func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  // Declarations stay sorted by name at the end of the module, so that the
  // output does not depend on the order in which calls were created (one-shot
  // bufferization visits functions in no fixed order).
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  for (auto existing : module.getOps<func::FuncOp>())
    if (existing.isExternal() &&
        existing.getName().starts_with("dtensor_rt_") &&
        existing.getName() > name) {
      builder.setInsertionPoint(existing);
      break;
    }
  auto decl = func::FuncOp::create(builder, module.getLoc(), name, type);
  decl.setPrivate();
  return decl;
}

func::CallOp callRuntime(OpBuilder &builder, Location loc, StringRef name,
                         TypeRange resultTypes, ValueRange args) {
  Operation *scope = builder.getInsertionBlock()->getParentOp();
  auto module = isa<ModuleOp>(scope) ? cast<ModuleOp>(scope)
                                     : scope->getParentOfType<ModuleOp>();
  func::FuncOp callee = declareRuntimeFunction(
      module, name, builder.getFunctionType(args.getTypes(), resultTypes));
  return func::CallOp::create(builder, loc, callee, args);
}

void pushBuffer(OpBuilder &builder, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto unranked =
      UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace());
  Value cast = memref::CastOp::create(builder, loc, unranked, buffer);
  std::string name;
  llvm::raw_string_ostream os(name);
  os << kTypedPushBufferPrefix << type.getElementType();
  callRuntime(builder, loc, name, {}, cast);
}

Value createI32(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, value, 32);
}

Value createI64(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(builder, loc, value, 64);
}

std::optional<int64_t> lookupGroupId(ModuleOp module, StringRef mesh,
                                     ArrayRef<int64_t> meshDims) {
  auto groups = module->getAttrOfType<ArrayAttr>(
      DTensorDialect::getCommGroupsAttrName());
  if (!groups)
    return std::nullopt;
  for (auto [id, attr] : llvm::enumerate(groups)) {
    auto group = dyn_cast<DictionaryAttr>(attr);
    if (!group)
      continue;
    auto groupMesh = group.getAs<FlatSymbolRefAttr>("mesh");
    auto groupDims = group.getAs<DenseI64ArrayAttr>("mesh_dims");
    if (groupMesh && groupDims && groupMesh.getValue() == mesh &&
        groupDims.asArrayRef() == meshDims)
      return id;
  }
  return std::nullopt;
}

std::optional<int64_t> lookupMeshId(ModuleOp module, StringRef mesh) {
  auto meshes = module->getAttrOfType<ArrayAttr>(
      DTensorDialect::getCommMeshesAttrName());
  if (!meshes)
    return std::nullopt;
  for (auto [id, attr] : llvm::enumerate(meshes))
    if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr);
        ref && ref.getValue() == mesh)
      return id;
  return std::nullopt;
}

} // namespace dtensor::codegen

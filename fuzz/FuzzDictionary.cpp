//===- FuzzDictionary.cpp - Dictionary entries from the compiler's tables -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dtensor-fuzz-dictionary plan: the model plan's op kinds as JSON strings
// ("linear" with its quotes), from the importer's op table
// (getOpDefinitions), so the dictionary cannot fall behind it.
// dtensor-fuzz-dictionary mlir: the names of the operations of every
// dialect dtensor-compile registers, and of their dialects' namespaces.
// Each is printed as a libFuzzer dictionary entry, one per line.
//
//===----------------------------------------------------------------------===//

#include "dtensor/Frontend/OpEmitter.h"
#include "dtensor/InitAllDialects.h"

#include "mlir/IR/Dialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <cstdio>
#include <cstring>
#include <set>
#include <string>

int main(int argc, char **argv) {
  if (argc != 2 ||
      (std::strcmp(argv[1], "plan") != 0 && std::strcmp(argv[1], "mlir") != 0)) {
    std::fprintf(stderr, "usage: %s plan|mlir\n", argv[0]);
    return 2;
  }
  std::set<std::string> words;
  if (std::strcmp(argv[1], "plan") == 0) {
    for (const dtensor::frontend::OpDefinition &definition :
         dtensor::frontend::getOpDefinitions())
      words.insert(("\"" + definition.name + "\"").str());
  } else {
    mlir::DialectRegistry registry;
    dtensor::registerAllDialects(registry);
    mlir::MLIRContext context(registry,
                              mlir::MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
    for (mlir::Dialect *dialect : context.getLoadedDialects())
      words.insert(dialect->getNamespace().str() + ".");
    for (mlir::RegisteredOperationName name :
         context.getRegisteredOperations())
      words.insert(name.getStringRef().str());
  }
  for (const std::string &word : words) {
    std::string entry = "\"";
    for (char c : word) {
      if (c == '"' || c == '\\')
        entry += '\\';
      entry += c;
    }
    std::printf("%s\"\n", entry.c_str());
  }
  return 0;
}

//===- UninstrumentedLlvm.cpp - ASan next to Debian's libMLIR.so ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compiler's fuzzers link Debian's libMLIR.so and libLLVM.so, which are
// not built with AddressSanitizer. llvm::BumpPtrAllocator (MLIR's uniquer
// allocates attributes and locations with it) poisons each new slab and
// unpoisons what it hands out, but only where it is compiled with ASan: a
// slab started by this binary's copy of the inline code and then handed
// out by libMLIR.so's copy stays poisoned, and the next access is a false
// "use-after-poison". Turning manual poisoning off removes those reports;
// ASan still checks every heap, stack and global access.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

/* A program outside the tree: the installed header and library only. */
#include <dtensor/runtime.h>

#include <stdio.h>

int main(void) {
  printf("dtensor_version %s\n", dtensor_version());
  printf("dtensor_abi_version %d (header %d)\n", (int)dtensor_abi_version(),
         DTENSOR_RUNTIME_ABI_VERSION);
  return dtensor_abi_version() == DTENSOR_RUNTIME_ABI_VERSION ? 0 : 1;
}

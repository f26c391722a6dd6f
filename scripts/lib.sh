# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Shared helpers of the scripts in this folder (sourced, not run).

# Build folder of the CMake preset in use (see CMakePresets.json).
dtensor_build_dir() {
  case "${DTENSOR_PRESET:-default}" in
    cpu-only) echo "$root/build-cpu" ;;
    runtime-only) echo "$root/build-runtime" ;;
    asan) echo "$root/build-asan" ;;
    fuzz) echo "$root/build-fuzz" ;;
    *) echo "$root/build" ;;
  esac
}

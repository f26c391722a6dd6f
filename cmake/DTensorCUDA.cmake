# Optional CUDA toolkit detection. The CPU build never needs it; the GPU
# target is built only when the toolkit is found (DTENSOR_ENABLE_CUDA=AUTO).
set(DTENSOR_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA target: AUTO, ON or OFF")
set_property(CACHE DTENSOR_ENABLE_CUDA PROPERTY STRINGS AUTO ON OFF)

set(DTENSOR_HAS_CUDA OFF)
# The toolkit's root (bin/ptxas, nvvm/libdevice): the compiler's default for
# --cuda-toolkit and the lit feature cuda-toolkit.
set(DTENSOR_CUDA_TOOLKIT_DIR "")
if(NOT DTENSOR_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(DTENSOR_HAS_CUDA ON)
    get_filename_component(DTENSOR_CUDA_TOOLKIT_DIR "${CUDAToolkit_BIN_DIR}" DIRECTORY)
    message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION} at ${CUDAToolkit_BIN_DIR}")
  elseif(DTENSOR_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DTENSOR_ENABLE_CUDA=ON but no CUDA toolkit was found")
  else()
    message(STATUS "CUDA toolkit not found: building the CPU target only")
  endif()
endif()

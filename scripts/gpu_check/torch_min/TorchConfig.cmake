# A minimal TorchConfig for scripts/gpu-check.sh's fallback build
# (-DTorch_DIR=<this folder>): libtorch_cpu and libc10 of the Python's torch,
# and nothing of CUDA. The bridge needs only those (RecordFunction, the ET
# observer); torch's own config of a CUDA build also locates the whole CUDA
# toolkit (nvcc, cudart, nvrtc, a CUDA compiler check), which a machine whose
# toolkit is partial can fail. gpu-check.sh uses this only when the build
# with torch's own config fails to configure, and says so.
# Sets what CMakeLists.txt reads: Torch_VERSION, TORCH_INSTALL_PREFIX,
# TORCH_INCLUDE_DIRS, TORCH_LIBRARIES.
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c
          "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__.split('+')[0]); print(int(getattr(torch._C, '_GLIBCXX_USE_CXX11_ABI', True)))"
  OUTPUT_VARIABLE _gc_out RESULT_VARIABLE _gc_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT _gc_rc EQUAL 0)
  message(FATAL_ERROR "gpu-check torch_min: '${Python3_EXECUTABLE} -c \"import torch\"' failed")
endif()
string(REPLACE "\n" ";" _gc_lines "${_gc_out}")
list(GET _gc_lines 0 TORCH_INSTALL_PREFIX)
list(GET _gc_lines 1 Torch_VERSION)
list(GET _gc_lines 2 _gc_abi)
set(TORCH_INCLUDE_DIRS "${TORCH_INSTALL_PREFIX}/include"
                       "${TORCH_INSTALL_PREFIX}/include/torch/csrc/api/include")
# torch_cpu's own compile definitions, as its installed targets file lists them.
set(_gc_defs "")
set(_gc_targets "${TORCH_INSTALL_PREFIX}/share/cmake/Caffe2/Caffe2Targets.cmake")
if(EXISTS "${_gc_targets}")
  file(READ "${_gc_targets}" _gc_text)
  string(REGEX MATCH "set_target_properties\\(torch_cpu PROPERTIES[^)]*" _gc_block "${_gc_text}")
  string(REGEX MATCH "INTERFACE_COMPILE_DEFINITIONS \"([^\"]*)\"" _gc_m "${_gc_block}")
  set(_gc_defs "${CMAKE_MATCH_1}")
endif()
foreach(_gc_lib torch_cpu c10)
  if(NOT EXISTS "${TORCH_INSTALL_PREFIX}/lib/lib${_gc_lib}.so")
    message(FATAL_ERROR "gpu-check torch_min: no ${TORCH_INSTALL_PREFIX}/lib/lib${_gc_lib}.so")
  endif()
endforeach()
add_library(chakra_gpu_check_torch INTERFACE IMPORTED)
set_target_properties(chakra_gpu_check_torch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
  INTERFACE_COMPILE_DEFINITIONS "${_gc_defs};_GLIBCXX_USE_CXX11_ABI=${_gc_abi}"
  INTERFACE_LINK_LIBRARIES "${TORCH_INSTALL_PREFIX}/lib/libtorch_cpu.so;${TORCH_INSTALL_PREFIX}/lib/libc10.so")
set(TORCH_LIBRARIES chakra_gpu_check_torch)
set(Torch_FOUND TRUE)
message(STATUS "gpu-check torch_min: torch ${Torch_VERSION} (libtorch_cpu, c10; defines '${_gc_defs}')")

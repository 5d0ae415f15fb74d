# The minimal torch config (cmake/ChakraTorch.cmake, CHAKRA_TORCH_CONFIG):
# libtorch_cpu and libc10 of the Python's torch, and nothing of CUDA. The
# bridge needs only those (RecordFunction, the ET observer); torch's own
# config of a CUDA build also locates the whole CUDA toolkit (nvcc, cudart,
# nvrtc, a CUDA compiler check) and fails on a machine without one (a login
# node, a CPU build container), or with a partial one.
# Sets what CMakeLists.txt reads: Torch_VERSION, TORCH_INSTALL_PREFIX,
# TORCH_INCLUDE_DIRS, TORCH_LIBRARIES.
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c
          "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__.split('+')[0]); print(int(getattr(torch._C, '_GLIBCXX_USE_CXX11_ABI', True)))"
  OUTPUT_VARIABLE _tm_out RESULT_VARIABLE _tm_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT _tm_rc EQUAL 0)
  message(FATAL_ERROR "chakrashim torch_minimal: '${Python3_EXECUTABLE} -c \"import torch\"' failed")
endif()
string(REPLACE "\n" ";" _tm_lines "${_tm_out}")
list(GET _tm_lines 0 TORCH_INSTALL_PREFIX)
list(GET _tm_lines 1 Torch_VERSION)
list(GET _tm_lines 2 _tm_abi)
set(TORCH_INCLUDE_DIRS "${TORCH_INSTALL_PREFIX}/include"
                       "${TORCH_INSTALL_PREFIX}/include/torch/csrc/api/include")
# torch_cpu's own compile definitions, as its installed targets file lists them.
set(_tm_defs "")
set(_tm_targets "${TORCH_INSTALL_PREFIX}/share/cmake/Caffe2/Caffe2Targets.cmake")
if(EXISTS "${_tm_targets}")
  file(READ "${_tm_targets}" _tm_text)
  string(REGEX MATCH "set_target_properties\\(torch_cpu PROPERTIES[^)]*" _tm_block "${_tm_text}")
  string(REGEX MATCH "INTERFACE_COMPILE_DEFINITIONS \"([^\"]*)\"" _tm_m "${_tm_block}")
  set(_tm_defs "${CMAKE_MATCH_1}")
endif()
foreach(_tm_lib torch_cpu c10)
  if(NOT EXISTS "${TORCH_INSTALL_PREFIX}/lib/lib${_tm_lib}.so")
    message(FATAL_ERROR "chakrashim torch_minimal: no ${TORCH_INSTALL_PREFIX}/lib/lib${_tm_lib}.so")
  endif()
endforeach()
add_library(chakra_minimal_torch INTERFACE IMPORTED)
set_target_properties(chakra_minimal_torch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
  INTERFACE_COMPILE_DEFINITIONS "${_tm_defs};_GLIBCXX_USE_CXX11_ABI=${_tm_abi}"
  INTERFACE_LINK_LIBRARIES "${TORCH_INSTALL_PREFIX}/lib/libtorch_cpu.so;${TORCH_INSTALL_PREFIX}/lib/libc10.so")
set(TORCH_LIBRARIES chakra_minimal_torch)
set(Torch_FOUND TRUE)
message(STATUS "chakrashim torch_minimal: torch ${Torch_VERSION} (libtorch_cpu, c10; defines '${_tm_defs}')")

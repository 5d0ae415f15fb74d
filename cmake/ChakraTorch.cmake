# Finds the libtorch of the Python that builds chakrashim (the user's own
# torch: the bridge must be built against the torch the job runs), with one
# of two configs, chosen by CHAKRA_TORCH_CONFIG:
#   torch    torch's own CMake config (TorchConfig.cmake of its wheel)
#   minimal  cmake/torch_minimal: libtorch_cpu and c10 only, nothing of CUDA
#   auto     torch's own, unless it cannot configure here, which is what a
#            CUDA build of torch (PyPI's default) does on a machine without
#            the CUDA toolkit ("Your installed Caffe2 version uses CUDA but I
#            cannot find the CUDA libraries"): then minimal, with one line.
# torch's config stops CMake with a fatal error when it fails, so auto tries
# it first in a throwaway project of its own (a few seconds, only for CUDA
# builds of torch; CPU builds need no CUDA and take it as it is).
# Sets Torch_VERSION, TORCH_INSTALL_PREFIX, TORCH_INCLUDE_DIRS,
# TORCH_LIBRARIES and CHAKRA_TORCH_CONFIG_USED (torch or minimal).
set(CHAKRA_TORCH_CONFIG "auto" CACHE STRING "Which torch CMake config: auto, torch or minimal")
set_property(CACHE CHAKRA_TORCH_CONFIG PROPERTY STRINGS auto torch minimal)

set(_chakra_torch_minimal_dir "${CMAKE_CURRENT_LIST_DIR}/torch_minimal")

macro(chakra_find_torch)
  if(NOT CHAKRA_TORCH_CONFIG MATCHES "^(auto|torch|minimal)$")
    message(FATAL_ERROR "chakrashim: CHAKRA_TORCH_CONFIG='${CHAKRA_TORCH_CONFIG}': use auto, torch or minimal")
  endif()
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c
            "import torch; print(torch.utils.cmake_prefix_path); print(torch.version.cuda or '')"
    OUTPUT_VARIABLE _chakra_torch_out OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _chakra_torch_rc ERROR_QUIET)
  if(NOT _chakra_torch_rc EQUAL 0)
    message(FATAL_ERROR
      "chakrashim: '${Python3_EXECUTABLE} -c \"import torch\"' failed. "
      "Install torch into that Python (here: pip install torch==2.13.0), "
      "pass -DPython3_EXECUTABLE=..., or -DCHAKRA_WITH_TORCH=OFF.")
  endif()
  string(REPLACE "\n" ";" _chakra_torch_lines "${_chakra_torch_out}")
  list(GET _chakra_torch_lines 0 _chakra_torch_prefix)
  list(LENGTH _chakra_torch_lines _chakra_n)
  set(_chakra_torch_cuda "")
  if(_chakra_n GREATER 1)
    list(GET _chakra_torch_lines 1 _chakra_torch_cuda)
  endif()

  set(_chakra_use "${CHAKRA_TORCH_CONFIG}")
  if(_chakra_use STREQUAL "auto")
    set(_chakra_use torch)
    if(_chakra_torch_cuda AND (NOT Torch_DIR OR Torch_DIR STREQUAL _chakra_torch_minimal_dir))
      # A CUDA torch: does its own config configure on this machine?
      set(_chakra_probe "${CMAKE_BINARY_DIR}/chakra-torch-probe")
      file(MAKE_DIRECTORY "${_chakra_probe}/src")
      file(WRITE "${_chakra_probe}/src/CMakeLists.txt"
           "cmake_minimum_required(VERSION 3.22)\nproject(probe CXX)\nfind_package(Torch REQUIRED)\n")
      execute_process(
        COMMAND ${CMAKE_COMMAND} -S "${_chakra_probe}/src" -B "${_chakra_probe}/build"
                "-DCMAKE_PREFIX_PATH=${_chakra_torch_prefix}" "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
        RESULT_VARIABLE _chakra_probe_rc OUTPUT_VARIABLE _chakra_probe_out ERROR_VARIABLE _chakra_probe_err)
      file(REMOVE_RECURSE "${_chakra_probe}")
      if(NOT _chakra_probe_rc EQUAL 0)
        string(REGEX MATCH "Your installed Caffe2 version uses CUDA[^\n]*|[^\n]*CUDA[^\n]*"
               _chakra_why "${_chakra_probe_err}")
        message(STATUS "chakrashim: torch's own CMake config does not configure here (CUDA "
                       "${_chakra_torch_cuda} build of torch: ${_chakra_why}); using the minimal "
                       "config instead (libtorch_cpu and c10, all the bridge needs). "
                       "-DCHAKRA_TORCH_CONFIG=torch forces torch's own.")
        set(_chakra_use minimal)
      endif()
    endif()
  endif()

  if(_chakra_use STREQUAL "minimal")
    set(Torch_DIR "${_chakra_torch_minimal_dir}" CACHE PATH "" FORCE)
  elseif(NOT Torch_DIR OR Torch_DIR STREQUAL _chakra_torch_minimal_dir)
    unset(Torch_DIR CACHE)
    list(APPEND CMAKE_PREFIX_PATH "${_chakra_torch_prefix}")
  endif()
  find_package(Torch REQUIRED)
  set(CHAKRA_TORCH_CONFIG_USED "${_chakra_use}")
  message(STATUS "chakrashim: torch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX} "
                 "(${CHAKRA_TORCH_CONFIG_USED} config)")
endmacro()

# The libraries of ours that the bridge links (chakra_bridge_deps, declared
# in shim/CMakeLists.txt), compiled in torch's C++ ABI. PyPI's torch used
# the pre-C++11 std::string ABI (_GLIBCXX_USE_CXX11_ABI=0) up to 2.6 (2.4.1 and 2.6.0
# seen here; 2.9.1 has the C++11 one): the bridge is compiled with torch's flags, and std::string
# crosses into chakrashim_common, chakrashim_logic and chakrashim_collector, so the bridge gets
# copies of them compiled with that ABI too; without them it fails to load
# ("undefined symbol ...validate_et_fileERKSs"). Everything else keeps the
# system's ABI: Debian's GoogleTest and protobuf have it. Called from the
# top level, once both libraries exist.
function(chakra_link_bridge_deps)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c
            "import torch; print(int(getattr(torch._C, '_GLIBCXX_USE_CXX11_ABI', True)))"
    OUTPUT_VARIABLE abi OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT abi STREQUAL "0")
    target_link_libraries(chakra_bridge_deps INTERFACE chakrashim_collector chakrashim_validate chakrashim_logic chakrashim_gzip
                          chakrashim_common)
    return()
  endif()
  message(STATUS "chakrashim: torch uses the pre-C++11 std::string ABI: the bridge links "
                 "copies of chakrashim_common, _gzip, _logic, _validate and _collector built with it")
  # Their imported dependencies, found again here: imported targets are seen
  # only in the folder that found them.
  find_package(ZLIB REQUIRED)
  find_package(Threads REQUIRED)
  foreach(lib chakrashim_common chakrashim_gzip chakrashim_logic chakrashim_validate chakrashim_collector)
    get_target_property(srcs ${lib} SOURCES)
    get_target_property(dir ${lib} SOURCE_DIR)
    set(abs "")
    foreach(s IN LISTS srcs)
      if(IS_ABSOLUTE "${s}")
        list(APPEND abs "${s}")
      else()
        list(APPEND abs "${dir}/${s}")
      endif()
    endforeach()
    add_library(${lib}_oldabi STATIC ${abs})
    foreach(prop INCLUDE_DIRECTORIES COMPILE_OPTIONS COMPILE_DEFINITIONS
                 INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES
                 INTERFACE_COMPILE_DEFINITIONS)
      get_target_property(v ${lib} ${prop})
      if(v)
        set_property(TARGET ${lib}_oldabi PROPERTY ${prop} "${v}")
      endif()
    endforeach()
    set_target_properties(${lib}_oldabi PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_definitions(${lib}_oldabi PUBLIC _GLIBCXX_USE_CXX11_ABI=0)
    get_target_property(deps ${lib} LINK_LIBRARIES)
    if(deps)
      list(TRANSFORM deps REPLACE "^chakrashim_(common|logic|gzip|validate)$" "chakrashim_\\1_oldabi")
      target_link_libraries(${lib}_oldabi PUBLIC ${deps})
    endif()
  endforeach()
  target_link_libraries(chakra_bridge_deps INTERFACE chakrashim_collector_oldabi chakrashim_validate_oldabi
                        chakrashim_logic_oldabi chakrashim_gzip_oldabi chakrashim_common_oldabi)
endfunction()

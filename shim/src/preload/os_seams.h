// The core's seams to the OS, the dynamic linker and Python. Each function
// states when it may be called and what it returns on failure; none of them
// throws.
#pragma once

#include <string>

#include "config/env_snapshot.h"
#include "target/target_decision.h"

namespace chakrashim::preload {

// The executable's basename from /proc/self/exe ("python3.11"); "" if that
// cannot be read.
target::ProcessInfo current_process();

// Python's C API, found with dlsym(RTLD_DEFAULT) so that the core has no
// DT_NEEDED on libpython. Each pointer is null in a process without Python.
struct PythonApi {
  int (*is_initialized)() = nullptr;              // Py_IsInitialized
  int (*add_pending_call)(int (*)(void*), void*) = nullptr;  // Py_AddPendingCall
  bool usable() const { return is_initialized && add_pending_call; }
};
// Looks the symbols up. Safe from any thread; it runs no constructor.
PythonApi find_python_api();

// True when a loaded object's name ends in "/libtorch_cpu.so" (or
// "/libtorch.so"). Walks the link maps with dl_iterate_phdr, which runs no
// constructor, unlike dlopen(RTLD_NOLOAD) (docs/design.md section 4.2).
bool libtorch_loaded();

}  // namespace chakrashim::preload

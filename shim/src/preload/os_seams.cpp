#include "preload/os_seams.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <string_view>

namespace chakrashim::preload {

target::ProcessInfo current_process() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  const std::string_view exe(path, static_cast<std::size_t>(n));
  const auto slash = exe.rfind('/');
  return {std::string(slash == std::string_view::npos ? exe : exe.substr(slash + 1))};
}

PythonApi find_python_api() {
  PythonApi api;
  api.is_initialized = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  api.add_pending_call =
      reinterpret_cast<int (*)(int (*)(void*), void*)>(::dlsym(RTLD_DEFAULT, "Py_AddPendingCall"));
  return api;
}

bool libtorch_loaded() {
  auto visit = [](struct dl_phdr_info* info, size_t, void*) -> int {
    if (!info->dlpi_name) return 0;
    const std::string_view name(info->dlpi_name);
    const auto slash = name.rfind('/');
    const std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
    return base == "libtorch_cpu.so" || base == "libtorch.so" ? 1 : 0;
  };
  return ::dl_iterate_phdr(visit, nullptr) == 1;
}

}  // namespace chakrashim::preload

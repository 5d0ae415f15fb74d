#include "preload/os_seams.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string_view>

extern "C" char** environ;

namespace chakrashim::preload {

config::EnvSnapshot read_environ() {
  config::EnvSnapshot env;
  if (!environ) return env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    if (config::EnvSnapshot::wanted(name)) env.set(name, entry.substr(eq + 1));
  }
  return env;
}

bool profile_variable_present() {
  if (!environ) return false;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CHAKRA_PROFILE=", 15) == 0) return true;
  return false;
}

target::ProcessInfo current_process() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  const std::string_view exe(path, static_cast<std::size_t>(n));
  const auto slash = exe.rfind('/');
  return {std::string(slash == std::string_view::npos ? exe : exe.substr(slash + 1))};
}

std::string own_directory() {
  Dl_info info;
  if (::dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || !info.dli_fname) return {};
  const std::string path(info.dli_fname);
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string working_directory() {
  char path[PATH_MAX];
  return ::getcwd(path, sizeof path) ? std::string(path) : std::string();
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

#include "config/env_snapshot.h"

#include "config/launcher_vars.h"

namespace chakrashim::config {

bool EnvSnapshot::wanted(std::string_view name) {
  if (name.substr(0, 7) == "CHAKRA_") return true;
  if (name == "CHAKRASHIM_CONFIG_SHOWN") return true;  // config.h kConfigShownVar
  for (const char* v : chakrashim_launcher_vars)
    if (name == v) return true;
  return false;
}

EnvSnapshot EnvSnapshot::from_entries(const char* const* entries, std::size_t count) {
  EnvSnapshot env;
  for (std::size_t i = 0; entries && i < count; ++i) {
    if (!entries[i]) continue;
    const std::string_view entry(entries[i]);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    if (wanted(name) && !env.get(name)) env.set(name, entry.substr(eq + 1));
  }
  return env;
}

void EnvSnapshot::set(std::string_view name, std::string_view value) {
  for (auto& [n, v] : vars_) {
    if (n == name) {
      v = std::string(value);
      return;
    }
  }
  vars_.emplace_back(std::string(name), std::string(value));
}

std::optional<std::string_view> EnvSnapshot::get(std::string_view name) const {
  for (const auto& [n, v] : vars_)
    if (n == name) return std::string_view(v);
  return std::nullopt;
}

}  // namespace chakrashim::config

#include "config/env_snapshot.h"

#include <array>

namespace chakrashim::config {

namespace {
// Launcher variables that identity.cpp reads (docs/design.md section 4.1).
constexpr std::array<std::string_view, 15> kLauncherVars = {
    "RANK",          "WORLD_SIZE",        "LOCAL_RANK",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
    "PMI_RANK",      "PMI_SIZE",          "MV2_COMM_WORLD_RANK",
    "MV2_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
    "SLURM_JOB_ID",  "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_RUN_ID",
};
}  // namespace

bool EnvSnapshot::wanted(std::string_view name) {
  if (name.substr(0, 7) == "CHAKRA_") return true;
  if (name == "CHAKRASHIM_CONFIG_SHOWN") return true;  // config.h kConfigShownVar
  for (auto v : kLauncherVars)
    if (v == name) return true;
  return false;
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

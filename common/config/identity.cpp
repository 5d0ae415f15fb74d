#include "config/identity.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "config/value_grammar.h"

namespace chakrashim::target {

namespace {

struct Family {
  std::string_view rank_var;
  std::string_view size_var;  // empty: this family has no size variable
};

// Order is precedence. PMIx defines no world-size variable; under srun
// --mpi=pmix, SLURM_NTASKS is that size.
constexpr std::array<Family, 6> kFamilies{{
    {"RANK", "WORLD_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMIX_RANK", "SLURM_NTASKS"},
    {"PMI_RANK", "PMI_SIZE"},
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
}};

std::optional<std::uint64_t> read_number(const config::EnvSnapshot& env, std::string_view name,
                                         std::vector<std::string>& notes) {
  const auto value = env.get(name);
  if (!value) return std::nullopt;
  const auto n = config::parse_decimal(*value);
  if (!n) notes.push_back(std::string(name) + "=" + config::quote_for_log(*value) +
                          " is not a number; ignored");
  return n;
}

}  // namespace

Identity resolve_identity(const config::EnvSnapshot& env, const config::Config& config) {
  Identity id;
  const Family* family = nullptr;
  for (const auto& f : kFamilies) {
    if (auto rank = read_number(env, f.rank_var, id.notes)) {
      id.rank = *rank;
      id.rank_source = std::string(f.rank_var);
      family = &f;
      break;
    }
  }
  if (config.rank_override) {
    id.rank = *config.rank_override;
    id.rank_source = "CHAKRA_RANK";
  } else if (!family) {
    id.rank_source = "default";
  }
  if (family && !family->size_var.empty())
    id.world_size = read_number(env, family->size_var, id.notes);

  if (config.job_id_override) {
    id.job_id = *config.job_id_override;
  } else if (const auto slurm = env.get("SLURM_JOB_ID")) {
    if (auto safe = config::parse_job_id(*slurm)) {
      id.job_id = *safe;
    } else {
      id.notes.push_back("SLURM_JOB_ID=" + config::quote_for_log(*slurm) +
                         " cannot name a folder; using job id 0");
    }
  }
  if (auto restarts = read_number(env, "TORCHELASTIC_RESTART_COUNT", id.notes))
    id.restart_count = *restarts;
  return id;
}

std::uint64_t speaking_rank(const config::Config& config) {
  if (!config.ranks || config.ranks->ranges().empty()) return 0;
  std::uint64_t lowest = config.ranks->ranges().front().first;
  for (const auto& r : config.ranks->ranges()) lowest = std::min(lowest, r.first);
  return lowest;
}

}  // namespace chakrashim::target

#include "config/identity.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

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

std::string run_id_of(const config::EnvSnapshot& env, const config::Config& config) {
  const auto get = [&](const char* name) -> std::string {
    const auto v = env.get(name);
    return v ? std::string(*v) : std::string();
  };
  // Each launcher's part, the same on every rank it starts; all of those
  // present, so that two torchrun launches in one Slurm allocation differ.
  std::vector<std::string> parts;
  const std::string step = get("SLURM_STEP_ID");
  if (const std::string job = get("SLURM_JOB_ID"); !job.empty())
    parts.push_back("slurm:" + job + (step.empty() ? "" : "." + step));
  const std::string pmix = get("PMIX_NAMESPACE");
  const std::string ompi = get("OMPI_MCA_ess_base_jobid");
  if (!pmix.empty()) parts.push_back("pmix:" + pmix);
  else if (!ompi.empty()) parts.push_back("ompi:" + ompi);
  if (const std::string run = get("TORCHELASTIC_RUN_ID"); !run.empty() && run != "none")
    parts.push_back("torchrun:" + run);
  // chakra-run's id only where no launcher starts it once per rank (srun's
  // step, mpirun's job): there each rank's chakra-run would draw its own.
  if (step.empty() && pmix.empty() && ompi.empty() && config.run_id_override)
    parts.push_back(*config.run_id_override);
  std::string id;
  for (const auto& p : parts) id += (id.empty() ? "" : ",") + p;
  // A launcher's value with odd characters, or too long, is no id to trust.
  return config::parse_run_id(id).value_or(std::string());
}

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
  id.run_id = run_id_of(env, config);
  return id;
}

std::uint64_t speaking_rank(const config::Config& config) {
  if (!config.ranks || config.ranks->ranges().empty()) return 0;
  std::uint64_t lowest = config.ranks->ranges().front().first;
  for (const auto& r : config.ranks->ranges()) lowest = std::min(lowest, r.first);
  return lowest;
}

}  // namespace chakrashim::target

// Rank, world size and job identity from the launcher's variables, by the
// precedence of docs/design.md section 4.1. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/env_snapshot.h"

namespace chakrashim::target {

struct Identity {
  std::uint64_t rank = 0;
  std::string rank_source;  // the variable the rank came from, or "default"
  std::optional<std::uint64_t> world_size;
  std::string job_id = "0";
  std::uint64_t restart_count = 0;  // TORCHELASTIC_RESTART_COUNT
  // The launch this process belongs to, the same for every rank of it and
  // another for the next launch (issue #49: two runs' files mixed in one
  // folder): "slurm:JOB.STEP", "pmix:NAMESPACE", "ompi:JOBID",
  // "torchrun:RUN_ID", joined by ',' where several are set, and
  // CHAKRA_RUN_ID's (chakra-run sets one) where no launcher starts each rank;
  // empty where none is known (the core then names a lone process by its
  // pid and host).
  std::string run_id;
  // Launcher variables that were set but unreadable, one line each; they are
  // skipped as if unset.
  std::vector<std::string> notes;
};

// CHAKRA_RANK overrides; else RANK (torchrun wins over an enclosing srun),
// OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, MV2_COMM_WORLD_RANK,
// SLURM_PROCID; else 0. World size comes from the family of the rank's
// variable. Job id: CHAKRA_JOB_ID, else SLURM_JOB_ID, else "0". Run id: the
// launcher's (Slurm's job and step, PMIx's namespace, Open MPI's job,
// torchrun's run id unless "none"), and CHAKRA_RUN_ID unless srun or
// mpirun started this rank (they may start one chakra-run per rank).
//   {SLURM_JOB_ID=88, TORCHELASTIC_RUN_ID=x} -> "slurm:88,torchrun:x"
//   {RANK=3, WORLD_SIZE=8, SLURM_PROCID=0, SLURM_NTASKS=2} -> rank 3 of 8
Identity resolve_identity(const config::EnvSnapshot& env, const config::Config& config);
// The run id part of resolve_identity.
std::string run_id_of(const config::EnvSnapshot& env, const config::Config& config);

// The rank that speaks for the job at the default log level (its capture
// line, at info; the others print warnings and errors only), and the rank
// whose folders `chakrashim config --print` announces when this process
// captures nothing itself: the lowest rank that captures, as the on-demand
// publishing rank is. Rank 0 alone left a job with CHAKRA_RANKS=1 without
// any capture line (issue #38).
//   no CHAKRA_RANKS -> 0   "1" -> 1   "4-7,2" -> 2
std::uint64_t speaking_rank(const config::Config& config);

}  // namespace chakrashim::target

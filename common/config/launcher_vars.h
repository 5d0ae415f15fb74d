/* The launcher variables chakrashim reads besides CHAKRA_* (identity.cpp,
 * docs/design.md section 4.1): rank, size, job id, restart count. In C, so
 * that the preload stub (preload/preload_stub.c) copies at load exactly the
 * list the parsers read later (config/env_snapshot.cpp). */
#ifndef CHAKRASHIM_CONFIG_LAUNCHER_VARS_H
#define CHAKRASHIM_CONFIG_LAUNCHER_VARS_H

#define CHAKRASHIM_LAUNCHER_VAR_COUNT 15

static const char* const chakrashim_launcher_vars[CHAKRASHIM_LAUNCHER_VAR_COUNT] = {
    "RANK",          "WORLD_SIZE",        "LOCAL_RANK",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
    "PMI_RANK",      "PMI_SIZE",          "MV2_COMM_WORLD_RANK",
    "MV2_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
    "SLURM_JOB_ID",  "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_RUN_ID",
};

#endif

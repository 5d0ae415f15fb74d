/* The variables chakrashim reads besides CHAKRA_*: the launchers' rank,
 * size, job id, restart count and launch (identity.cpp, docs/design.md
 * section 4.1),
 * and four that change what the capture does (config.cpp): where CUDA lives
 * (CUDA_HOME, else CUDA_PATH: where libcupti is looked for) and torch's
 * ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_{RANGE,DATA}. In C, so
 * that the preload stub (preload/preload_stub.c) copies at load exactly the
 * list the parsers read later (config/env_snapshot.cpp): nothing reads the
 * environment after load, when another thread may be changing it. */
#ifndef CHAKRASHIM_CONFIG_LAUNCHER_VARS_H
#define CHAKRASHIM_CONFIG_LAUNCHER_VARS_H

#define CHAKRASHIM_LAUNCHER_VAR_COUNT 22

static const char* const chakrashim_launcher_vars[CHAKRASHIM_LAUNCHER_VAR_COUNT] = {
    "RANK",          "WORLD_SIZE",        "LOCAL_RANK",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
    "PMI_RANK",      "PMI_SIZE",          "MV2_COMM_WORLD_RANK",
    "MV2_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
    "SLURM_JOB_ID",  "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_RUN_ID",
    "SLURM_STEP_ID", "PMIX_NAMESPACE",    "OMPI_MCA_ess_base_jobid",
    "CUDA_HOME",     "CUDA_PATH",
    "ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_RANGE",
    "ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_DATA",
};

#endif

/* The C interface between the preloaded core (libchakrashim.so) and the
 * torch bridge (libchakrashim_torch.so). Plain C structs of function
 * pointers and PODs only: no C++ type crosses the boundary, because the two
 * libraries are built against different runtimes' expectations (the bridge
 * against the user's libtorch, the core against nothing but libc/libstdc++).
 *
 * Versioning: a side accepts a table whose abi_version equals its own and
 * whose struct_size is at least what it reads. */
#ifndef CHAKRASHIM_BRIDGE_ABI_H
#define CHAKRASHIM_BRIDGE_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: cuda_home and et_integral_tensors (read at load, not at arm).
 * 3: module_scopes. */
#define CHAKRASHIM_ABI_VERSION 3u

/* Log levels, as CHAKRA_LOG_LEVEL orders them. */
enum chakrashim_log_level {
  CHAKRASHIM_LOG_ERROR = 0,
  CHAKRASHIM_LOG_WARN = 1,
  CHAKRASHIM_LOG_INFO = 2,
  CHAKRASHIM_LOG_DEBUG = 3
};

/* The capture configuration, parsed and checked by the core. Strings are
 * owned by the core and live for the whole process; NULL means unset. */
typedef struct chakrashim_capture_config {
  uint64_t start_step;
  uint64_t end_step; /* inclusive, >= start_step */
  uint64_t warmup_steps;
  uint64_t active_steps; /* >= 1 */
  const char* trace_dir; /* absolute */
  const char* job_id;
  uint64_t rank;
  int64_t world_size; /* -1: unknown */
  uint64_t restart_count;
  const char* ranks_filter; /* CHAKRA_RANKS as given, or NULL */
  const char* step_marker;
  const char* exe_name; /* the executable's basename */
  int host_trace;
  int device_trace;
  int gzip;
  int overwrite;
  uint64_t max_memory;
  uint64_t exit_timeout_s;
  int flush_signal;
  const char* cupti_lib;
  uint64_t cupti_buffers; /* bytes for CUPTI's activity buffers */
  int cupti_sync;         /* CHAKRA_CUPTI_EXTRA: SYNCHRONIZATION records */
  int cupti_overhead;     /* CHAKRA_CUPTI_EXTRA: OVERHEAD records */
  int log_level;          /* CHAKRA_LOG_LEVEL, as chakrashim_log_level */
  int et_native;          /* CHAKRA_ET_RECORDER=native: our recorder, not torch's observer */
  uint64_t repeat_every;  /* CHAKRA_REPEAT_EVERY; 0: one window */
  uint64_t repeat_until;  /* CHAKRA_REPEAT_UNTIL, if has_repeat_until */
  int has_repeat_until;
  int on_demand;          /* CHAKRA_ON_DEMAND: windows only when triggered */
  int trigger_signal;     /* CHAKRA_TRIGGER_SIGNAL; 0: none */
  uint64_t trigger_steps; /* CHAKRA_TRIGGER_STEPS */
  const char* cuda_home;   /* CUDA_HOME, else CUDA_PATH, or NULL */
  int et_integral_tensors; /* ENABLE_PYTORCH_EXECUTION_TRACE_SAVE_INTEGRAL_TENSOR_* set */
  int module_scopes;       /* CHAKRA_MODULE_SCOPES: nn.Module calls as scopes in the window */
  const char* run_id;      /* the launch's identity, the same on all its ranks (never NULL) */
} chakrashim_capture_config;

/* What the core offers the bridge. */
typedef struct chakrashim_core_api {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* core_version;
  const chakrashim_capture_config* config;
  /* One line to stderr with the core's "[chakrashim rank R]" prefix; the
   * bridge logs through this rather than its own logger, because torch
   * bundles its own fmt. Thread-safe; never throws. */
  void (*log)(int level, const char* message);
} chakrashim_core_api;

/* What the bridge tells the core. */
typedef struct chakrashim_bridge_api {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* torch_version; /* the torch it was built against, e.g. "2.13.0" */
} chakrashim_bridge_api;

enum chakrashim_attach_status {
  CHAKRASHIM_ATTACH_OK = 0,
  /* The loaded libtorch is not the one the bridge was built for. */
  CHAKRASHIM_ATTACH_TORCH_MISMATCH = 1,
  /* The core's table has another ABI version. */
  CHAKRASHIM_ATTACH_ABI_MISMATCH = 2,
  CHAKRASHIM_ATTACH_FAILED = 3
};

/* Exported by the bridge as "chakrashim_bridge_attach". Called once, on
 * Python's main thread with the GIL held, after libtorch finished loading.
 * On any status but OK the bridge has logged one line and registered
 * nothing; the core then leaves torch alone. */
typedef int (*chakrashim_bridge_attach_fn)(const chakrashim_core_api* core,
                                           chakrashim_bridge_api* out);
#define CHAKRASHIM_BRIDGE_ATTACH_SYMBOL "chakrashim_bridge_attach"
#define CHAKRASHIM_BRIDGE_LIBRARY "libchakrashim_torch.so"

#ifdef __cplusplus
}
#endif
#endif /* CHAKRASHIM_BRIDGE_ABI_H */

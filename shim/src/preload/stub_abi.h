/* The interface between the preload stub (libchakrashim.so, C, what every
 * process that inherits LD_PRELOAD maps) and the core (libchakrashim_core.so,
 * C++, loaded by the stub only in a Python process with CHAKRA_PROFILE set).
 * Both are built together, so the version is a guard, not a compatibility
 * promise. Plain C: no C++ type crosses, and the stub has no C++ runtime.
 *
 * Why two libraries: loading a C++ library with its static runtime and
 * relocations cost every process under the preload (a shell, /bin/true, a
 * launcher) about 9% of its start-up over an empty preloaded library; the
 * stub costs about 1% (docs/cost.md). */
#ifndef CHAKRASHIM_PRELOAD_STUB_ABI_H
#define CHAKRASHIM_PRELOAD_STUB_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHAKRASHIM_CORE_LIBRARY "libchakrashim_core.so"
#define CHAKRASHIM_CORE_START_SYMBOL "chakrashim_core_start"
#define CHAKRASHIM_STUB_ABI_VERSION 1

/* What the stub saw when the process loaded it. Filled by the stub's
 * constructor, before the job has threads, completed (own_dir, real_dlopen)
 * just before the core's start, and never changed after: the core may keep
 * pointers into it for the life of the process. */
struct chakrashim_stub_view {
  uint32_t abi_version; /* CHAKRASHIM_STUB_ABI_VERSION */
  uint32_t size;        /* sizeof(struct chakrashim_stub_view) */
  /* "NAME=value" copies of the environment entries the core may read
   * (CHAKRA* and the launcher variables), in environ's order. */
  const char* const* vars;
  size_t var_count;
  /* The working directory and the folder of libchakrashim.so (absolute),
   * both as they were at load; "" where unknown. */
  const char* cwd;
  const char* own_dir;
  /* The real dlopen (the next one after our interposer). */
  void* (*real_dlopen)(const char*, int);
};

/* Called by the stub on every dlopen once the core is started, before the
 * real dlopen: any thread, no lock held, must not load anything itself. */
typedef void (*chakrashim_core_dlopen_fn)(void);

/* The core's one entry, called once, on the thread of the dlopen that found
 * Python in the process. Returns the function for later dlopens, or null
 * when the process stays inert (not a target, or the core failed). */
typedef chakrashim_core_dlopen_fn (*chakrashim_core_start_fn)(
    const struct chakrashim_stub_view* view);

#ifdef __cplusplus
}
#endif

#endif

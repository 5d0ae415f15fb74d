/* The preload stub's environment copy (shim/src/preload/preload_stub.c), the
 * code every process with CHAKRA_PROFILE set runs at load, opened to the
 * stub_env fuzz target. The stub's file is compiled in whole, unchanged, so
 * that what is fuzzed is what ships; its functions are static, so this
 * file, in the same translation unit, hands them a chosen environment.
 *
 * The fuzz binary must not interpose dlopen: on x86-64 and aarch64 the
 * stub's dlopen is the assembly entry, which is not linked here; elsewhere
 * the stub would define a C one, hence the #error. Its constructor runs
 * once at start, on the fuzzer's own environment: harmless, and reset
 * before the first input. */
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "stub_env_probe.c: the stub would interpose dlopen in the fuzz binary here"
#endif
#ifndef CHAKRASHIM_VERSION
#define CHAKRASHIM_VERSION "fuzz"
#endif
#include "preload/preload_stub.c"

#include "stub_env_probe.h"

int chakra_fuzz_stub_copy(char** env, struct chakra_fuzz_stub_copy_result* out) {
  char** saved = environ;
  static int first = 1;
  if (first && g_load.view.vars && g_load.view.vars != g_load.vars)
    free((void*)g_load.view.vars); /* the constructor's copy went to the heap */
  first = 0;
  memset(&g_load, 0, sizeof g_load);
  environ = env;
  out->profile_present = profile_variable_present();
  out->copied = copy_wanted_variables();
  environ = saved;
  out->vars = g_load.view.vars;
  out->count = g_load.view.var_count;
  /* The heap block, when the arena was too small: the stub keeps it for the
   * life of the process; the fuzzer frees it after each input. */
  out->heap_block = out->copied && out->vars != g_load.vars ? (void*)out->vars : NULL;
  out->arena = g_load.arena;
  out->arena_size = sizeof g_load.arena;
  out->fixed_slots = sizeof g_load.vars / sizeof g_load.vars[0];
  return out->copied;
}

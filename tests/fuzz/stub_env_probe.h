/* What stub_env_probe.c returns: the preload stub's copy of an environment. */
#ifndef CHAKRA_FUZZ_STUB_ENV_PROBE_H
#define CHAKRA_FUZZ_STUB_ENV_PROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct chakra_fuzz_stub_copy_result {
  int profile_present;   /* the constructor's test for CHAKRA_PROFILE */
  int copied;            /* 0: out of memory, the stub stays inert */
  const char* const* vars; /* the copied "NAME=value" entries, in order */
  size_t count;
  void* heap_block;      /* non-NULL when the copy went to the heap: free it */
  const char* arena;     /* the fixed arena, for the bounds property */
  size_t arena_size;
  size_t fixed_slots;
};

/* Runs the stub's scan and copy on env (NULL-terminated), restoring environ. */
int chakra_fuzz_stub_copy(char** env, struct chakra_fuzz_stub_copy_result* out);

#ifdef __cplusplus
}
#endif

#endif

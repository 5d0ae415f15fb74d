/* libouter.so, with RUNPATH $ORIGIN/sub. It dlopens "libdep.so" by bare
 * name: glibc searches the RUNPATH of dlopen's caller, which it finds from
 * the return address. CUDA wheels' libraries rely on exactly this lookup.
 *
 * With CHAKRASHIM_FIXTURE_DLOPEN_FROM=/path/lib.so (already loaded) it calls
 * that library's own dlopen directly. Sanitizer variants need this: their
 * runtime, preloaded first, interposes dlopen itself and calls glibc's from
 * inside the runtime, which loses every caller's RUNPATH with or without us
 * (google/sanitizers#1219), so only a direct call still tests our entry. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef void* (*dlopen_fn)(const char*, int);

static dlopen_fn chosen_dlopen(void) {
  const char* from = getenv("CHAKRASHIM_FIXTURE_DLOPEN_FROM");
  void* lib = from && *from ? dlopen(from, RTLD_NOW | RTLD_NOLOAD) : NULL;
  dlopen_fn fn = lib ? (dlopen_fn)dlsym(lib, "dlopen") : NULL;
  if (from && *from && !fn) fprintf(stderr, "outer: no dlopen in %s\n", from);
  return fn ? fn : dlopen;
}

int outer_load_dep(void) {
  void* dep = chosen_dlopen()("libdep.so", RTLD_NOW | RTLD_LOCAL);
  if (!dep) {
    fprintf(stderr, "outer: %s\n", dlerror());
    return -1;
  }
  int (*value)(void) = (int (*)(void))dlsym(dep, "dep_value");
  return value ? value() : -1;
}

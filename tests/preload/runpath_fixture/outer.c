/* libouter.so, with RUNPATH $ORIGIN/sub. It dlopens "libdep.so" by bare
 * name: glibc searches the RUNPATH of dlopen's caller, which it finds from
 * the return address. CUDA wheels' libraries rely on exactly this lookup. */
#include <dlfcn.h>
#include <stdio.h>

int outer_load_dep(void) {
  void* dep = dlopen("libdep.so", RTLD_NOW | RTLD_LOCAL);
  if (!dep) {
    fprintf(stderr, "outer: %s\n", dlerror());
    return -1;
  }
  int (*value)(void) = (int (*)(void))dlsym(dep, "dep_value");
  return value ? value() : -1;
}

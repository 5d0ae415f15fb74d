/* Loads libouter.so by path and asks it to load libdep.so by bare name.
 * Prints "ok 42" and exits 0 when the lookup worked. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: runpath_host /path/to/libouter.so\n");
    return 2;
  }
  void* outer = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!outer) {
    fprintf(stderr, "host: %s\n", dlerror());
    return 1;
  }
  int (*load)(void) = (int (*)(void))dlsym(outer, "outer_load_dep");
  const int v = load ? load() : -1;
  if (v != 42) return 1;
  printf("ok %d\n", v);
  return 0;
}

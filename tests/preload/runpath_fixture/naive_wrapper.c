/* A negative control: the dlopen wrapper docs/design.md section 4.2 warns about,
 * which calls the real dlopen and then does work. glibc then sees this
 * library as the caller and searches its RUNPATH, not libouter.so's, so the
 * fixture must FAIL under it. It proves the fixture can tell the two apart. */
#define _GNU_SOURCE
#include <dlfcn.h>

static volatile int calls;

__attribute__((noinline, optimize("O0"))) void* dlopen(const char* file, int mode) {
  void* (*real)(const char*, int) = (void* (*)(const char*, int))dlsym(RTLD_NEXT, "dlopen");
  void* handle = real(file, mode);
  calls++;
  return handle;
}

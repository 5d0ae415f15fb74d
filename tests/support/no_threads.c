/* libchakra_no_threads.so: a test seam for issue #34 (a thread that cannot
 * be created). Preloaded in front of chakrashim, it refuses, with EAGAIN,
 * every pthread_create called from a library whose path holds
 * CHAKRASHIM_TEST_NO_THREADS_FROM (default "libchakrashim": the preload, its
 * core and the torch bridge with the collector linked in), and lets every
 * other one through, so that the job's own threads and torch's pools work
 * while every thread start of ours fails, as in a pids-limited cgroup (we
 * run as root here, where RLIMIT_NPROC is not enforced). The caller is
 * found on the stack: std::thread's start is libstdc++'s, called from an
 * inline constructor in our code. Each refusal is said in one line on
 * stderr ("no_threads: refused"), so that a test can prove the seam hit.
 * Test-only: never installed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

static const char* from = "libchakrashim";

__attribute__((constructor)) static void init(void) {
  const char* e = getenv("CHAKRASHIM_TEST_NO_THREADS_FROM");
  if (e && *e) from = e;
  /* The first backtrace loads libgcc_s: done here, not in a thread start. */
  void* frames[2];
  backtrace(frames, 2);
}

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                   void* arg) {
  static create_fn real = NULL;
  if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  void* frames[6];
  const int n = backtrace(frames, 6);
  for (int i = 1; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_fname && strstr(info.dli_fname, from)) {
      static const char line[] = "no_threads: refused a thread start\n";
      ssize_t w = write(2, line, sizeof line - 1);
      (void)w;
      return EAGAIN;
    }
  }
  return real(thread, attr, start, arg);
}

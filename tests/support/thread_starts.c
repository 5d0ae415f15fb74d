/* libchakra_thread_starts.so: says each thread start and fork of the
 * program it is preloaded into, one line on stderr each ("thread_starts:
 * pthread_create", "thread_starts: fork"), and lets it through.
 * unit.thread_sources runs each unit-test suite under it to prove that the
 * TSan variant's short list of unit sources (tests/CMakeLists.txt,
 * CHAKRA_THREAD_UNIT_SOURCES) holds every suite that starts a thread or
 * forks: TSan judges nothing in a single-threaded test. Test-only: never
 * installed; not built with a sanitizer (their runtimes must come first). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
typedef pid_t (*fork_fn)(void);

static void say(const char* what) {
  /* write(2): no stdio buffer for a forked child to flush twice. */
  ssize_t rc = write(2, what, strlen(what));
  (void)rc;
}

int pthread_create(pthread_t* t, const pthread_attr_t* a, void* (*f)(void*), void* arg) {
  static create_fn real;
  if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  say("thread_starts: pthread_create\n");
  return real(t, a, f, arg);
}

pid_t fork(void) {
  static fork_fn real;
  if (!real) real = (fork_fn)dlsym(RTLD_NEXT, "fork");
  say("thread_starts: fork\n");
  return real();
}

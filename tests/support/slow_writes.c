/* libchakra_slow_writes.so: a test seam for issue #48 (what happens while
 * the job waits at exit for its traces). Preloaded in front of chakrashim,
 * it makes every write(2) to a file whose name ends in ".partial" sleep
 * CHAKRASHIM_TEST_SLOW_WRITE_US microseconds first (default 3000), so that
 * writing a window takes seconds whatever the machine's speed: a test can
 * then signal the job while it is sure the files are being written, not a
 * race against a fast disk. Test-only: never installed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void*, size_t);

static long delay_us = 3000;

__attribute__((constructor)) static void init(void) {
  const char* e = getenv("CHAKRASHIM_TEST_SLOW_WRITE_US");
  if (e && *e) delay_us = strtol(e, NULL, 10);
}

static int is_partial(int fd) {
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 8) return 0;
  target[n] = '\0';
  return strcmp(target + n - 8, ".partial") == 0;
}

ssize_t write(int fd, const void* buf, size_t count) {
  static write_fn real = NULL;
  if (!real) real = (write_fn)dlsym(RTLD_NEXT, "write");
  if (fd > 2 && delay_us > 0 && is_partial(fd)) {
    struct timespec t = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    nanosleep(&t, NULL);
  }
  return real(fd, buf, count);
}

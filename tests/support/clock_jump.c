/* libchakra_clock_jump.so: a test seam for issue #48 (a wall-clock step
 * between two steps). Preloaded in front of chakrashim, it shifts every
 * CLOCK_REALTIME reading of the process (Python's time.time() too) by an
 * offset that the job moves by calling chakra_test_clock_jump(seconds)
 * through ctypes, as NTP or an administrator would step the clock. Other
 * clocks are untouched. Test-only: never installed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <time.h>

typedef int (*gettime_fn)(clockid_t, struct timespec*);

static _Atomic long long offset_ns = 0;

void chakra_test_clock_jump(double seconds) { offset_ns += (long long)(seconds * 1e9); }

int clock_gettime(clockid_t id, struct timespec* ts) {
  static gettime_fn real = NULL;
  if (!real) real = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
  const int rc = real(id, ts);
  const long long off = offset_ns;
  if (rc == 0 && id == CLOCK_REALTIME && off != 0) {
    long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + off;
    ts->tv_sec = ns / 1000000000LL;
    ts->tv_nsec = ns % 1000000000LL;
  }
  return rc;
}

/* Callgrind's client requests, callable from Python through ctypes: the
 * span benchmark counts the instructions of the window's steps only (the
 * process runs uninstrumented, and fast, until region_start). Without
 * valgrind these are a few no-op instructions. */
#include <valgrind/callgrind.h>

void region_start(void) {
  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_ZERO_STATS;
}

void region_stop(void) {
  CALLGRIND_DUMP_STATS_AT("region");
  CALLGRIND_STOP_INSTRUMENTATION;
}

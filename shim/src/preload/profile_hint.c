/* See profile_hint.h. Nothing here runs unless the constructor armed it,
 * and the exit handler is registered only then (atexit, not a destructor):
 * an ordinary process does not even touch this file's pages (a destructor
 * cost every process one more page fault at exit, bench_startup's faults
 * column). One that set CHAKRA_* variables without CHAKRA_PROFILE pays, at
 * exit, a few getenv calls and at most one read of its parent's /proc
 * environ. */
#define _GNU_SOURCE
#include "preload/profile_hint.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char g_first_name[128];
static int g_count;

static void chakrashim_profile_hint_say(void);

__attribute__((visibility("hidden"))) void chakrashim_profile_hint_arm(const char* first_entry, int count) {
  size_t n = 0;
  while (first_entry[n] && first_entry[n] != '=' && n + 1 < sizeof g_first_name) {
    g_first_name[n] = first_entry[n];
    ++n;
  }
  g_first_name[n] = '\0';
  g_count = count;
  /* Runs at exit(), as a destructor would; a process that ends by a signal
   * or _exit (a forked DataLoader worker) says nothing. Registered once:
   * the stub's constructor arms once, but a second arm (stub_env_fuzz scans
   * many environments) must not print the line twice. */
  static int registered;
  if (!registered && atexit(chakrashim_profile_hint_say) == 0) registered = 1;
  if (!registered) g_count = 0;
}

/* The rank this process has by docs/design.md section 4.1's precedence; -1
 * without a launcher. */
static long launcher_rank(void) {
  static const char* const names[] = {"CHAKRA_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                      "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char* v = getenv(names[i]);
    if (v && *v) return strtol(v, NULL, 10);
  }
  return -1;
}

/* Does the parent process say it too? It does when it runs under the same
 * mistake: our library preloaded, CHAKRA_* variables, no CHAKRA_PROFILE
 * (torchrun's agent above its workers, a job above its DataLoader workers or
 * subprocesses). Then this process stays silent: one line per job. */
static int parent_says_it(void) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/environ", (long)getppid());
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  static char env[1 << 16];
  size_t used = 0;
  ssize_t got;
  while (used < sizeof env - 1 && (got = read(fd, env + used, sizeof env - 1 - used)) > 0) used += (size_t)got;
  close(fd);
  env[used] = '\0';
  int preloaded = 0, profile = 0, ours = 0;
  for (size_t i = 0; i < used; i += strlen(env + i) + 1) {
    const char* e = env + i;
    if (strncmp(e, "LD_PRELOAD=", 11) == 0 && strstr(e, "libchakrashim")) preloaded = 1;
    else if (strncmp(e, "CHAKRA_PROFILE=", 15) == 0) profile = 1;
    else if (strncmp(e, "CHAKRA_", 7) == 0) ours = 1;
  }
  return preloaded && ours && !profile;
}

/* write(2) to stderr that cannot kill the process: a process whose stderr
 * is a pipe its reader closed would get SIGPIPE, and one that keeps SIGPIPE's
 * default action (a shell, a compiler: anything but Python) would die of it
 * at exit, changing its exit status. SIGPIPE is blocked around the write and
 * the one it raised, if any, taken back; one already pending stays. */
static void write_without_sigpipe(const char* text, size_t n) {
  sigset_t pipe_only, old, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  if (sigprocmask(SIG_BLOCK, &pipe_only, &old) != 0) return;  /* say nothing rather than risk it */
  const int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
  const ssize_t wrote = write(STDERR_FILENO, text, n);
  if (wrote < 0 && errno == EPIPE && !was_pending) {
    const struct timespec now = {0, 0};
    (void)sigtimedwait(&pipe_only, NULL, &now);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Edit distance of two short names (at most 63 characters), for a
 * misspelled CHAKRA_PROFILE: "CHAKRA_PROFLE" -> 1. Larger names: 99. */
static int edit_distance(const char* a, size_t la, const char* b, size_t lb) {
  if (la > 63 || lb > 63) return 99;
  int row[64];
  for (size_t j = 0; j <= lb; ++j) row[j] = (int)j;
  for (size_t i = 1; i <= la; ++i) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; ++j) {
      const int up = row[j];
      const int sub = diag + (a[i - 1] != b[j - 1]);
      const int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
      row[j] = sub < best ? sub : best;
      diag = up;
    }
  }
  return row[lb];
}

/* A set variable whose name is CHAKRA_PROFILE misspelled (within two
 * edits), into `out`; 0 if none (issue #49: CHAKRA_PROFLE got no hint). */
static int misspelled_profile(char* out, size_t size) {
  extern char** environ;
  static const char want[] = "CHAKRA_PROFILE";
  for (char** e = environ; e && *e; ++e) {
    if (strncmp(*e, "CHAKRA_", 7) != 0) continue;
    const char* eq = strchr(*e, '=');
    const size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
    if (len == sizeof want - 1 && strncmp(*e, want, len) == 0) continue;
    if (edit_distance(*e, len, want, sizeof want - 1) <= 2 && len < size) {
      memcpy(out, *e, len);
      out[len] = '\0';
      return 1;
    }
  }
  return 0;
}

static void chakrashim_profile_hint_say(void) {
  if (g_count == 0) return;
  const int saved = errno; /* the job's errno stays as it was */
  const long rank = launcher_rank();
  char near[64];
  if ((rank <= 0) && !parent_says_it() && misspelled_profile(near, sizeof near)) {
    char line[512];
    const int n = snprintf(line, sizeof line,
                           "[chakrashim] warning: %s is set, but not CHAKRA_PROFILE (did you mean "
                           "CHAKRA_PROFILE?): capture was off, nothing was captured\n",
                           near);
    if (n > 0) write_without_sigpipe(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  } else if ((rank <= 0) && !parent_says_it()) {
    char line[512];
    const int n = g_count > 1
                      ? snprintf(line, sizeof line,
                                 "[chakrashim] warning: %s and %d more CHAKRA_* variables are set, but not "
                                 "CHAKRA_PROFILE: capture was off, nothing was captured (set CHAKRA_PROFILE=1; "
                                 "chakra-run sets it)\n",
                                 g_first_name, g_count - 1)
                      : snprintf(line, sizeof line,
                                 "[chakrashim] warning: %s is set, but not CHAKRA_PROFILE: capture was off, "
                                 "nothing was captured (set CHAKRA_PROFILE=1; chakra-run sets it)\n",
                                 g_first_name);
    if (n > 0) write_without_sigpipe(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  }
  errno = saved;
}

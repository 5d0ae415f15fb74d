/* libchakrashim.so: the preloaded library itself, in C, kept to what every
 * process that inherits LD_PRELOAD must pay for.
 *
 * Most of those processes are not the job: a shell, srun's helpers, a
 * launcher, /bin/true. For them this library is mapped, its constructor
 * scans the environment once, and nothing else happens. Only in a process
 * with CHAKRA_PROFILE set does the constructor copy the variables the core
 * reads; and only when a dlopen finds Python's C API in the process is the
 * core (libchakrashim_core.so, C++) loaded and handed that copy. The core
 * then decides whether the process is a target and waits for libtorch as
 * before (session.h). See stub_abi.h for why there are two libraries.
 *
 * Threads and signals: the constructor runs before the job has threads.
 * chakrashim_dlopen_prepare runs on any thread, inside the job's dlopen,
 * before the real one; it reads atomics, and the one thread that moves the
 * state from "waiting for Python" to "loading" loads the core. A fork while
 * that thread loads leaves the child in "loading": the child then stays
 * without capture, which never harms it. Nothing here runs in a signal
 * handler. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/launcher_vars.h"
#include "preload/profile_hint.h"
#include "preload/stub_abi.h"

extern char** environ;

enum stub_state {
  STUB_INERT = 0,     /* CHAKRA_PROFILE unset (or not yet read): pass through */
  STUB_WAITING,       /* CHAKRA_PROFILE set: load the core once Python is here */
  STUB_LOADING,       /* one thread is loading the core */
  STUB_STARTED,       /* the core takes every later dlopen */
  STUB_OFF            /* the core said inert, or could not be loaded */
};

/* The process-wide state. Global because the constructor and every dlopen,
 * on any thread, share it, and a preloaded C library has no other place. */
static atomic_int g_state = STUB_INERT;
static _Atomic(void*) g_real_dlopen;
static _Atomic(chakrashim_core_dlopen_fn) g_core_dlopen;

/* What the constructor saw, written once by it (no threads yet), completed
 * (own_dir, the view's real_dlopen) by the one thread that won the move to
 * "loading", just before the core's start, and read-only afterwards. One
 * block, in the order it is written, so that a process touches as few
 * fresh pages as it can (each is a page fault at start-up): the fixed arena
 * holds any usual set of our variables, a larger one goes to the heap. */
static struct {
  struct chakrashim_stub_view view;
  const char* vars[64];
  char arena[2048];
  char cwd[PATH_MAX];
  char own_dir[PATH_MAX + 2]; /* filled at the core's load, from cwd */
} g_load;

/* The length of the name of "NAME=value" (up to '='), or -1 without '='. */
static long name_length(const char* entry) {
  for (long i = 0; entry[i]; ++i)
    if (entry[i] == '=') return i;
  return -1;
}

/* Small loops rather than libc's: each libc function a process calls for
 * the first time costs a lazy symbol lookup (about 700 instructions). */
static size_t text_length(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

static void copy_bytes(char* to, const char* from, size_t n) {
  for (size_t i = 0; i < n; ++i) to[i] = from[i];
}

static int same_prefix(const char* a, const char* b, long n) {
  for (long i = 0; i < n; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* A superset of what config::EnvSnapshot::wanted keeps: every name that
 * starts with "CHAKRA" and the launcher variables. */
static int wanted(const char* entry, long n) {
  if (n >= 6 && same_prefix(entry, "CHAKRA", 6)) return 1;
  for (int i = 0; i < CHAKRASHIM_LAUNCHER_VAR_COUNT; ++i) {
    const char* v = chakrashim_launcher_vars[i];
    long k = 0;
    while (k < n && v[k] && v[k] == entry[k]) ++k;
    if (k == n && !v[k]) return 1;
  }
  return 0;
}

/* One pass: is CHAKRA_PROFILE there? Without it, other CHAKRA_* variables
 * mean a user who forgot it: profile_hint.c says so at exit. */
static int profile_variable_present(void) {
  const char* first_other = NULL;
  int others = 0;
  for (char** e = environ; e && *e; ++e) {
    if ((*e)[0] != 'C' || !same_prefix(*e, "CHAKRA_", 7)) continue;
    if (same_prefix(*e, "CHAKRA_PROFILE=", 15)) return 1;
    /* A malformed entry without '=' (getenv never sees it), or a bare
     * "CHAKRA_PROFILE", is no variable of ours (found by stub_env_fuzz). */
    const long n = name_length(*e);
    if (n < 0 || (n == 14 && same_prefix(*e, "CHAKRA_PROFILE", 14))) continue;
    if (!first_other) first_other = *e;
    ++others;
  }
  if (others) chakrashim_profile_hint_arm(first_other, others);
  return 0;
}

/* Copies the wanted entries into the arena, or into one heap block when
 * they do not fit. Returns 0 when memory ran out. */
static int copy_wanted_variables(void) {
  size_t count = 0, bytes = 0;
  for (char** e = environ; e && *e; ++e) {
    const long n = name_length(*e);
    if (n > 0 && wanted(*e, n)) {
      ++count;
      bytes += text_length(*e) + 1;
    }
  }
  char* text = g_load.arena;
  const char** vars = g_load.vars;
  if (bytes > sizeof g_load.arena || count > sizeof g_load.vars / sizeof g_load.vars[0]) {
    /* Kept for the life of the process, like the arena. */
    void* block = malloc(count * sizeof(char*) + bytes);
    if (!block) return 0;
    vars = (const char**)block;
    text = (char*)block + count * sizeof(char*);
  }
  size_t i = 0, used = 0;
  for (char** e = environ; e && *e && i < count; ++e) {
    const long n = name_length(*e);
    if (n <= 0 || !wanted(*e, n)) continue;
    const size_t len = text_length(*e) + 1;
    copy_bytes(text + used, *e, len);
    vars[i++] = text + used;
    used += len;
  }
  g_load.view.vars = vars;
  g_load.view.var_count = i;
  return 1;
}

/* The folder of this library, absolute: LD_PRELOAD may name it relative to
 * the folder the job started in (read at load), which the job may have left
 * since. Called when the core is loaded, not at load: dladdr is not free. */
static void find_own_dir(void) {
  Dl_info info;
  if (!dladdr((void*)&find_own_dir, &info) || !info.dli_fname) return;
  const char* path = info.dli_fname;
  const char* slash = strrchr(path, '/');
  size_t used = 0;
  if (path[0] != '/' && g_load.cwd[0]) {
    used = strlen(g_load.cwd);
    if (used + 1 >= sizeof g_load.own_dir) return;
    memcpy(g_load.own_dir, g_load.cwd, used);
    g_load.own_dir[used++] = '/';
  }
  const size_t dir_len = slash ? (size_t)(slash - path) : 0;
  if (used + dir_len + 1 >= sizeof g_load.own_dir) {
    g_load.own_dir[0] = '\0';
    return;
  }
  if (slash) {
    memcpy(g_load.own_dir + used, path, dir_len);
    used += dir_len;
  } else if (used) {
    --used; /* "cwd/" without a file's folder: the cwd itself */
  } else {
    g_load.own_dir[used++] = '.';
  }
  g_load.own_dir[used] = '\0';
}

__attribute__((constructor)) static void chakrashim_stub_load(void) {
  /* Most processes that inherit the preload stop here. */
  if (!profile_variable_present()) return;
  g_load.view.abi_version = CHAKRASHIM_STUB_ABI_VERSION;
  g_load.view.size = sizeof g_load.view;
  if (!getcwd(g_load.cwd, sizeof g_load.cwd)) {
    g_load.cwd[0] = '\0';
    /* errno is 0 when a program starts; a failed getcwd must not change
     * that (touched only here: its first use costs a symbol lookup). */
    errno = 0;
  }
  g_load.view.cwd = g_load.cwd;
  g_load.view.own_dir = g_load.own_dir;  /* filled by find_own_dir */
  /* Out of memory at load: stay inert. */
  if (copy_wanted_variables()) atomic_store_explicit(&g_state, STUB_WAITING, memory_order_release);
}

static void say(const char* a, const char* b, const char* c, const char* d) {
  /* One line, one write(2); the core's logger is not loaded. */
  char line[1024];
  size_t n = 0;
  const char* parts[] = {"[chakrashim] error: ", a, b, c, d, "\n"};
  for (size_t p = 0; p < sizeof parts / sizeof parts[0]; ++p)
    for (const char* s = parts[p]; s && *s && n < sizeof line - 1; ++s) line[n++] = *s;
  if (n == sizeof line - 1) line[n++] = '\n';
  const int saved = errno; /* logging must not disturb the job's errno */
  ssize_t ignored = write(STDERR_FILENO, line, n);
  (void)ignored;
  errno = saved;
}

static void load_core(void* (*real)(const char*, int)) {
  /* Only a Python process can import torch, and the core's work starts
   * with a pending call into Python: without Python's C API, nothing to do
   * yet (an embedded Python may come with a later dlopen). */
  if (!dlsym(RTLD_DEFAULT, "Py_AddPendingCall")) return;
  int expected = STUB_WAITING;
  if (!atomic_compare_exchange_strong(&g_state, &expected, STUB_LOADING)) return;
  find_own_dir();
  char path[PATH_MAX + sizeof CHAKRASHIM_CORE_LIBRARY + 2];
  size_t n = strlen(g_load.own_dir);
  if (n == 0 || n + 1 + sizeof CHAKRASHIM_CORE_LIBRARY > sizeof path) {
    say("cannot find the folder of libchakrashim.so", "", "", "; capture is off");
    atomic_store(&g_state, STUB_OFF);
    return;
  }
  memcpy(path, g_load.own_dir, n);
  path[n++] = '/';
  memcpy(path + n, CHAKRASHIM_CORE_LIBRARY, sizeof CHAKRASHIM_CORE_LIBRARY);
  g_load.view.real_dlopen = real;  /* before the core reads the view */
  void* handle = real(path, RTLD_NOW | RTLD_LOCAL);
  chakrashim_core_start_fn start =
      handle ? (chakrashim_core_start_fn)dlsym(handle, CHAKRASHIM_CORE_START_SYMBOL) : NULL;
  if (!start) {
    const char* why = dlerror();
    /* dlerror names the file; a missing entry gets the path here. */
    say("cannot load the core: ", why ? why : path, why ? "" : ": no " CHAKRASHIM_CORE_START_SYMBOL,
        "; capture is off");
    atomic_store(&g_state, STUB_OFF);
    return;
  }
  chakrashim_core_dlopen_fn on_dlopen = start(&g_load.view);
  if (!on_dlopen) {
    atomic_store(&g_state, STUB_OFF);
    return;
  }
  atomic_store_explicit(&g_core_dlopen, on_dlopen, memory_order_release);
  atomic_store_explicit(&g_state, STUB_STARTED, memory_order_release);
  on_dlopen();
}

/* The interposed dlopen, in two halves. glibc's dlopen takes its caller's
 * return address to choose whose RUNPATH and $ORIGIN to search, so ours must
 * leave that address alone: it must jump to the real dlopen and do nothing
 * after it (docs/design.md section 4.2; a wrapper that called and returned
 * broke a library with RUNPATH $ORIGIN/sub). A compiler cannot promise that
 * tail call, and sanitizer builds defeat it, so the entry point `dlopen` is
 * written in assembly (dlopen_entry_<arch>.S): it saves the arguments,
 * calls this function, restores them and jumps to the address returned,
 * the real dlopen. tests/preload/runpath_fixture guards this in every
 * build. This half can run before our constructor (another preloaded
 * library's), and then only passes through. */
__attribute__((visibility("hidden"))) void* chakrashim_dlopen_prepare(void) {
  void* real = atomic_load_explicit(&g_real_dlopen, memory_order_acquire);
  if (!real) {
    real = dlsym(RTLD_NEXT, "dlopen");
    atomic_store_explicit(&g_real_dlopen, real, memory_order_release);
  }
  switch (atomic_load_explicit(&g_state, memory_order_acquire)) {
    case STUB_STARTED: {
      chakrashim_core_dlopen_fn f = atomic_load_explicit(&g_core_dlopen, memory_order_acquire);
      if (f) f();
      break;
    }
    case STUB_WAITING:
      if (real) load_core((void* (*)(const char*, int))real);
      break;
    default:
      break;
  }
  return real;
}

#if !defined(__x86_64__) && !defined(__aarch64__)
/* No assembly entry for this architecture: rely on the compiler's tail
 * call, which this file's optimization flags request, and on the RUNPATH
 * test (tests/preload/test_runpath.py). */
__attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  return ((void* (*)(const char*, int))chakrashim_dlopen_prepare())(file, mode);
}
#endif

__attribute__((visibility("default"))) const char* chakrashim_version(void) {
  return CHAKRASHIM_VERSION;
}

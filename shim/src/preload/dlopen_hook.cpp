// The interposed dlopen, in two halves.
//
// glibc's dlopen takes its caller's return address to choose whose RUNPATH
// and $ORIGIN to search. So our dlopen must leave that address alone: it
// must tail-call (jump to) the real dlopen and do nothing after it
// (docs/design.md section 4.2; a wrapper that called and returned broke a
// library with RUNPATH $ORIGIN/sub). GCC 12 cannot promise a tail call, and
// sanitizer builds defeat them, so the entry point `dlopen` is written in
// assembly (dlopen_entry_<arch>.S): it saves the arguments, calls
// chakrashim_dlopen_prepare below, restores them and jumps to the address
// it returned. tests/preload/runpath_fixture guards this in every build.
#include <dlfcn.h>

#include <atomic>

#include "preload/session.h"

namespace {
// The real dlopen, resolved once. A process-wide atomic because dlopen can
// be called from any thread, and even before our constructor ran (another
// preloaded library's constructor).
std::atomic<void*> g_real_dlopen{nullptr};
}  // namespace

extern "C" __attribute__((visibility("hidden"))) void* chakrashim_dlopen_prepare() {
  void* real = g_real_dlopen.load(std::memory_order_acquire);
  if (!real) {
    real = ::dlsym(RTLD_NEXT, "dlopen");
    g_real_dlopen.store(real, std::memory_order_release);
  }
  chakrashim::preload::Session::instance().on_dlopen();
  return real;
}

#if !defined(__x86_64__) && !defined(__aarch64__)
// No assembly entry for this architecture: rely on the compiler's tail call,
// which this file's optimization flags request, and on the RUNPATH test.
extern "C" __attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
  using Fn = void* (*)(const char*, int);
  return reinterpret_cast<Fn>(chakrashim_dlopen_prepare())(file, mode);
}
#endif
